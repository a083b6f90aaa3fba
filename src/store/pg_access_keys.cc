// PostgresStore's AccessKeyStore: S3 access keys.
#include "store/pg_store_impl.h"

namespace tf::store {
namespace {

constexpr const char* kKeyColumns =
    "SELECT id, project_id, secret, name, created_at, revoked_at FROM s3_access_keys ";

AccessKey ReadKey(const PgResult& r, int row) {
  AccessKey k;
  k.id = r.Text(row, 0);
  k.project_id = r.Text(row, 1);
  k.secret = r.Text(row, 2);
  k.name = r.Text(row, 3);
  k.created_at = r.Int(row, 4);
  if (!r.IsNull(row, 5)) k.revoked_at = r.Int(row, 5);
  return k;
}

}  // namespace

Status PostgresStore::CreateAccessKey(const AccessKey& k) {
  Status s = pool_->Run(PgTxMode::kAutocommit, [&](PgConnection& conn) {
    PgParams params;
    params.Add(k.id).Add(k.project_id).Add(k.secret).Add(k.name).Add(k.created_at);
    if (k.revoked_at) {
      params.Add(*k.revoked_at);
    } else {
      params.AddNull();
    }
    return conn.Run(
        "INSERT INTO s3_access_keys (id, project_id, secret, name, created_at, revoked_at) "
        "VALUES ($1, $2, $3, $4, $5, $6)",
        params);
  });
  if (s.code() == StatusCode::kAlreadyExists) {
    return AlreadyExists("access key " + k.id + " already exists");
  }
  return s;
}

Result<AccessKey> PostgresStore::FindAccessKey(const std::string& id) {
  AccessKey out;
  TF_RETURN_IF_ERROR(pool_->Run(PgTxMode::kRead, [&](PgConnection& conn) -> Status {
    TF_ASSIGN_OR_RETURN(PgResult r,
                        conn.Exec(std::string(kKeyColumns) + "WHERE id = $1", PgParams().Add(id)));
    if (r.rows() == 0) return NotFound("access key " + id + " does not exist");
    out = ReadKey(r, 0);
    return OkStatus();
  }));
  return out;
}

Result<std::vector<AccessKey>> PostgresStore::ListAccessKeys(const std::string& project_id) {
  std::vector<AccessKey> out;
  TF_RETURN_IF_ERROR(pool_->Run(PgTxMode::kRead, [&](PgConnection& conn) -> Status {
    out.clear();
    TF_ASSIGN_OR_RETURN(
        PgResult r, conn.Exec(std::string(kKeyColumns) +
                                  "WHERE $1::text = '' OR project_id = $1 ORDER BY created_at, id",
                              PgParams().Add(project_id)));
    for (int i = 0; i < r.rows(); ++i) out.push_back(ReadKey(r, i));
    return OkStatus();
  }));
  return out;
}

Status PostgresStore::RevokeAccessKey(const std::string& id, TimeMs now) {
  return pool_->Run(PgTxMode::kAutocommit, [&](PgConnection& conn) -> Status {
    TF_ASSIGN_OR_RETURN(PgResult r, conn.Exec("UPDATE s3_access_keys SET revoked_at = "
                                              "COALESCE(revoked_at, $1) WHERE id = $2",
                                              PgParams().Add(now).Add(id)));
    if (r.affected() == 0) return NotFound("access key " + id + " does not exist");
    return OkStatus();
  });
}

}  // namespace tf::store
