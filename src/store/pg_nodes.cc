// PostgresStore's NodeStore: the machines of the fleet.
#include "store/join_token_rule.h"
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

// kNotFound, or kFailedPrecondition naming the state, for a conditional change of node `id`
// that matched no row.
Status NodeNotIn(PgConnection& conn, const std::string& id, const std::string& from) {
  TF_ASSIGN_OR_RETURN(PgResult r,
                      conn.Exec("SELECT state FROM nodes WHERE id = $1", PgParams().Add(id)));
  if (r.rows() == 0) return NotFound("node '" + id + "' is not registered");
  return FailedPrecondition("node '" + id + "' is " + std::string(r.Text(0, 0)) + ", not " + from);
}

// Spends one use of join token `id` on registering the new node `node_id`, or says why not.
// The token's row is locked first: two registrations never spend its last use twice.
Status SpendPgJoinToken(PgConnection& conn, const std::string& id, const std::string& node_id,
                        TimeMs now) {
  TF_ASSIGN_OR_RETURN(PgResult q, conn.Exec("SELECT revoked_at IS NOT NULL, expires_at, "
                                            "max_uses, uses FROM join_tokens WHERE id = $1 "
                                            "FOR UPDATE",
                                            PgParams().Add(id)));
  if (q.rows() == 0) return NotFound("join token " + id + " does not exist");
  TF_ASSIGN_OR_RETURN(PgResult known,
                      conn.Exec("SELECT 1 FROM nodes WHERE id = $1", PgParams().Add(node_id)));
  if (known.rows() > 0) {
    return AlreadyExists("node '" + node_id +
                         "' is registered: a join token only registers new nodes");
  }
  TF_RETURN_IF_ERROR(JoinTokenUsable(id, q.Bool(0, 0), q.Int(0, 1), q.Int(0, 2), q.Int(0, 3), now));
  return conn.Run("UPDATE join_tokens SET uses = uses + 1 WHERE id = $1", PgParams().Add(id));
}

}  // namespace

Result<NodeRecord> PostgresStore::RegisterNode(NodeRecord node) { return AdmitNode(node, {}); }

Result<NodeRecord> PostgresStore::AdmitNode(NodeRecord node, const NodeAdmission& admission) {
  node.state = "ready";
  node.drain_json.clear();
  // With nothing to spend or issue, the registration is one statement on its own.
  bool plain = admission.join_token_id.empty() && admission.credential_hash.empty();
  PgTxMode mode = plain ? PgTxMode::kAutocommit : PgTxMode::kTransaction;
  TF_RETURN_IF_ERROR(pool_->Run(mode, [&](PgConnection& conn) -> Status {
    if (!admission.join_token_id.empty()) {
      TF_RETURN_IF_ERROR(
          SpendPgJoinToken(conn, admission.join_token_id, node.id, node.registered_at));
    }
    if (!admission.credential_hash.empty()) {
      TF_RETURN_IF_ERROR(
          conn.Run("INSERT INTO node_credentials (node_id, hash, issued_at) VALUES ($1, $2, $3) "
                   "ON CONFLICT (node_id) DO UPDATE SET hash = EXCLUDED.hash, issued_at = "
                   "EXCLUDED.issued_at",
                   PgParams().Add(node.id).Add(admission.credential_hash).Add(node.registered_at)));
    }
    // One statement: two servers registering the same node never hand out the same epoch, and
    // the registration and the period it opens are written together. A node that was forgotten
    // starts after its last period's epoch.
    TF_ASSIGN_OR_RETURN(
        PgResult r,
        conn.Exec("WITH n AS (INSERT INTO nodes (id, name, state, epoch, info, registered_at, "
                  "heartbeat_at, drain) VALUES ($1, $2, $3, (SELECT COALESCE(MAX(epoch), 0) + 1 "
                  "FROM node_periods WHERE node_id = $1), $4, $5, $6, '') "
                  "ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, state = EXCLUDED.state, "
                  "epoch = nodes.epoch + 1, info = EXCLUDED.info, "
                  "registered_at = EXCLUDED.registered_at, heartbeat_at = EXCLUDED.heartbeat_at, "
                  "drain = '' RETURNING id, epoch, info, registered_at, heartbeat_at) "
                  "INSERT INTO node_periods (node_id, epoch, started_at, last_seen_at, info) "
                  "SELECT id, epoch, registered_at, GREATEST(registered_at, heartbeat_at), info "
                  "FROM n RETURNING epoch",
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
    TF_ASSIGN_OR_RETURN(PgResult r,
                        conn.Exec(std::string(kNodeColumns) + "WHERE id = $1", PgParams().Add(id)));
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
    // One statement: the heartbeat moves the current registration's period with it (only
    // forward, should a heartbeat arrive late), and a stale one moves neither.
    TF_ASSIGN_OR_RETURN(PgResult r,
                        conn.Exec("WITH n AS (SELECT epoch FROM nodes WHERE id = $1), "
                                  "u AS (UPDATE nodes SET heartbeat_at = $3 WHERE id = $1 AND "
                                  "epoch = $2 RETURNING epoch), "
                                  "p AS (UPDATE node_periods SET last_seen_at = "
                                  "GREATEST(last_seen_at, $3) WHERE node_id = $1 AND "
                                  "epoch IN (SELECT epoch FROM u)) "
                                  "SELECT (SELECT epoch FROM n), (SELECT count(*) FROM u)",
                                  PgParams().Add(id).Add(epoch).Add(now)));
    if (r.IsNull(0, 0)) return NotFound("node '" + id + "' is not registered");
    if (r.Int(0, 1) == 0) {
      return Aborted("node '" + id + "' was registered again (epoch " + std::string(r.Text(0, 0)) +
                     ", this worker has " + std::to_string(epoch) + ")");
    }
    return OkStatus();
  });
}

Status PostgresStore::BackdateNodePeriod(const std::string& id, int64_t epoch, TimeMs started_at) {
  return pool_->Run(PgTxMode::kAutocommit, [&](PgConnection& conn) -> Status {
    TF_ASSIGN_OR_RETURN(PgResult r,
                        conn.Exec("UPDATE node_periods SET started_at = LEAST(started_at, $3) "
                                  "WHERE node_id = $1 AND epoch = $2",
                                  PgParams().Add(id).Add(epoch).Add(started_at)));
    if (r.affected() == 0) {
      return NotFound("node '" + id + "' has no period of epoch " + std::to_string(epoch));
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

Status PostgresStore::ChangeNodeState(const std::string& id, const std::string& from,
                                      const std::string& state, const std::string& drain_json) {
  return pool_->Run(PgTxMode::kAutocommit, [&](PgConnection& conn) -> Status {
    TF_ASSIGN_OR_RETURN(PgResult r,
                        conn.Exec("UPDATE nodes SET state = $2, drain = $3 "
                                  "WHERE id = $1 AND state = $4",
                                  PgParams().Add(id).Add(state).Add(drain_json).Add(from)));
    if (r.affected() == 0) return NodeNotIn(conn, id, from);
    return OkStatus();
  });
}

Status PostgresStore::DeleteLostNode(const std::string& id) {
  return pool_->Run(PgTxMode::kAutocommit, [&](PgConnection& conn) -> Status {
    TF_ASSIGN_OR_RETURN(PgResult r, conn.Exec("DELETE FROM nodes WHERE id = $1 AND state = 'lost'",
                                              PgParams().Add(id)));
    if (r.affected() == 0) return NodeNotIn(conn, id, "lost");
    return OkStatus();
  });
}

Result<std::vector<NodePeriod>> PostgresStore::ListNodePeriods(TimeMs since, TimeMs until) {
  std::vector<NodePeriod> out;
  TF_RETURN_IF_ERROR(pool_->Run(PgTxMode::kRead, [&](PgConnection& conn) -> Status {
    out.clear();
    TF_ASSIGN_OR_RETURN(PgResult r,
                        conn.Exec("SELECT node_id, epoch, started_at, last_seen_at, info "
                                  "FROM node_periods WHERE last_seen_at >= $1 AND started_at < $2 "
                                  "ORDER BY node_id, epoch",
                                  PgParams().Add(since).Add(until)));
    for (int i = 0; i < r.rows(); ++i) {
      out.push_back(NodePeriod{std::string(r.Text(i, 0)), r.Int(i, 1), r.Int(i, 2), r.Int(i, 3),
                               std::string(r.Text(i, 4))});
    }
    return OkStatus();
  }));
  return out;
}

}  // namespace tf::store
