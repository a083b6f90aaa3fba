// SqliteStore's ObjectStore: buckets, objects' metadata and pending blobs. Keys are bound as
// BLOBs, so that they compare as bytes.
#include "store/object_listing.h"
#include "store/put_condition.h"
#include "store/sqlite_store_impl.h"

namespace tf::store {
namespace {

constexpr const char* kBucketColumns = "SELECT id, project_id, name, created_at FROM buckets ";
constexpr const char* kObjectColumns =
    "SELECT bucket_id, key, size, etag, sha256, content_type, user_metadata, blob_id, "
    "modified_at, headers, checksum FROM objects ";

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
  o.headers = q.Text(9);
  o.checksum = q.Text(10);
  return o;
}

// Takes the content of object (bucket_id, key) away from it: returns its blobs (its one blob, or
// its segments' blobs, whose rows go) and sets *exists; none if there is no such object.
Result<std::vector<std::string>> TakeBlobs(SqliteDb& db, int64_t bucket_id, const std::string& key,
                                           bool* exists) {
  std::vector<std::string> blobs;
  TF_ASSIGN_OR_RETURN(Stmt q,
                      db.Prepare("SELECT blob_id FROM objects WHERE bucket_id = ? AND key = ?"));
  TF_ASSIGN_OR_RETURN(*exists, q.Bind(1, bucket_id).BindBlob(2, key).Step());
  if (!*exists) return blobs;
  if (std::string blob = q.Text(0); !blob.empty()) {
    blobs.push_back(std::move(blob));
    return blobs;
  }
  TF_ASSIGN_OR_RETURN(Stmt segments,
                      db.Prepare("DELETE FROM object_segments WHERE bucket_id = ? AND key = ? "
                                 "RETURNING blob_id"));
  segments.Bind(1, bucket_id).BindBlob(2, key);
  for (;;) {
    TF_ASSIGN_OR_RETURN(bool row, segments.Step());
    if (!row) return blobs;
    blobs.push_back(segments.Text(0));
  }
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
    TF_ASSIGN_OR_RETURN(
        Stmt q, db.Prepare(std::string(kBucketColumns) + "WHERE project_id = ? AND name = ?"));
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
    TF_ASSIGN_OR_RETURN(
        Stmt q, db.Prepare(std::string(kBucketColumns) + "WHERE project_id = ? ORDER BY name"));
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
    if (db.Changes() == 0)
      return NotFound("bucket " + std::to_string(bucket_id) + " does not exist");
    return OkStatus();
  });
}

Status SqliteStore::AddPendingBlob(const PendingBlob& blob) {
  return writer_->Write([&](SqliteDb& db) { return AddPending(db, blob); });
}

Result<std::vector<PendingBlob>> SqliteStore::ListPendingBlobs(const std::string& owner) {
  std::vector<PendingBlob> out;
  TF_RETURN_IF_ERROR(readers_.With([&](SqliteDb& db) -> Status {
    // Parts' blobs stay pending while their rows hold them. A segment's blob is never
    // pending (its row goes when the segment's comes); should one be, it is live all the same.
    TF_ASSIGN_OR_RETURN(
        Stmt q,
        db.Prepare("SELECT blob_id, owner, created_at FROM pending_blobs "
                   "WHERE owner = ? AND blob_id NOT IN (SELECT blob_id FROM multipart_parts) "
                   "AND NOT EXISTS (SELECT 1 FROM object_segments s "
                   "WHERE s.blob_id = pending_blobs.blob_id) "
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

// Whether `condition` holds of the object (o.bucket_id, o.key) as it is now.
Status CheckCondition(SqliteDb& db, const ObjectRecord& o, const PutCondition& condition) {
  if (!condition.must_be_absent && condition.etag.empty()) return OkStatus();
  TF_ASSIGN_OR_RETURN(Stmt q,
                      db.Prepare("SELECT etag FROM objects WHERE bucket_id = ? AND key = ?"));
  TF_ASSIGN_OR_RETURN(bool exists, q.Bind(1, o.bucket_id).BindBlob(2, o.key).Step());
  return PutConditionHolds(o.key, condition,
                           exists ? std::optional<std::string>(q.Text(0)) : std::nullopt);
}

// PutObject's writes, in the caller's transaction; the replaced object's blobs into *replaced.
Status PutObjectIn(SqliteDb& db, const ObjectRecord& o, const std::string& owner,
                   std::vector<std::string>* replaced, const PutCondition& condition = {}) {
  replaced->clear();
  if (o.blob_id.empty() == o.segments.empty()) {
    return InvalidArgument("an object's content is one blob or a list of segments, not " +
                           std::string(o.blob_id.empty() ? "neither" : "both"));
  }
  TF_ASSIGN_OR_RETURN(Stmt bucket, db.Prepare("SELECT 1 FROM buckets WHERE id = ?"));
  TF_ASSIGN_OR_RETURN(bool exists, bucket.Bind(1, o.bucket_id).Step());
  if (!exists) return NotFound("the bucket does not exist");
  TF_RETURN_IF_ERROR(CheckCondition(db, o, condition));
  bool had_object = false;
  TF_ASSIGN_OR_RETURN(*replaced, TakeBlobs(db, o.bucket_id, o.key, &had_object));
  TF_ASSIGN_OR_RETURN(
      Stmt put, db.Prepare("INSERT OR REPLACE INTO objects (bucket_id, key, size, etag, sha256, "
                           "content_type, user_metadata, blob_id, modified_at, headers, checksum) "
                           "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"));
  TF_RETURN_IF_ERROR(put.Bind(1, o.bucket_id)
                         .BindBlob(2, o.key)
                         .Bind(3, o.size)
                         .Bind(4, o.etag)
                         .Bind(5, o.sha256)
                         .Bind(6, o.content_type)
                         .Bind(7, o.user_metadata)
                         .Bind(8, o.blob_id)
                         .Bind(9, o.modified_at)
                         .Bind(10, o.headers)
                         .Bind(11, o.checksum)
                         .Run());
  auto forget_pending = [&](const std::string& blob_id) -> Status {
    TF_ASSIGN_OR_RETURN(Stmt done, db.Prepare("DELETE FROM pending_blobs WHERE blob_id = ?"));
    return done.Bind(1, blob_id).Run();
  };
  if (!o.blob_id.empty()) TF_RETURN_IF_ERROR(forget_pending(o.blob_id));
  for (size_t i = 0; i < o.segments.size(); ++i) {
    const BlobSegment& segment = o.segments[i];
    TF_ASSIGN_OR_RETURN(Stmt add, db.Prepare("INSERT INTO object_segments (bucket_id, key, number, "
                                             "blob_id, size, checksum) VALUES (?, ?, ?, ?, ?, ?)"));
    TF_RETURN_IF_ERROR(add.Bind(1, o.bucket_id)
                           .BindBlob(2, o.key)
                           .Bind(3, static_cast<int64_t>(i))
                           .Bind(4, segment.blob_id)
                           .Bind(5, segment.size)
                           .Bind(6, segment.checksum)
                           .Run());
    TF_RETURN_IF_ERROR(forget_pending(segment.blob_id));
  }
  for (const std::string& blob : *replaced) {
    TF_RETURN_IF_ERROR(AddPending(db, PendingBlob{blob, owner, o.modified_at}));
  }
  return OkStatus();
}

}  // namespace

Result<std::vector<std::string>> SqliteStore::PutObject(const ObjectRecord& o,
                                                        const std::string& owner,
                                                        const PutCondition& condition) {
  std::vector<std::string> replaced;
  TF_RETURN_IF_ERROR(writer_->Write(
      [&](SqliteDb& db) -> Status { return PutObjectIn(db, o, owner, &replaced, condition); }));
  return replaced;
}

Result<std::vector<std::string>> SqliteStore::PutObjectCompletingUpload(
    const ObjectRecord& o, const std::string& owner, const std::string& upload_id,
    const PutCondition& condition) {
  std::vector<std::string> replaced;
  TF_RETURN_IF_ERROR(writer_->Write([&](SqliteDb& db) -> Status {
    TF_ASSIGN_OR_RETURN(Stmt upload,
                        db.Prepare("SELECT 1 FROM multipart_uploads WHERE upload_id = ?"));
    TF_ASSIGN_OR_RETURN(bool exists, upload.Bind(1, upload_id).Step());
    if (!exists) return NotFound("multipart upload '" + upload_id + "' does not exist");
    TF_RETURN_IF_ERROR(PutObjectIn(db, o, owner, &replaced, condition));
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
    TF_ASSIGN_OR_RETURN(
        Stmt q, db.Prepare(std::string(kObjectColumns) + "WHERE bucket_id = ? AND key = ?"));
    TF_ASSIGN_OR_RETURN(bool row, q.Bind(1, bucket_id).BindBlob(2, key).Step());
    if (!row) return NotFound("object '" + key + "' does not exist");
    out = ReadObject(q);
    if (!out.blob_id.empty()) return OkStatus();
    TF_ASSIGN_OR_RETURN(Stmt segments,
                        db.Prepare("SELECT blob_id, size, checksum FROM object_segments "
                                   "WHERE bucket_id = ? AND key = ? ORDER BY number"));
    segments.Bind(1, bucket_id).BindBlob(2, key);
    for (;;) {
      TF_ASSIGN_OR_RETURN(bool more, segments.Step());
      if (!more) return OkStatus();
      out.segments.push_back(BlobSegment{segments.Text(0), segments.Int(1), segments.Text(2)});
    }
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

Result<std::vector<std::string>> SqliteStore::DeleteObject(int64_t bucket_id,
                                                           const std::string& key,
                                                           const std::string& owner, TimeMs now,
                                                           const std::string& if_match) {
  std::vector<std::string> blobs;
  TF_RETURN_IF_ERROR(writer_->Write([&](SqliteDb& db) -> Status {
    if (!if_match.empty()) {  // checked before anything changes
      TF_ASSIGN_OR_RETURN(Stmt q,
                          db.Prepare("SELECT etag FROM objects WHERE bucket_id = ? AND key = ?"));
      TF_ASSIGN_OR_RETURN(bool found, q.Bind(1, bucket_id).BindBlob(2, key).Step());
      if (!found) return NotFound("object '" + key + "' does not exist");
      TF_RETURN_IF_ERROR(DeleteConditionHolds(key, if_match, q.Text(0)));
    }
    bool exists = false;
    TF_ASSIGN_OR_RETURN(blobs, TakeBlobs(db, bucket_id, key, &exists));
    if (!exists) return NotFound("object '" + key + "' does not exist");
    TF_ASSIGN_OR_RETURN(Stmt q, db.Prepare("DELETE FROM objects WHERE bucket_id = ? AND key = ?"));
    TF_RETURN_IF_ERROR(q.Bind(1, bucket_id).BindBlob(2, key).Run());
    for (const std::string& blob : blobs) {
      TF_RETURN_IF_ERROR(AddPending(db, PendingBlob{blob, owner, now}));
    }
    return OkStatus();
  }));
  return blobs;
}

}  // namespace tf::store
