// SqliteStore's AuthStore: projects and tokens.
#include "store/sqlite_store_impl.h"

namespace tf::store {
namespace {

Project ReadProject(const Stmt& q) { return Project{q.Text(0), q.Text(1), q.Int(2)}; }

Token ReadToken(const Stmt& q) {
  Token t;
  t.id = q.Text(0);
  t.project_id = q.Text(1);
  t.name = q.Text(2);
  t.hash = q.Text(3);
  t.admin = q.Int(4) != 0;
  t.created_at = q.Int(5);
  if (!q.IsNull(6)) t.revoked_at = q.Int(6);
  return t;
}

constexpr const char* kTokenColumns =
    "SELECT id, project_id, name, hash, admin, created_at, revoked_at FROM tokens ";

}  // namespace

Status SqliteStore::CreateProject(const Project& p) {
  return writer_->Write([&](SqliteDb& db) -> Status {
    TF_ASSIGN_OR_RETURN(Stmt q, db.Prepare("INSERT INTO projects VALUES (?, ?, ?)"));
    Status s = q.Bind(1, p.id).Bind(2, p.name).Bind(3, p.created_at).Run();
    if (s.code() == StatusCode::kAlreadyExists) {
      return AlreadyExists("project '" + p.name + "' already exists");
    }
    return s;
  });
}

Result<Project> SqliteStore::GetProject(const std::string& id) {
  Project out;
  TF_RETURN_IF_ERROR(readers_.With([&](SqliteDb& db) -> Status {
    TF_ASSIGN_OR_RETURN(Stmt q,
                        db.Prepare("SELECT id, name, created_at FROM projects WHERE id = ?"));
    TF_ASSIGN_OR_RETURN(bool row, q.Bind(1, id).Step());
    if (!row) return NotFound("project " + id + " does not exist");
    out = ReadProject(q);
    return OkStatus();
  }));
  return out;
}

Result<Project> SqliteStore::GetProjectByName(const std::string& name) {
  Project out;
  TF_RETURN_IF_ERROR(readers_.With([&](SqliteDb& db) -> Status {
    TF_ASSIGN_OR_RETURN(Stmt q,
                        db.Prepare("SELECT id, name, created_at FROM projects WHERE name = ?"));
    TF_ASSIGN_OR_RETURN(bool row, q.Bind(1, name).Step());
    if (!row) return NotFound("project '" + name + "' does not exist");
    out = ReadProject(q);
    return OkStatus();
  }));
  return out;
}

Result<std::vector<Project>> SqliteStore::ListProjects() {
  std::vector<Project> out;
  TF_RETURN_IF_ERROR(readers_.With([&](SqliteDb& db) -> Status {
    TF_ASSIGN_OR_RETURN(Stmt q,
                        db.Prepare("SELECT id, name, created_at FROM projects ORDER BY name"));
    for (;;) {
      TF_ASSIGN_OR_RETURN(bool row, q.Step());
      if (!row) return OkStatus();
      out.push_back(ReadProject(q));
    }
  }));
  return out;
}

Status SqliteStore::CreateToken(const Token& t) {
  return writer_->Write([&](SqliteDb& db) -> Status {
    TF_ASSIGN_OR_RETURN(Stmt q, db.Prepare("INSERT INTO tokens VALUES (?, ?, ?, ?, ?, ?, NULL)"));
    return q.Bind(1, t.id)
        .Bind(2, t.project_id)
        .Bind(3, t.name)
        .Bind(4, t.hash)
        .Bind(5, int64_t{t.admin})
        .Bind(6, t.created_at)
        .Run();
  });
}

Result<Token> SqliteStore::FindTokenByHash(const std::string& hash) {
  Token out;
  TF_RETURN_IF_ERROR(readers_.With([&](SqliteDb& db) -> Status {
    TF_ASSIGN_OR_RETURN(Stmt q, db.Prepare(std::string(kTokenColumns) + "WHERE hash = ?"));
    TF_ASSIGN_OR_RETURN(bool row, q.Bind(1, hash).Step());
    if (!row) return NotFound("no such token");
    out = ReadToken(q);
    return OkStatus();
  }));
  return out;
}

Result<std::vector<Token>> SqliteStore::ListTokens(const std::string& project_id) {
  std::vector<Token> out;
  TF_RETURN_IF_ERROR(readers_.With([&](SqliteDb& db) -> Status {
    TF_ASSIGN_OR_RETURN(Stmt q,
                        db.Prepare(std::string(kTokenColumns) +
                                   "WHERE ?1 = '' OR project_id = ?1 ORDER BY created_at, id"));
    q.Bind(1, project_id);
    for (;;) {
      TF_ASSIGN_OR_RETURN(bool row, q.Step());
      if (!row) return OkStatus();
      out.push_back(ReadToken(q));
    }
  }));
  return out;
}

Status SqliteStore::RevokeToken(const std::string& id, TimeMs now) {
  return writer_->Write([&](SqliteDb& db) -> Status {
    TF_ASSIGN_OR_RETURN(
        Stmt q, db.Prepare("UPDATE tokens SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?"));
    TF_RETURN_IF_ERROR(q.Bind(1, now).Bind(2, id).Run());
    if (db.Changes() == 0) return NotFound("token " + id + " does not exist");
    return OkStatus();
  });
}

}  // namespace tf::store
