// PostgresStore's AuthStore: projects and tokens.
#include "store/pg_store_impl.h"

namespace tf::store {
namespace {

constexpr const char* kProjectColumns = "SELECT id, name, created_at FROM projects ";
constexpr const char* kTokenColumns =
    "SELECT id, project_id, name, hash, admin, created_at, revoked_at FROM tokens ";

Project ReadProject(const PgResult& r, int row) {
  return Project{std::string(r.Text(row, 0)), std::string(r.Text(row, 1)), r.Int(row, 2)};
}

Token ReadToken(const PgResult& r, int row) {
  Token t;
  t.id = r.Text(row, 0);
  t.project_id = r.Text(row, 1);
  t.name = r.Text(row, 2);
  t.hash = r.Text(row, 3);
  t.admin = r.Bool(row, 4);
  t.created_at = r.Int(row, 5);
  if (!r.IsNull(row, 6)) t.revoked_at = r.Int(row, 6);
  return t;
}

}  // namespace

Status PostgresStore::CreateProject(const Project& p) {
  Status s = pool_->Run(PgTxMode::kAutocommit, [&](PgConnection& conn) {
    return conn.Run("INSERT INTO projects (id, name, created_at) VALUES ($1, $2, $3)",
                    PgParams().Add(p.id).Add(p.name).Add(p.created_at));
  });
  if (s.code() == StatusCode::kAlreadyExists) {
    return AlreadyExists("project '" + p.name + "' already exists");
  }
  return s;
}

Result<Project> PostgresStore::GetProject(const std::string& id) {
  Project out;
  TF_RETURN_IF_ERROR(pool_->Run(PgTxMode::kRead, [&](PgConnection& conn) -> Status {
    TF_ASSIGN_OR_RETURN(
        PgResult r, conn.Exec(std::string(kProjectColumns) + "WHERE id = $1", PgParams().Add(id)));
    if (r.rows() == 0) return NotFound("project " + id + " does not exist");
    out = ReadProject(r, 0);
    return OkStatus();
  }));
  return out;
}

Result<Project> PostgresStore::GetProjectByName(const std::string& name) {
  Project out;
  TF_RETURN_IF_ERROR(pool_->Run(PgTxMode::kRead, [&](PgConnection& conn) -> Status {
    TF_ASSIGN_OR_RETURN(PgResult r, conn.Exec(std::string(kProjectColumns) + "WHERE name = $1",
                                              PgParams().Add(name)));
    if (r.rows() == 0) return NotFound("project '" + name + "' does not exist");
    out = ReadProject(r, 0);
    return OkStatus();
  }));
  return out;
}

Result<std::vector<Project>> PostgresStore::ListProjects() {
  std::vector<Project> out;
  TF_RETURN_IF_ERROR(pool_->Run(PgTxMode::kRead, [&](PgConnection& conn) -> Status {
    out.clear();
    TF_ASSIGN_OR_RETURN(PgResult r, conn.Exec(std::string(kProjectColumns) + "ORDER BY name"));
    for (int i = 0; i < r.rows(); ++i) out.push_back(ReadProject(r, i));
    return OkStatus();
  }));
  return out;
}

Status PostgresStore::CreateToken(const Token& t) {
  return pool_->Run(PgTxMode::kAutocommit, [&](PgConnection& conn) {
    PgParams params;
    params.Add(t.id).Add(t.project_id).Add(t.name).Add(t.hash).AddBool(t.admin).Add(t.created_at);
    if (t.revoked_at) {
      params.Add(*t.revoked_at);
    } else {
      params.AddNull();
    }
    return conn.Run(
        "INSERT INTO tokens (id, project_id, name, hash, admin, created_at, revoked_at) "
        "VALUES ($1, $2, $3, $4, $5, $6, $7)",
        params);
  });
}

Result<Token> PostgresStore::FindTokenByHash(const std::string& hash) {
  Token out;
  TF_RETURN_IF_ERROR(pool_->Run(PgTxMode::kRead, [&](PgConnection& conn) -> Status {
    TF_ASSIGN_OR_RETURN(PgResult r, conn.Exec(std::string(kTokenColumns) + "WHERE hash = $1",
                                              PgParams().Add(hash)));
    if (r.rows() == 0) return NotFound("no such token");
    out = ReadToken(r, 0);
    return OkStatus();
  }));
  return out;
}

Result<std::vector<Token>> PostgresStore::ListTokens(const std::string& project_id) {
  std::vector<Token> out;
  TF_RETURN_IF_ERROR(pool_->Run(PgTxMode::kRead, [&](PgConnection& conn) -> Status {
    out.clear();
    TF_ASSIGN_OR_RETURN(
        PgResult r, conn.Exec(std::string(kTokenColumns) +
                                  "WHERE $1::text = '' OR project_id = $1 ORDER BY created_at, id",
                              PgParams().Add(project_id)));
    for (int i = 0; i < r.rows(); ++i) out.push_back(ReadToken(r, i));
    return OkStatus();
  }));
  return out;
}

Status PostgresStore::RevokeToken(const std::string& id, TimeMs now) {
  return pool_->Run(PgTxMode::kAutocommit, [&](PgConnection& conn) -> Status {
    TF_ASSIGN_OR_RETURN(
        PgResult r,
        conn.Exec("UPDATE tokens SET revoked_at = COALESCE(revoked_at, $1) WHERE id = $2",
                  PgParams().Add(now).Add(id)));
    if (r.affected() == 0) return NotFound("token " + id + " does not exist");
    return OkStatus();
  });
}

}  // namespace tf::store
