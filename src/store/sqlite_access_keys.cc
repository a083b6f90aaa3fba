// SqliteStore's AccessKeyStore: S3 access keys.
#include "store/sqlite_store_impl.h"

namespace tf::store {
namespace {

constexpr const char* kKeyColumns =
    "SELECT id, project_id, secret, name, created_at, revoked_at FROM s3_access_keys ";

AccessKey ReadKey(const Stmt& q) {
  AccessKey k;
  k.id = q.Text(0);
  k.project_id = q.Text(1);
  k.secret = q.Text(2);
  k.name = q.Text(3);
  k.created_at = q.Int(4);
  if (!q.IsNull(5)) k.revoked_at = q.Int(5);
  return k;
}

}  // namespace

Status SqliteStore::CreateAccessKey(const AccessKey& k) {
  return writer_->Write([&](SqliteDb& db) -> Status {
    TF_ASSIGN_OR_RETURN(Stmt q, db.Prepare("INSERT INTO s3_access_keys VALUES (?, ?, ?, ?, ?, ?)"));
    q.Bind(1, k.id).Bind(2, k.project_id).Bind(3, k.secret).Bind(4, k.name).Bind(5, k.created_at);
    if (k.revoked_at) {
      q.Bind(6, *k.revoked_at);
    } else {
      q.BindNull(6);
    }
    Status s = q.Run();
    if (s.code() == StatusCode::kAlreadyExists) {
      return AlreadyExists("access key " + k.id + " already exists");
    }
    return s;
  });
}

Result<AccessKey> SqliteStore::FindAccessKey(const std::string& id) {
  AccessKey out;
  TF_RETURN_IF_ERROR(readers_.With([&](SqliteDb& db) -> Status {
    TF_ASSIGN_OR_RETURN(Stmt q, db.Prepare(std::string(kKeyColumns) + "WHERE id = ?"));
    TF_ASSIGN_OR_RETURN(bool row, q.Bind(1, id).Step());
    if (!row) return NotFound("access key " + id + " does not exist");
    out = ReadKey(q);
    return OkStatus();
  }));
  return out;
}

Result<std::vector<AccessKey>> SqliteStore::ListAccessKeys(const std::string& project_id) {
  std::vector<AccessKey> out;
  TF_RETURN_IF_ERROR(readers_.With([&](SqliteDb& db) -> Status {
    TF_ASSIGN_OR_RETURN(Stmt q,
                        db.Prepare(std::string(kKeyColumns) +
                                   "WHERE ?1 = '' OR project_id = ?1 ORDER BY created_at, id"));
    q.Bind(1, project_id);
    for (;;) {
      TF_ASSIGN_OR_RETURN(bool row, q.Step());
      if (!row) return OkStatus();
      out.push_back(ReadKey(q));
    }
  }));
  return out;
}

Status SqliteStore::RevokeAccessKey(const std::string& id, TimeMs now) {
  return writer_->Write([&](SqliteDb& db) -> Status {
    TF_ASSIGN_OR_RETURN(Stmt q, db.Prepare("UPDATE s3_access_keys SET revoked_at = "
                                           "COALESCE(revoked_at, ?) WHERE id = ?"));
    TF_RETURN_IF_ERROR(q.Bind(1, now).Bind(2, id).Run());
    if (db.Changes() == 0) return NotFound("access key " + id + " does not exist");
    return OkStatus();
  });
}

}  // namespace tf::store
