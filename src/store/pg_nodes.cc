// PostgresStore's NodeStore: the machines of the fleet.
#include "store/pg_store_impl.h"

namespace tf::store {
namespace {

constexpr const char* kNodeColumns =
    "SELECT id, name, state, epoch, info, registered_at, heartbeat_at, drain FROM nodes ";

NodeRecord ReadNode(const PgResult& r, int row) {
  NodeRecord n;
  n.id = r.Text(row, 0);
  n.name = r.Text(row, 1);
  n.state = r.Text(row, 2);
  n.epoch = r.Int(row, 3);
  n.info_json = r.Text(row, 4);
  n.registered_at = r.Int(row, 5);
  n.heartbeat_at = r.Int(row, 6);
  n.drain_json = r.Text(row, 7);
  return n;
}

}  // namespace

Result<NodeRecord> PostgresStore::RegisterNode(NodeRecord node) {
  node.state = "ready";
  node.drain_json.clear();
  TF_RETURN_IF_ERROR(pool_->Run(PgTxMode::kAutocommit, [&](PgConnection& conn) -> Status {
    // One statement: two servers registering the same node never hand out the same epoch.
    TF_ASSIGN_OR_RETURN(
        PgResult r,
        conn.Exec("INSERT INTO nodes (id, name, state, epoch, info, registered_at, heartbeat_at, "
                  "drain) VALUES ($1, $2, $3, 1, $4, $5, $6, '') "
                  "ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, state = EXCLUDED.state, "
                  "epoch = nodes.epoch + 1, info = EXCLUDED.info, "
                  "registered_at = EXCLUDED.registered_at, heartbeat_at = EXCLUDED.heartbeat_at, "
                  "drain = '' RETURNING epoch",
                  PgParams()
                      .Add(node.id)
                      .Add(node.name)
                      .Add(node.state)
                      .Add(node.info_json)
                      .Add(node.registered_at)
                      .Add(node.heartbeat_at)));
    node.epoch = r.Int(0, 0);
    return OkStatus();
  }));
  return node;
}

Result<NodeRecord> PostgresStore::GetNode(const std::string& id) {
  NodeRecord out;
  TF_RETURN_IF_ERROR(pool_->Run(PgTxMode::kRead, [&](PgConnection& conn) -> Status {
    TF_ASSIGN_OR_RETURN(PgResult r, conn.Exec(std::string(kNodeColumns) + "WHERE id = $1",
                                              PgParams().Add(id)));
    if (r.rows() == 0) return NotFound("node '" + id + "' is not registered");
    out = ReadNode(r, 0);
    return OkStatus();
  }));
  return out;
}

Result<std::vector<NodeRecord>> PostgresStore::ListNodes() {
  std::vector<NodeRecord> out;
  TF_RETURN_IF_ERROR(pool_->Run(PgTxMode::kRead, [&](PgConnection& conn) -> Status {
    out.clear();
    TF_ASSIGN_OR_RETURN(PgResult r, conn.Exec(std::string(kNodeColumns) + "ORDER BY id"));
    for (int i = 0; i < r.rows(); ++i) out.push_back(ReadNode(r, i));
    return OkStatus();
  }));
  return out;
}

Status PostgresStore::TouchNode(const std::string& id, int64_t epoch, TimeMs now) {
  return pool_->Run(PgTxMode::kAutocommit, [&](PgConnection& conn) -> Status {
    TF_ASSIGN_OR_RETURN(
        PgResult r, conn.Exec("WITH n AS (SELECT epoch FROM nodes WHERE id = $1), "
                              "u AS (UPDATE nodes SET heartbeat_at = $3 WHERE id = $1 AND "
                              "epoch = $2 RETURNING 1) "
                              "SELECT (SELECT epoch FROM n), (SELECT count(*) FROM u)",
                              PgParams().Add(id).Add(epoch).Add(now)));
    if (r.IsNull(0, 0)) return NotFound("node '" + id + "' is not registered");
    if (r.Int(0, 1) == 0) {
      return Aborted("node '" + id + "' was registered again (epoch " +
                     std::string(r.Text(0, 0)) + ", this worker has " + std::to_string(epoch) +
                     ")");
    }
    return OkStatus();
  });
}

Status PostgresStore::SetNodeState(const std::string& id, const std::string& state,
                                   const std::string& drain_json) {
  return pool_->Run(PgTxMode::kAutocommit, [&](PgConnection& conn) -> Status {
    TF_ASSIGN_OR_RETURN(PgResult r, conn.Exec("UPDATE nodes SET state = $2, drain = $3 "
                                              "WHERE id = $1",
                                              PgParams().Add(id).Add(state).Add(drain_json)));
    if (r.affected() == 0) return NotFound("node '" + id + "' is not registered");
    return OkStatus();
  });
}

}  // namespace tf::store
