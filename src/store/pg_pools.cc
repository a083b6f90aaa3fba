// PostgresStore's PoolStore: node pools.
#include "store/pg_store_impl.h"

namespace tf::store {
namespace {

constexpr const char* kPoolColumns =
    "SELECT name, spec, status, version, created_at, updated_at FROM pools ";

PoolRecord ReadPool(const PgResult& r, int row) {
  return PoolRecord{std::string(r.Text(row, 0)),
                    std::string(r.Text(row, 1)),
                    std::string(r.Text(row, 2)),
                    r.Int(row, 3),
                    r.Int(row, 4),
                    r.Int(row, 5)};
}

Status NoSuchPool(const std::string& name) {
  return NotFound("pool '" + name + "' does not exist");
}

}  // namespace

Status PostgresStore::CreatePool(const PoolRecord& p) {
  Status s = pool_->Run(PgTxMode::kTransaction, [&](PgConnection& conn) -> Status {
    return conn.Run(
        "INSERT INTO pools (name, spec, status, version, created_at, updated_at) "
        "VALUES ($1, $2, $3, $4, $5, $6)",
        PgParams()
            .Add(p.name)
            .Add(p.spec_json)
            .Add(p.status_json)
            .Add(p.version)
            .Add(p.created_at)
            .Add(p.updated_at));
  });
  if (s.code() == StatusCode::kAlreadyExists) return AlreadyExists("pool '" + p.name + "' exists");
  return s;
}

Result<PoolRecord> PostgresStore::GetPool(const std::string& name) {
  PoolRecord out;
  TF_RETURN_IF_ERROR(pool_->Run(PgTxMode::kRead, [&](PgConnection& conn) -> Status {
    TF_ASSIGN_OR_RETURN(
        PgResult r, conn.Exec(std::string(kPoolColumns) + "WHERE name = $1", PgParams().Add(name)));
    if (r.rows() == 0) return NoSuchPool(name);
    out = ReadPool(r, 0);
    return OkStatus();
  }));
  return out;
}

Result<std::vector<PoolRecord>> PostgresStore::ListPools() {
  std::vector<PoolRecord> out;
  TF_RETURN_IF_ERROR(pool_->Run(PgTxMode::kRead, [&](PgConnection& conn) -> Status {
    out.clear();
    TF_ASSIGN_OR_RETURN(PgResult r, conn.Exec(std::string(kPoolColumns) + "ORDER BY name"));
    for (int i = 0; i < r.rows(); ++i) out.push_back(ReadPool(r, i));
    return OkStatus();
  }));
  return out;
}

Status PostgresStore::UpdatePoolSpec(const std::string& name, const std::string& spec_json,
                                     TimeMs updated_at, int64_t expected_version) {
  return pool_->Run(PgTxMode::kTransaction, [&](PgConnection& conn) -> Status {
    TF_ASSIGN_OR_RETURN(PgResult r, conn.Exec("UPDATE pools SET spec = $2, version = $3, "
                                              "updated_at = $4 WHERE name = $1 AND version = $5",
                                              PgParams()
                                                  .Add(name)
                                                  .Add(spec_json)
                                                  .Add(expected_version + 1)
                                                  .Add(updated_at)
                                                  .Add(expected_version)));
    if (r.affected() > 0) return OkStatus();
    TF_ASSIGN_OR_RETURN(
        PgResult now, conn.Exec("SELECT version FROM pools WHERE name = $1", PgParams().Add(name)));
    if (now.rows() == 0) return NoSuchPool(name);
    return Aborted("pool '" + name + "' changed meanwhile (version " + std::string(now.Text(0, 0)) +
                   ", expected " + std::to_string(expected_version) + ")");
  });
}

Status PostgresStore::SetPoolStatus(const std::string& name, const std::string& status_json) {
  return pool_->Run(PgTxMode::kTransaction, [&](PgConnection& conn) -> Status {
    TF_ASSIGN_OR_RETURN(PgResult r, conn.Exec("UPDATE pools SET status = $2 WHERE name = $1",
                                              PgParams().Add(name).Add(status_json)));
    return r.affected() == 0 ? NoSuchPool(name) : OkStatus();
  });
}

Status PostgresStore::DeletePool(const std::string& name) {
  return pool_->Run(PgTxMode::kTransaction, [&](PgConnection& conn) -> Status {
    TF_ASSIGN_OR_RETURN(PgResult r,
                        conn.Exec("DELETE FROM pools WHERE name = $1", PgParams().Add(name)));
    return r.affected() == 0 ? NoSuchPool(name) : OkStatus();
  });
}

}  // namespace tf::store
