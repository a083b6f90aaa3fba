// SqliteStore's join tokens and node credentials (AuthStore): what lets a worker in.
#include "store/sqlite_store_impl.h"

namespace tf::store {
namespace {

constexpr const char* kSqliteJoinTokenColumns =
    "SELECT id, name, hash, created_at, expires_at, max_uses, uses, revoked_at FROM join_tokens ";

JoinToken ReadSqliteJoinToken(const Stmt& q) {
  JoinToken t;
  t.id = q.Text(0);
  t.name = q.Text(1);
  t.hash = q.Text(2);
  t.created_at = q.Int(3);
  t.expires_at = q.Int(4);
  t.max_uses = q.Int(5);
  t.uses = q.Int(6);
  if (!q.IsNull(7)) t.revoked_at = q.Int(7);
  return t;
}

}  // namespace

Status SqliteStore::CreateJoinToken(const JoinToken& t) {
  return writer_->Write([&](SqliteDb& db) -> Status {
    TF_ASSIGN_OR_RETURN(Stmt q, db.Prepare("INSERT INTO join_tokens (id, name, hash, created_at, "
                                           "expires_at, max_uses, uses) "
                                           "VALUES (?, ?, ?, ?, ?, ?, 0)"));
    return q.Bind(1, t.id)
        .Bind(2, t.name)
        .Bind(3, t.hash)
        .Bind(4, t.created_at)
        .Bind(5, t.expires_at)
        .Bind(6, t.max_uses)
        .Run();
  });
}

Result<JoinToken> SqliteStore::FindJoinTokenByHash(const std::string& hash) {
  JoinToken out;
  TF_RETURN_IF_ERROR(readers_.With([&](SqliteDb& db) -> Status {
    TF_ASSIGN_OR_RETURN(Stmt q,
                        db.Prepare(std::string(kSqliteJoinTokenColumns) + "WHERE hash = ?"));
    TF_ASSIGN_OR_RETURN(bool row, q.Bind(1, hash).Step());
    if (!row) return NotFound("no such join token");
    out = ReadSqliteJoinToken(q);
    return OkStatus();
  }));
  return out;
}

Result<std::vector<JoinToken>> SqliteStore::ListJoinTokens() {
  std::vector<JoinToken> out;
  TF_RETURN_IF_ERROR(readers_.With([&](SqliteDb& db) -> Status {
    TF_ASSIGN_OR_RETURN(
        Stmt q, db.Prepare(std::string(kSqliteJoinTokenColumns) + "ORDER BY created_at, id"));
    for (;;) {
      TF_ASSIGN_OR_RETURN(bool row, q.Step());
      if (!row) return OkStatus();
      out.push_back(ReadSqliteJoinToken(q));
    }
  }));
  return out;
}

Status SqliteStore::RevokeJoinToken(const std::string& id, TimeMs now) {
  return writer_->Write([&](SqliteDb& db) -> Status {
    TF_ASSIGN_OR_RETURN(Stmt q, db.Prepare("UPDATE join_tokens SET revoked_at = "
                                           "COALESCE(revoked_at, ?) WHERE id = ?"));
    TF_RETURN_IF_ERROR(q.Bind(1, now).Bind(2, id).Run());
    if (db.Changes() == 0) return NotFound("join token " + id + " does not exist");
    return OkStatus();
  });
}

Result<int64_t> SqliteStore::DeleteJoinTokensExpiredBefore(TimeMs before) {
  int64_t deleted = 0;
  TF_RETURN_IF_ERROR(writer_->Write([&](SqliteDb& db) -> Status {
    TF_ASSIGN_OR_RETURN(Stmt q, db.Prepare("DELETE FROM join_tokens WHERE expires_at < ?"));
    TF_RETURN_IF_ERROR(q.Bind(1, before).Run());
    deleted = db.Changes();
    return OkStatus();
  }));
  return deleted;
}

Result<std::string> SqliteStore::FindNodeByCredential(const std::string& hash) {
  std::string out;
  TF_RETURN_IF_ERROR(readers_.With([&](SqliteDb& db) -> Status {
    TF_ASSIGN_OR_RETURN(Stmt q, db.Prepare("SELECT c.node_id FROM node_credentials c "
                                           "JOIN nodes n ON n.id = c.node_id WHERE c.hash = ?"));
    TF_ASSIGN_OR_RETURN(bool row, q.Bind(1, hash).Step());
    if (!row) return NotFound("no registered node has this credential");
    out = q.Text(0);
    return OkStatus();
  }));
  return out;
}

}  // namespace tf::store
