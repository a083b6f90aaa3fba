// SqliteStore's ObjectStore: buckets, objects' metadata and pending blobs. Keys are bound as
// BLOBs, so that they compare as bytes.
#include "store/object_listing.h"
#include "store/sqlite_store_impl.h"

namespace tf::store {
namespace {

constexpr const char* kBucketColumns = "SELECT id, project_id, name, created_at FROM buckets ";
constexpr const char* kObjectColumns =
    "SELECT bucket_id, key, size, etag, sha256, content_type, user_metadata, blob_id, "
    "modified_at FROM objects ";

Bucket ReadBucket(const Stmt& q) { return Bucket{q.Int(0), q.Text(1), q.Text(2), q.Int(3)}; }

ObjectRecord ReadObject(const Stmt& q) {
  ObjectRecord o;
  o.bucket_id = q.Int(0);
  o.key = q.Text(1);
  o.size = q.Int(2);
  o.etag = q.Text(3);
  o.sha256 = q.Text(4);
  o.content_type = q.Text(5);
  o.user_metadata = q.Text(6);
  o.blob_id = q.Text(7);
  o.modified_at = q.Int(8);
  return o;
}

// The blob of object (bucket_id, key), or "" if there is no such object.
Result<std::string> FindBlob(SqliteDb& db, int64_t bucket_id, const std::string& key) {
  TF_ASSIGN_OR_RETURN(Stmt q,
                      db.Prepare("SELECT blob_id FROM objects WHERE bucket_id = ? AND key = ?"));
  TF_ASSIGN_OR_RETURN(bool row, q.Bind(1, bucket_id).BindBlob(2, key).Step());
  return row ? q.Text(0) : std::string();
}

Status AddPending(SqliteDb& db, const PendingBlob& blob) {
  TF_ASSIGN_OR_RETURN(Stmt q, db.Prepare("INSERT INTO pending_blobs VALUES (?, ?, ?)"));
  return q.Bind(1, blob.blob_id).Bind(2, blob.owner).Bind(3, blob.created_at).Run();
}

}  // namespace

Result<Bucket> SqliteStore::CreateBucket(Bucket bucket) {
  TF_RETURN_IF_ERROR(writer_->Write([&](SqliteDb& db) -> Status {
    TF_ASSIGN_OR_RETURN(
        Stmt q, db.Prepare("INSERT INTO buckets (project_id, name, created_at) VALUES (?, ?, ?)"));
    Status s = q.Bind(1, bucket.project_id).Bind(2, bucket.name).Bind(3, bucket.created_at).Run();
    if (s.code() == StatusCode::kAlreadyExists) {
      return AlreadyExists("bucket '" + bucket.name + "' already exists");
    }
    TF_RETURN_IF_ERROR(s);
    bucket.id = db.LastInsertId();
    return OkStatus();
  }));
  return bucket;
}

Result<Bucket> SqliteStore::GetBucket(const std::string& project_id, const std::string& name) {
  Bucket out;
  TF_RETURN_IF_ERROR(readers_.With([&](SqliteDb& db) -> Status {
    TF_ASSIGN_OR_RETURN(Stmt q, db.Prepare(std::string(kBucketColumns) +
                                           "WHERE project_id = ? AND name = ?"));
    TF_ASSIGN_OR_RETURN(bool row, q.Bind(1, project_id).Bind(2, name).Step());
    if (!row) return NotFound("bucket '" + name + "' does not exist");
    out = ReadBucket(q);
    return OkStatus();
  }));
  return out;
}

Result<std::vector<Bucket>> SqliteStore::ListBuckets(const std::string& project_id) {
  std::vector<Bucket> out;
  TF_RETURN_IF_ERROR(readers_.With([&](SqliteDb& db) -> Status {
    TF_ASSIGN_OR_RETURN(Stmt q, db.Prepare(std::string(kBucketColumns) +
                                           "WHERE project_id = ? ORDER BY name"));
    q.Bind(1, project_id);
    for (;;) {
      TF_ASSIGN_OR_RETURN(bool row, q.Step());
      if (!row) return OkStatus();
      out.push_back(ReadBucket(q));
    }
  }));
  return out;
}

Status SqliteStore::DeleteBucket(int64_t bucket_id) {
  return writer_->Write([&](SqliteDb& db) -> Status {
    TF_ASSIGN_OR_RETURN(Stmt used, db.Prepare("SELECT 1 FROM objects WHERE bucket_id = ? LIMIT 1"));
    TF_ASSIGN_OR_RETURN(bool has_objects, used.Bind(1, bucket_id).Step());
    if (has_objects) return FailedPrecondition("the bucket is not empty");
    TF_ASSIGN_OR_RETURN(Stmt q, db.Prepare("DELETE FROM buckets WHERE id = ?"));
    TF_RETURN_IF_ERROR(q.Bind(1, bucket_id).Run());
    if (db.Changes() == 0) return NotFound("bucket " + std::to_string(bucket_id) + " does not exist");
    return OkStatus();
  });
}

Status SqliteStore::AddPendingBlob(const PendingBlob& blob) {
  return writer_->Write([&](SqliteDb& db) { return AddPending(db, blob); });
}

Result<std::vector<PendingBlob>> SqliteStore::ListPendingBlobs(const std::string& owner) {
  std::vector<PendingBlob> out;
  TF_RETURN_IF_ERROR(readers_.With([&](SqliteDb& db) -> Status {
    TF_ASSIGN_OR_RETURN(Stmt q, db.Prepare("SELECT blob_id, owner, created_at FROM pending_blobs "
                                           "WHERE owner = ? AND blob_id NOT IN (SELECT blob_id FROM multipart_parts) "
                                           "ORDER BY created_at, blob_id"));
    q.Bind(1, owner);
    for (;;) {
      TF_ASSIGN_OR_RETURN(bool row, q.Step());
      if (!row) return OkStatus();
      out.push_back(PendingBlob{q.Text(0), q.Text(1), q.Int(2)});
    }
  }));
  return out;
}

Status SqliteStore::RemovePendingBlob(const std::string& blob_id) {
  return writer_->Write([&](SqliteDb& db) -> Status {
    TF_ASSIGN_OR_RETURN(Stmt q, db.Prepare("DELETE FROM pending_blobs WHERE blob_id = ?"));
    return q.Bind(1, blob_id).Run();
  });
}

namespace {

// PutObject's writes, in the caller's transaction; the replaced blob's id into *replaced.
Status PutObjectIn(SqliteDb& db, const ObjectRecord& o, const std::string& owner,
                   std::string* replaced) {
  replaced->clear();
  TF_ASSIGN_OR_RETURN(Stmt bucket, db.Prepare("SELECT 1 FROM buckets WHERE id = ?"));
  TF_ASSIGN_OR_RETURN(bool exists, bucket.Bind(1, o.bucket_id).Step());
  if (!exists) return NotFound("the bucket does not exist");
  TF_ASSIGN_OR_RETURN(*replaced, FindBlob(db, o.bucket_id, o.key));
  TF_ASSIGN_OR_RETURN(
      Stmt put, db.Prepare("INSERT OR REPLACE INTO objects VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"));
  TF_RETURN_IF_ERROR(put.Bind(1, o.bucket_id)
                         .BindBlob(2, o.key)
                         .Bind(3, o.size)
                         .Bind(4, o.etag)
                         .Bind(5, o.sha256)
                         .Bind(6, o.content_type)
                         .Bind(7, o.user_metadata)
                         .Bind(8, o.blob_id)
                         .Bind(9, o.modified_at)
                         .Run());
  TF_ASSIGN_OR_RETURN(Stmt done, db.Prepare("DELETE FROM pending_blobs WHERE blob_id = ?"));
  TF_RETURN_IF_ERROR(done.Bind(1, o.blob_id).Run());
  if (replaced->empty()) return OkStatus();
  return AddPending(db, PendingBlob{*replaced, owner, o.modified_at});
}

}  // namespace

Result<std::string> SqliteStore::PutObject(const ObjectRecord& o, const std::string& owner) {
  std::string replaced;
  TF_RETURN_IF_ERROR(writer_->Write(
      [&](SqliteDb& db) -> Status { return PutObjectIn(db, o, owner, &replaced); }));
  return replaced;
}

Result<std::string> SqliteStore::PutObjectCompletingUpload(const ObjectRecord& o,
                                                           const std::string& owner,
                                                           const std::string& upload_id) {
  std::string replaced;
  TF_RETURN_IF_ERROR(writer_->Write([&](SqliteDb& db) -> Status {
    TF_ASSIGN_OR_RETURN(Stmt upload,
                        db.Prepare("SELECT 1 FROM multipart_uploads WHERE upload_id = ?"));
    TF_ASSIGN_OR_RETURN(bool exists, upload.Bind(1, upload_id).Step());
    if (!exists) return NotFound("multipart upload '" + upload_id + "' does not exist");
    TF_RETURN_IF_ERROR(PutObjectIn(db, o, owner, &replaced));
    TF_ASSIGN_OR_RETURN(Stmt parts, db.Prepare("DELETE FROM multipart_parts WHERE upload_id = ?"));
    TF_RETURN_IF_ERROR(parts.Bind(1, upload_id).Run());
    TF_ASSIGN_OR_RETURN(Stmt q, db.Prepare("DELETE FROM multipart_uploads WHERE upload_id = ?"));
    return q.Bind(1, upload_id).Run();
  }));
  return replaced;
}

Result<ObjectRecord> SqliteStore::GetObject(int64_t bucket_id, const std::string& key) {
  ObjectRecord out;
  TF_RETURN_IF_ERROR(readers_.With([&](SqliteDb& db) -> Status {
    TF_ASSIGN_OR_RETURN(Stmt q, db.Prepare(std::string(kObjectColumns) +
                                           "WHERE bucket_id = ? AND key = ?"));
    TF_ASSIGN_OR_RETURN(bool row, q.Bind(1, bucket_id).BindBlob(2, key).Step());
    if (!row) return NotFound("object '" + key + "' does not exist");
    out = ReadObject(q);
    return OkStatus();
  }));
  return out;
}

Result<ObjectListing> SqliteStore::ListObjects(int64_t bucket_id,
                                               const ListObjectsOptions& options) {
  Result<ObjectListing> out = ObjectListing{};
  // One read transaction: the listing is one consistent snapshot.
  TF_RETURN_IF_ERROR(readers_.With([&](SqliteDb& db) -> Status {
    auto fetch = [&](const KeyRange& range, int limit) -> Result<std::vector<ObjectRecord>> {
      std::string sql = std::string(kObjectColumns) + "WHERE bucket_id = ? AND key " +
                        (range.inclusive ? ">=" : ">") + " ? ";
      if (!range.before.empty()) sql += "AND key < ? ";
      sql += "ORDER BY key LIMIT ?";
      TF_ASSIGN_OR_RETURN(Stmt q, db.Prepare(sql));
      q.Bind(1, bucket_id).BindBlob(2, range.from);
      if (range.before.empty()) {
        q.Bind(3, int64_t{limit});
      } else {
        q.BindBlob(3, range.before).Bind(4, int64_t{limit});
      }
      std::vector<ObjectRecord> rows;
      for (;;) {
        TF_ASSIGN_OR_RETURN(bool row, q.Step());
        if (!row) return rows;
        rows.push_back(ReadObject(q));
      }
    };
    out = ListObjectsWith(options, fetch);
    return out.status();
  }));
  return out;
}

Result<std::string> SqliteStore::DeleteObject(int64_t bucket_id, const std::string& key,
                                              const std::string& owner, TimeMs now) {
  std::string blob;
  TF_RETURN_IF_ERROR(writer_->Write([&](SqliteDb& db) -> Status {
    TF_ASSIGN_OR_RETURN(blob, FindBlob(db, bucket_id, key));
    if (blob.empty()) return NotFound("object '" + key + "' does not exist");
    TF_ASSIGN_OR_RETURN(Stmt q, db.Prepare("DELETE FROM objects WHERE bucket_id = ? AND key = ?"));
    TF_RETURN_IF_ERROR(q.Bind(1, bucket_id).BindBlob(2, key).Run());
    return AddPending(db, PendingBlob{blob, owner, now});
  }));
  return blob;
}

}  // namespace tf::store
