// SqliteStore's PoolStore: node pools.
#include "store/sqlite_store_impl.h"

namespace tf::store {
namespace {

constexpr const char* kPoolColumns =
    "SELECT name, spec, status, version, created_at, updated_at FROM pools ";

PoolRecord ReadPool(const Stmt& q) {
  return PoolRecord{q.Text(0), q.Text(1), q.Text(2), q.Int(3), q.Int(4), q.Int(5)};
}

Status NoSuchPool(const std::string& name) {
  return NotFound("pool '" + name + "' does not exist");
}

}  // namespace

Status SqliteStore::CreatePool(const PoolRecord& p) {
  return writer_->Write([&](SqliteDb& db) -> Status {
    TF_ASSIGN_OR_RETURN(Stmt q, db.Prepare("INSERT INTO pools (name, spec, status, version, "
                                           "created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)"));
    Status s = q.Bind(1, p.name)
                   .Bind(2, p.spec_json)
                   .Bind(3, p.status_json)
                   .Bind(4, p.version)
                   .Bind(5, p.created_at)
                   .Bind(6, p.updated_at)
                   .Run();
    if (s.code() == StatusCode::kAlreadyExists)
      return AlreadyExists("pool '" + p.name + "' exists");
    return s;
  });
}

Result<PoolRecord> SqliteStore::GetPool(const std::string& name) {
  PoolRecord out;
  TF_RETURN_IF_ERROR(readers_.With([&](SqliteDb& db) -> Status {
    TF_ASSIGN_OR_RETURN(Stmt q, db.Prepare(std::string(kPoolColumns) + "WHERE name = ?"));
    TF_ASSIGN_OR_RETURN(bool row, q.Bind(1, name).Step());
    if (!row) return NoSuchPool(name);
    out = ReadPool(q);
    return OkStatus();
  }));
  return out;
}

Result<std::vector<PoolRecord>> SqliteStore::ListPools() {
  std::vector<PoolRecord> out;
  TF_RETURN_IF_ERROR(readers_.With([&](SqliteDb& db) -> Status {
    TF_ASSIGN_OR_RETURN(Stmt q, db.Prepare(std::string(kPoolColumns) + "ORDER BY name"));
    for (;;) {
      TF_ASSIGN_OR_RETURN(bool row, q.Step());
      if (!row) return OkStatus();
      out.push_back(ReadPool(q));
    }
  }));
  return out;
}

Status SqliteStore::UpdatePoolSpec(const std::string& name, const std::string& spec_json,
                                   TimeMs updated_at, int64_t expected_version) {
  return writer_->Write([&](SqliteDb& db) -> Status {
    TF_ASSIGN_OR_RETURN(Stmt q, db.Prepare("UPDATE pools SET spec = ?, version = ?, "
                                           "updated_at = ? WHERE name = ? AND version = ?"));
    TF_RETURN_IF_ERROR(q.Bind(1, spec_json)
                           .Bind(2, expected_version + 1)
                           .Bind(3, updated_at)
                           .Bind(4, name)
                           .Bind(5, expected_version)
                           .Run());
    if (db.Changes() > 0) return OkStatus();
    TF_ASSIGN_OR_RETURN(Stmt now, db.Prepare("SELECT version FROM pools WHERE name = ?"));
    TF_ASSIGN_OR_RETURN(bool row, now.Bind(1, name).Step());
    if (!row) return NoSuchPool(name);
    return Aborted("pool '" + name + "' changed meanwhile (version " + std::to_string(now.Int(0)) +
                   ", expected " + std::to_string(expected_version) + ")");
  });
}

Status SqliteStore::SetPoolStatus(const std::string& name, const std::string& status_json) {
  return writer_->Write([&](SqliteDb& db) -> Status {
    TF_ASSIGN_OR_RETURN(Stmt q, db.Prepare("UPDATE pools SET status = ? WHERE name = ?"));
    TF_RETURN_IF_ERROR(q.Bind(1, status_json).Bind(2, name).Run());
    return db.Changes() == 0 ? NoSuchPool(name) : OkStatus();
  });
}

Status SqliteStore::DeletePool(const std::string& name) {
  return writer_->Write([&](SqliteDb& db) -> Status {
    TF_ASSIGN_OR_RETURN(Stmt q, db.Prepare("DELETE FROM pools WHERE name = ?"));
    TF_RETURN_IF_ERROR(q.Bind(1, name).Run());
    return db.Changes() == 0 ? NoSuchPool(name) : OkStatus();
  });
}

}  // namespace tf::store
