// SqliteStore's NodeStore: the machines of the fleet.
#include "store/join_token_rule.h"
#include "store/sqlite_store_impl.h"

namespace tf::store {
namespace {

constexpr const char* kNodeColumns =
    "SELECT id, name, state, epoch, info, registered_at, heartbeat_at, drain FROM nodes ";

NodeRecord ReadNode(const Stmt& q) {
  NodeRecord n;
  n.id = q.Text(0);
  n.name = q.Text(1);
  n.state = q.Text(2);
  n.epoch = q.Int(3);
  n.info_json = q.Text(4);
  n.registered_at = q.Int(5);
  n.heartbeat_at = q.Int(6);
  n.drain_json = q.Text(7);
  return n;
}

// kNotFound, or kFailedPrecondition naming the state, for a conditional change of node `id`
// that matched no row.
Status NodeNotIn(SqliteDb& db, const std::string& id, const std::string& from) {
  TF_ASSIGN_OR_RETURN(Stmt q, db.Prepare("SELECT state FROM nodes WHERE id = ?"));
  TF_ASSIGN_OR_RETURN(bool row, q.Bind(1, id).Step());
  if (!row) return NotFound("node '" + id + "' is not registered");
  return FailedPrecondition("node '" + id + "' is " + q.Text(0) + ", not " + from);
}

// Spends one use of join token `id` on registering the new node `node_id`, or says why not.
Status SpendJoinToken(SqliteDb& db, const std::string& id, const std::string& node_id, TimeMs now) {
  TF_ASSIGN_OR_RETURN(Stmt known, db.Prepare("SELECT 1 FROM nodes WHERE id = ?"));
  TF_ASSIGN_OR_RETURN(bool registered, known.Bind(1, node_id).Step());
  if (registered) {
    return AlreadyExists("node '" + node_id +
                         "' is registered: a join token only registers new nodes");
  }
  TF_ASSIGN_OR_RETURN(Stmt q, db.Prepare("SELECT revoked_at, expires_at, max_uses, uses "
                                         "FROM join_tokens WHERE id = ?"));
  TF_ASSIGN_OR_RETURN(bool row, q.Bind(1, id).Step());
  if (!row) return NotFound("join token " + id + " does not exist");
  TF_RETURN_IF_ERROR(JoinTokenUsable(id, !q.IsNull(0), q.Int(1), q.Int(2), q.Int(3), now));
  TF_ASSIGN_OR_RETURN(Stmt spend,
                      db.Prepare("UPDATE join_tokens SET uses = uses + 1 WHERE id = ?"));
  return spend.Bind(1, id).Run();
}

}  // namespace

Result<NodeRecord> SqliteStore::RegisterNode(NodeRecord node) { return AdmitNode(node, {}); }

Result<NodeRecord> SqliteStore::AdmitNode(NodeRecord node, const NodeAdmission& admission) {
  TF_RETURN_IF_ERROR(writer_->Write([&](SqliteDb& db) -> Status {
    if (!admission.join_token_id.empty()) {
      TF_RETURN_IF_ERROR(SpendJoinToken(db, admission.join_token_id, node.id, node.registered_at));
    }
    if (!admission.credential_hash.empty()) {
      TF_ASSIGN_OR_RETURN(Stmt cred, db.Prepare("INSERT OR REPLACE INTO node_credentials "
                                                "(node_id, hash, issued_at) VALUES (?, ?, ?)"));
      TF_RETURN_IF_ERROR(cred.Bind(1, node.id)
                             .Bind(2, admission.credential_hash)
                             .Bind(3, node.registered_at)
                             .Run());
    }
    // After the node's last epoch, whether it is registered or was forgotten (its periods stay).
    TF_ASSIGN_OR_RETURN(Stmt prev, db.Prepare("SELECT COALESCE(MAX(e), 0) FROM ("
                                              "SELECT epoch AS e FROM nodes WHERE id = ? UNION ALL "
                                              "SELECT epoch FROM node_periods WHERE node_id = ?)"));
    TF_ASSIGN_OR_RETURN(bool row, prev.Bind(1, node.id).Bind(2, node.id).Step());
    node.epoch = (row ? prev.Int(0) : 0) + 1;
    node.state = "ready";
    node.drain_json.clear();
    TF_ASSIGN_OR_RETURN(Stmt put,
                        db.Prepare("INSERT OR REPLACE INTO nodes VALUES (?, ?, ?, ?, ?, ?, ?, ?)"));
    TF_RETURN_IF_ERROR(put.Bind(1, node.id)
                           .Bind(2, node.name)
                           .Bind(3, node.state)
                           .Bind(4, node.epoch)
                           .Bind(5, node.info_json)
                           .Bind(6, node.registered_at)
                           .Bind(7, node.heartbeat_at)
                           .Bind(8, node.drain_json)
                           .Run());
    // The registration opens its period, seen up to now.
    TF_ASSIGN_OR_RETURN(Stmt period, db.Prepare("INSERT INTO node_periods (node_id, epoch, "
                                                "started_at, last_seen_at, info) "
                                                "VALUES (?, ?, ?, MAX(?, ?), ?)"));
    return period.Bind(1, node.id)
        .Bind(2, node.epoch)
        .Bind(3, node.registered_at)
        .Bind(4, node.registered_at)
        .Bind(5, node.heartbeat_at)
        .Bind(6, node.info_json)
        .Run();
  }));
  return node;
}

Result<NodeRecord> SqliteStore::GetNode(const std::string& id) {
  NodeRecord out;
  TF_RETURN_IF_ERROR(readers_.With([&](SqliteDb& db) -> Status {
    TF_ASSIGN_OR_RETURN(Stmt q, db.Prepare(std::string(kNodeColumns) + "WHERE id = ?"));
    TF_ASSIGN_OR_RETURN(bool row, q.Bind(1, id).Step());
    if (!row) return NotFound("node '" + id + "' is not registered");
    out = ReadNode(q);
    return OkStatus();
  }));
  return out;
}

Result<std::vector<NodeRecord>> SqliteStore::ListNodes() {
  std::vector<NodeRecord> out;
  TF_RETURN_IF_ERROR(readers_.With([&](SqliteDb& db) -> Status {
    TF_ASSIGN_OR_RETURN(Stmt q, db.Prepare(std::string(kNodeColumns) + "ORDER BY id"));
    for (;;) {
      TF_ASSIGN_OR_RETURN(bool row, q.Step());
      if (!row) return OkStatus();
      out.push_back(ReadNode(q));
    }
  }));
  return out;
}

Status SqliteStore::TouchNode(const std::string& id, int64_t epoch, TimeMs now) {
  return writer_->Write([&](SqliteDb& db) -> Status {
    TF_ASSIGN_OR_RETURN(Stmt q, db.Prepare("SELECT epoch FROM nodes WHERE id = ?"));
    TF_ASSIGN_OR_RETURN(bool row, q.Bind(1, id).Step());
    if (!row) return NotFound("node '" + id + "' is not registered");
    if (q.Int(0) != epoch) {
      return Aborted("node '" + id + "' was registered again (epoch " + std::to_string(q.Int(0)) +
                     ", this worker has " + std::to_string(epoch) + ")");
    }
    TF_ASSIGN_OR_RETURN(Stmt touch, db.Prepare("UPDATE nodes SET heartbeat_at = ? WHERE id = ?"));
    TF_RETURN_IF_ERROR(touch.Bind(1, now).Bind(2, id).Run());
    // The current period never moves back, should a heartbeat arrive late.
    TF_ASSIGN_OR_RETURN(Stmt seen,
                        db.Prepare("UPDATE node_periods SET last_seen_at = "
                                   "MAX(last_seen_at, ?) WHERE node_id = ? AND epoch = ?"));
    return seen.Bind(1, now).Bind(2, id).Bind(3, epoch).Run();
  });
}

Status SqliteStore::BackdateNodePeriod(const std::string& id, int64_t epoch, TimeMs started_at) {
  return writer_->Write([&](SqliteDb& db) -> Status {
    TF_ASSIGN_OR_RETURN(Stmt q, db.Prepare("UPDATE node_periods SET started_at = "
                                           "MIN(started_at, ?) WHERE node_id = ? AND epoch = ?"));
    TF_RETURN_IF_ERROR(q.Bind(1, started_at).Bind(2, id).Bind(3, epoch).Run());
    if (db.Changes() == 0) {
      return NotFound("node '" + id + "' has no period of epoch " + std::to_string(epoch));
    }
    return OkStatus();
  });
}

Status SqliteStore::SetNodeState(const std::string& id, const std::string& state,
                                 const std::string& drain_json) {
  return writer_->Write([&](SqliteDb& db) -> Status {
    TF_ASSIGN_OR_RETURN(Stmt q, db.Prepare("UPDATE nodes SET state = ?, drain = ? WHERE id = ?"));
    TF_RETURN_IF_ERROR(q.Bind(1, state).Bind(2, drain_json).Bind(3, id).Run());
    if (db.Changes() == 0) return NotFound("node '" + id + "' is not registered");
    return OkStatus();
  });
}

Status SqliteStore::ChangeNodeState(const std::string& id, const std::string& from,
                                    const std::string& state, const std::string& drain_json) {
  return writer_->Write([&](SqliteDb& db) -> Status {
    TF_ASSIGN_OR_RETURN(
        Stmt q, db.Prepare("UPDATE nodes SET state = ?, drain = ? WHERE id = ? AND state = ?"));
    TF_RETURN_IF_ERROR(q.Bind(1, state).Bind(2, drain_json).Bind(3, id).Bind(4, from).Run());
    if (db.Changes() == 0) return NodeNotIn(db, id, from);
    return OkStatus();
  });
}

Status SqliteStore::DeleteLostNode(const std::string& id) {
  return writer_->Write([&](SqliteDb& db) -> Status {
    TF_ASSIGN_OR_RETURN(Stmt q, db.Prepare("DELETE FROM nodes WHERE id = ? AND state = 'lost'"));
    TF_RETURN_IF_ERROR(q.Bind(1, id).Run());
    if (db.Changes() == 0) return NodeNotIn(db, id, "lost");
    return OkStatus();
  });
}

Result<std::vector<NodePeriod>> SqliteStore::ListNodePeriods(TimeMs since, TimeMs until) {
  std::vector<NodePeriod> out;
  TF_RETURN_IF_ERROR(readers_.With([&](SqliteDb& db) -> Status {
    TF_ASSIGN_OR_RETURN(Stmt q, db.Prepare("SELECT node_id, epoch, started_at, last_seen_at, info "
                                           "FROM node_periods WHERE last_seen_at >= ? AND "
                                           "started_at < ? ORDER BY node_id, epoch"));
    q.Bind(1, since).Bind(2, until);
    for (;;) {
      TF_ASSIGN_OR_RETURN(bool row, q.Step());
      if (!row) return OkStatus();
      out.push_back(NodePeriod{q.Text(0), q.Int(1), q.Int(2), q.Int(3), q.Text(4)});
    }
  }));
  return out;
}

}  // namespace tf::store
