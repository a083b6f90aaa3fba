// PostgresStore's join tokens and node credentials (AuthStore): what lets a worker in.
#include "store/pg_store_impl.h"

namespace tf::store {
namespace {

constexpr const char* kPgJoinTokenColumns =
    "SELECT id, name, hash, created_at, expires_at, max_uses, uses, revoked_at FROM join_tokens ";

JoinToken ReadPgJoinToken(const PgResult& r, int row) {
  JoinToken t;
  t.id = r.Text(row, 0);
  t.name = r.Text(row, 1);
  t.hash = r.Text(row, 2);
  t.created_at = r.Int(row, 3);
  t.expires_at = r.Int(row, 4);
  t.max_uses = r.Int(row, 5);
  t.uses = r.Int(row, 6);
  if (!r.IsNull(row, 7)) t.revoked_at = r.Int(row, 7);
  return t;
}

}  // namespace

Status PostgresStore::CreateJoinToken(const JoinToken& t) {
  return pool_->Run(PgTxMode::kAutocommit, [&](PgConnection& conn) -> Status {
    return conn.Run(
        "INSERT INTO join_tokens (id, name, hash, created_at, expires_at, max_uses, uses) "
        "VALUES ($1, $2, $3, $4, $5, $6, 0)",
        PgParams()
            .Add(t.id)
            .Add(t.name)
            .Add(t.hash)
            .Add(t.created_at)
            .Add(t.expires_at)
            .Add(t.max_uses));
  });
}

Result<JoinToken> PostgresStore::FindJoinTokenByHash(const std::string& hash) {
  JoinToken out;
  TF_RETURN_IF_ERROR(pool_->Run(PgTxMode::kRead, [&](PgConnection& conn) -> Status {
    TF_ASSIGN_OR_RETURN(PgResult r, conn.Exec(std::string(kPgJoinTokenColumns) + "WHERE hash = $1",
                                              PgParams().Add(hash)));
    if (r.rows() == 0) return NotFound("no such join token");
    out = ReadPgJoinToken(r, 0);
    return OkStatus();
  }));
  return out;
}

Result<std::vector<JoinToken>> PostgresStore::ListJoinTokens() {
  std::vector<JoinToken> out;
  TF_RETURN_IF_ERROR(pool_->Run(PgTxMode::kRead, [&](PgConnection& conn) -> Status {
    TF_ASSIGN_OR_RETURN(PgResult r,
                        conn.Exec(std::string(kPgJoinTokenColumns) + "ORDER BY created_at, id"));
    for (int i = 0; i < r.rows(); ++i) out.push_back(ReadPgJoinToken(r, i));
    return OkStatus();
  }));
  return out;
}

Status PostgresStore::RevokeJoinToken(const std::string& id, TimeMs now) {
  return pool_->Run(PgTxMode::kAutocommit, [&](PgConnection& conn) -> Status {
    TF_ASSIGN_OR_RETURN(
        PgResult r,
        conn.Exec("UPDATE join_tokens SET revoked_at = COALESCE(revoked_at, $1) WHERE id = $2",
                  PgParams().Add(now).Add(id)));
    if (r.affected() == 0) return NotFound("join token " + id + " does not exist");
    return OkStatus();
  });
}

Result<int64_t> PostgresStore::DeleteJoinTokensExpiredBefore(TimeMs before) {
  int64_t deleted = 0;
  TF_RETURN_IF_ERROR(pool_->Run(PgTxMode::kAutocommit, [&](PgConnection& conn) -> Status {
    TF_ASSIGN_OR_RETURN(PgResult r, conn.Exec("DELETE FROM join_tokens WHERE expires_at < $1",
                                              PgParams().Add(before)));
    deleted = r.affected();
    return OkStatus();
  }));
  return deleted;
}

Result<std::string> PostgresStore::FindNodeByCredential(const std::string& hash) {
  std::string out;
  TF_RETURN_IF_ERROR(pool_->Run(PgTxMode::kRead, [&](PgConnection& conn) -> Status {
    TF_ASSIGN_OR_RETURN(PgResult r, conn.Exec("SELECT c.node_id FROM node_credentials c "
                                              "JOIN nodes n ON n.id = c.node_id WHERE c.hash = $1",
                                              PgParams().Add(hash)));
    if (r.rows() == 0) return NotFound("no registered node has this credential");
    out = r.Text(0, 0);
    return OkStatus();
  }));
  return out;
}

}  // namespace tf::store
