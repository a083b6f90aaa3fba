// PostgresStore's ObjectStore: buckets, objects' metadata and pending blobs. Keys are BYTEA, so
// that they compare as bytes whatever the database's collation. objects.bucket_id references
// buckets.id: a bucket with objects cannot be deleted, and an object cannot land in a bucket
// deleted meanwhile, even when two servers race.
#include <optional>

#include "store/object_listing.h"
#include "store/pg_store_impl.h"
#include "store/put_condition.h"

namespace tf::store {
namespace {

constexpr const char* kBucketColumns = "SELECT id, project_id, name, created_at FROM buckets ";
constexpr const char* kObjectColumns =
    "SELECT bucket_id, key, size, etag, sha256, content_type, user_metadata, blob_id, "
    "modified_at, headers, checksum FROM objects ";
constexpr std::string_view kForeignKeyViolation = "23503";
// PutObject's insert loses to a concurrent insert of the same key at most this often in a row.
constexpr int kPutAttempts = 10;

Bucket ReadBucket(const PgResult& r, int row) {
  return Bucket{r.Int(row, 0), std::string(r.Text(row, 1)), std::string(r.Text(row, 2)),
                r.Int(row, 3)};
}

ObjectRecord ReadObject(const PgResult& r, int row) {
  ObjectRecord o;
  o.bucket_id = r.Int(row, 0);
  o.key = r.Bytes(row, 1);
  o.size = r.Int(row, 2);
  o.etag = r.Text(row, 3);
  o.sha256 = r.Text(row, 4);
  o.content_type = r.Text(row, 5);
  o.user_metadata = r.Text(row, 6);
  o.blob_id = r.Text(row, 7);
  o.modified_at = r.Int(row, 8);
  o.headers = r.Text(row, 9);
  o.checksum = r.Text(row, 10);
  return o;
}

Status AddPending(PgConnection& conn, const PendingBlob& blob) {
  return conn.Run("INSERT INTO pending_blobs (blob_id, owner, created_at) VALUES ($1, $2, $3)",
                  PgParams().Add(blob.blob_id).Add(blob.owner).Add(blob.created_at));
}

// Within a transaction: writes `o`, returning the blob_id of the object it replaced ("" for one
// kept as segments), or nothing if there was none.
Result<std::optional<std::string>> Upsert(PgConnection& conn, const ObjectRecord& o,
                                          const PutCondition& condition) {
  for (int attempt = 0; attempt < kPutAttempts; ++attempt) {
    // Locks the current row, if any, waiting for a concurrent writer of the same key.
    TF_ASSIGN_OR_RETURN(PgResult current,
                        conn.Exec("SELECT blob_id, etag FROM objects WHERE bucket_id = $1 AND "
                                  "key = $2 FOR UPDATE",
                                  PgParams().Add(o.bucket_id).AddBytes(o.key)));
    // Checked against the locked row, or the lack of one: an insert by a concurrent put of the
    // same key then conflicts below, and the next attempt sees its row.
    TF_RETURN_IF_ERROR(PutConditionHolds(
        o.key, condition,
        current.rows() > 0 ? std::optional<std::string>(current.Text(0, 1)) : std::nullopt));
    if (current.rows() > 0) {
      TF_RETURN_IF_ERROR(conn.Run(
          "UPDATE objects SET size = $3, etag = $4, sha256 = $5, content_type = $6, "
          "user_metadata = $7, blob_id = $8, modified_at = $9, headers = $10, checksum = $11 "
          "WHERE bucket_id = $1 AND key = $2",
          PgParams()
              .Add(o.bucket_id)
              .AddBytes(o.key)
              .Add(o.size)
              .Add(o.etag)
              .Add(o.sha256)
              .Add(o.content_type)
              .Add(o.user_metadata)
              .Add(o.blob_id)
              .Add(o.modified_at)
              .Add(o.headers)
              .Add(o.checksum)));
      return std::optional<std::string>(std::string(current.Text(0, 0)));
    }
    Result<PgResult> inserted = conn.Exec(
        "INSERT INTO objects (bucket_id, key, size, etag, sha256, content_type, user_metadata, "
        "blob_id, modified_at, headers, checksum) "
        "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) "
        "ON CONFLICT (bucket_id, key) DO NOTHING RETURNING 1",
        PgParams()
            .Add(o.bucket_id)
            .AddBytes(o.key)
            .Add(o.size)
            .Add(o.etag)
            .Add(o.sha256)
            .Add(o.content_type)
            .Add(o.user_metadata)
            .Add(o.blob_id)
            .Add(o.modified_at)
            .Add(o.headers)
            .Add(o.checksum));
    if (!inserted.ok() && conn.last_sqlstate() == kForeignKeyViolation) {
      return NotFound("the bucket does not exist");
    }
    TF_RETURN_IF_ERROR(inserted.status());
    if (inserted->rows() > 0) return std::optional<std::string>();
    // Another transaction inserted the key since the SELECT: lock its row and replace it.
  }
  return Aborted("object '" + o.key + "' is being written by too many others at once");
}

// A text[] literal of `ids` (blob ids, checksums), each quoted.
std::string TextArray(const std::vector<std::string>& ids) {
  std::string out = "{";
  for (size_t i = 0; i < ids.size(); ++i) {
    out += i > 0 ? ",\"" : "\"";
    for (char c : ids[i]) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    out += '"';
  }
  return out + "}";
}

// Within a transaction: the blobs of an object whose row said `blob_id` ("": its segments',
// whose rows go).
Result<std::vector<std::string>> TakeBlobs(PgConnection& conn, int64_t bucket_id,
                                           const std::string& key, std::string blob_id) {
  std::vector<std::string> blobs;
  if (!blob_id.empty()) {
    blobs.push_back(std::move(blob_id));
    return blobs;
  }
  TF_ASSIGN_OR_RETURN(PgResult r, conn.Exec("DELETE FROM object_segments WHERE bucket_id = $1 "
                                            "AND key = $2 RETURNING blob_id",
                                            PgParams().Add(bucket_id).AddBytes(key)));
  for (int i = 0; i < r.rows(); ++i) blobs.emplace_back(r.Text(i, 0));
  return blobs;
}

// Within a transaction: writes `o`, its blobs no longer pending, and the blobs of the object it
// replaced pending removal by `owner`. Returns those replaced blobs (none if nothing was).
Result<std::vector<std::string>> PutObjectIn(PgConnection& conn, const ObjectRecord& o,
                                             const std::string& owner,
                                             const PutCondition& condition = {}) {
  if (o.blob_id.empty() == o.segments.empty()) {
    return InvalidArgument("an object's content is one blob or a list of segments, not " +
                           std::string(o.blob_id.empty() ? "neither" : "both"));
  }
  TF_ASSIGN_OR_RETURN(std::optional<std::string> old_blob, Upsert(conn, o, condition));
  std::vector<std::string> replaced;
  if (old_blob) {
    TF_ASSIGN_OR_RETURN(replaced, TakeBlobs(conn, o.bucket_id, o.key, *old_blob));
  }
  if (o.segments.empty()) {
    TF_RETURN_IF_ERROR(
        conn.Run("DELETE FROM pending_blobs WHERE blob_id = $1", PgParams().Add(o.blob_id)));
  } else {
    std::vector<std::string> ids, checksums;
    std::string sizes = "{";
    for (const BlobSegment& segment : o.segments) {
      ids.push_back(segment.blob_id);
      checksums.push_back(segment.checksum);
      sizes += (sizes.size() > 1 ? "," : "") + std::to_string(segment.size);
    }
    sizes += "}";
    const std::string id_array = TextArray(ids);
    // One statement for all segments, numbered from 0 in order.
    TF_RETURN_IF_ERROR(
        conn.Run("INSERT INTO object_segments (bucket_id, key, number, blob_id, size, checksum) "
                 "SELECT $1, $2, (s.n - 1)::int, s.blob_id, s.size, s.checksum "
                 "FROM unnest($3::text[], $4::bigint[], $5::text[]) "
                 "WITH ORDINALITY AS s(blob_id, size, checksum, n)",
                 PgParams()
                     .Add(o.bucket_id)
                     .AddBytes(o.key)
                     .Add(id_array)
                     .Add(sizes)
                     .Add(TextArray(checksums))));
    TF_RETURN_IF_ERROR(conn.Run("DELETE FROM pending_blobs WHERE blob_id = ANY($1::text[])",
                                PgParams().Add(id_array)));
  }
  if (!replaced.empty()) {
    TF_RETURN_IF_ERROR(
        conn.Run("INSERT INTO pending_blobs (blob_id, owner, created_at) "
                 "SELECT b, $2, $3 FROM unnest($1::text[]) AS b",
                 PgParams().Add(TextArray(replaced)).Add(owner).Add(o.modified_at)));
  }
  return replaced;
}

}  // namespace

Result<Bucket> PostgresStore::CreateBucket(Bucket bucket) {
  Status s = pool_->Run(PgTxMode::kAutocommit, [&](PgConnection& conn) -> Status {
    TF_ASSIGN_OR_RETURN(
        PgResult r,
        conn.Exec("INSERT INTO buckets (project_id, name, created_at) "
                  "VALUES ($1, $2, $3) RETURNING id",
                  PgParams().Add(bucket.project_id).Add(bucket.name).Add(bucket.created_at)));
    bucket.id = r.Int(0, 0);
    return OkStatus();
  });
  if (s.code() == StatusCode::kAlreadyExists) {
    return AlreadyExists("bucket '" + bucket.name + "' already exists");
  }
  TF_RETURN_IF_ERROR(s);
  return bucket;
}

Result<Bucket> PostgresStore::GetBucket(const std::string& project_id, const std::string& name) {
  Bucket out;
  TF_RETURN_IF_ERROR(pool_->Run(PgTxMode::kRead, [&](PgConnection& conn) -> Status {
    TF_ASSIGN_OR_RETURN(
        PgResult r, conn.Exec(std::string(kBucketColumns) + "WHERE project_id = $1 AND name = $2",
                              PgParams().Add(project_id).Add(name)));
    if (r.rows() == 0) return NotFound("bucket '" + name + "' does not exist");
    out = ReadBucket(r, 0);
    return OkStatus();
  }));
  return out;
}

Result<std::vector<Bucket>> PostgresStore::ListBuckets(const std::string& project_id) {
  std::vector<Bucket> out;
  TF_RETURN_IF_ERROR(pool_->Run(PgTxMode::kRead, [&](PgConnection& conn) -> Status {
    out.clear();
    TF_ASSIGN_OR_RETURN(
        PgResult r, conn.Exec(std::string(kBucketColumns) + "WHERE project_id = $1 ORDER BY name",
                              PgParams().Add(project_id)));
    for (int i = 0; i < r.rows(); ++i) out.push_back(ReadBucket(r, i));
    return OkStatus();
  }));
  return out;
}

Status PostgresStore::DeleteBucket(int64_t bucket_id) {
  return pool_->Run(PgTxMode::kAutocommit, [&](PgConnection& conn) -> Status {
    Result<PgResult> r = conn.Exec("DELETE FROM buckets WHERE id = $1", PgParams().Add(bucket_id));
    if (!r.ok() && conn.last_sqlstate() == kForeignKeyViolation) {
      return FailedPrecondition("the bucket is not empty");
    }
    TF_RETURN_IF_ERROR(r.status());
    if (r->affected() == 0) {
      return NotFound("bucket " + std::to_string(bucket_id) + " does not exist");
    }
    return OkStatus();
  });
}

Status PostgresStore::AddPendingBlob(const PendingBlob& blob) {
  return pool_->Run(PgTxMode::kAutocommit,
                    [&](PgConnection& conn) { return AddPending(conn, blob); });
}

Result<std::vector<PendingBlob>> PostgresStore::ListPendingBlobs(const std::string& owner) {
  std::vector<PendingBlob> out;
  TF_RETURN_IF_ERROR(pool_->Run(PgTxMode::kRead, [&](PgConnection& conn) -> Status {
    out.clear();
    // Parts' blobs stay pending while their rows hold them. A segment's blob is never
    // pending (its row goes when the segment's comes); should one be, it is live all the same.
    TF_ASSIGN_OR_RETURN(
        PgResult r,
        conn.Exec("SELECT blob_id, owner, created_at FROM pending_blobs "
                  "WHERE owner = $1 AND blob_id NOT IN (SELECT blob_id FROM multipart_parts) "
                  "AND NOT EXISTS (SELECT 1 FROM object_segments s "
                  "WHERE s.blob_id = pending_blobs.blob_id) "
                  "ORDER BY created_at, blob_id",
                  PgParams().Add(owner)));
    for (int i = 0; i < r.rows(); ++i) {
      out.push_back(PendingBlob{std::string(r.Text(i, 0)), std::string(r.Text(i, 1)), r.Int(i, 2)});
    }
    return OkStatus();
  }));
  return out;
}

Status PostgresStore::RemovePendingBlob(const std::string& blob_id) {
  return pool_->Run(PgTxMode::kAutocommit, [&](PgConnection& conn) {
    return conn.Run("DELETE FROM pending_blobs WHERE blob_id = $1", PgParams().Add(blob_id));
  });
}

Result<std::vector<std::string>> PostgresStore::PutObject(const ObjectRecord& o,
                                                          const std::string& owner,
                                                          const PutCondition& condition) {
  std::vector<std::string> replaced;
  TF_RETURN_IF_ERROR(pool_->Run(PgTxMode::kTransaction, [&](PgConnection& conn) -> Status {
    TF_ASSIGN_OR_RETURN(replaced, PutObjectIn(conn, o, owner, condition));
    return OkStatus();
  }));
  return replaced;
}

Result<std::vector<std::string>> PostgresStore::PutObjectCompletingUpload(
    const ObjectRecord& o, const std::string& owner, const std::string& upload_id,
    const PutCondition& condition) {
  std::vector<std::string> replaced;
  TF_RETURN_IF_ERROR(pool_->Run(PgTxMode::kTransaction, [&](PgConnection& conn) -> Status {
    // Deleting the upload first locks its row: a second completion waits, then finds nothing.
    // Its parts go with it (ON DELETE CASCADE).
    TF_ASSIGN_OR_RETURN(PgResult gone,
                        conn.Exec("DELETE FROM multipart_uploads WHERE upload_id = $1 "
                                  "RETURNING upload_id",
                                  PgParams().Add(upload_id)));
    if (gone.rows() == 0) return NotFound("multipart upload '" + upload_id + "' does not exist");
    TF_ASSIGN_OR_RETURN(replaced, PutObjectIn(conn, o, owner, condition));
    return OkStatus();
  }));
  return replaced;
}

Result<ObjectRecord> PostgresStore::GetObject(int64_t bucket_id, const std::string& key) {
  ObjectRecord out;
  TF_RETURN_IF_ERROR(pool_->Run(PgTxMode::kRead, [&](PgConnection& conn) -> Status {
    TF_ASSIGN_OR_RETURN(PgResult r,
                        conn.Exec(std::string(kObjectColumns) + "WHERE bucket_id = $1 AND key = $2",
                                  PgParams().Add(bucket_id).AddBytes(key)));
    if (r.rows() == 0) return NotFound("object '" + key + "' does not exist");
    out = ReadObject(r, 0);
    if (!out.blob_id.empty()) return OkStatus();
    TF_ASSIGN_OR_RETURN(PgResult segments,
                        conn.Exec("SELECT blob_id, size, checksum FROM object_segments "
                                  "WHERE bucket_id = $1 AND key = $2 ORDER BY number",
                                  PgParams().Add(bucket_id).AddBytes(key)));
    for (int i = 0; i < segments.rows(); ++i) {
      out.segments.push_back(BlobSegment{std::string(segments.Text(i, 0)), segments.Int(i, 1),
                                         std::string(segments.Text(i, 2))});
    }
    return OkStatus();
  }));
  return out;
}

Result<ObjectListing> PostgresStore::ListObjects(int64_t bucket_id,
                                                 const ListObjectsOptions& options) {
  Result<ObjectListing> out = ObjectListing{};
  TF_RETURN_IF_ERROR(pool_->Run(PgTxMode::kRead, [&](PgConnection& conn) -> Status {
    auto fetch = [&](const KeyRange& range, int limit) -> Result<std::vector<ObjectRecord>> {
      std::string sql = std::string(kObjectColumns) + "WHERE bucket_id = $1 AND key " +
                        (range.inclusive ? ">=" : ">") + " $2 ";
      PgParams params;
      params.Add(bucket_id).AddBytes(range.from);
      if (!range.before.empty()) {
        sql += "AND key < $3 ORDER BY key LIMIT $4";
        params.AddBytes(range.before);
      } else {
        sql += "ORDER BY key LIMIT $3";
      }
      params.Add(int64_t{limit});
      TF_ASSIGN_OR_RETURN(PgResult r, conn.Exec(sql, params));
      std::vector<ObjectRecord> rows;
      for (int i = 0; i < r.rows(); ++i) rows.push_back(ReadObject(r, i));
      return rows;
    };
    out = ListObjectsWith(options, fetch);
    return out.status();
  }));
  return out;
}

Result<std::vector<std::string>> PostgresStore::DeleteObject(int64_t bucket_id,
                                                             const std::string& key,
                                                             const std::string& owner, TimeMs now,
                                                             const std::string& if_match) {
  std::vector<std::string> blobs;
  TF_RETURN_IF_ERROR(pool_->Run(PgTxMode::kTransaction, [&](PgConnection& conn) -> Status {
    TF_ASSIGN_OR_RETURN(
        PgResult r, conn.Exec("SELECT blob_id, etag FROM objects WHERE bucket_id = $1 AND key = $2 "
                              "FOR UPDATE",
                              PgParams().Add(bucket_id).AddBytes(key)));
    if (r.rows() == 0) return NotFound("object '" + key + "' does not exist");
    TF_RETURN_IF_ERROR(DeleteConditionHolds(key, if_match, std::string(r.Text(0, 1))));
    TF_ASSIGN_OR_RETURN(blobs, TakeBlobs(conn, bucket_id, key, std::string(r.Text(0, 0))));
    TF_RETURN_IF_ERROR(conn.Run("DELETE FROM objects WHERE bucket_id = $1 AND key = $2",
                                PgParams().Add(bucket_id).AddBytes(key)));
    return conn.Run(
        "INSERT INTO pending_blobs (blob_id, owner, created_at) "
        "SELECT b, $2, $3 FROM unnest($1::text[]) AS b",
        PgParams().Add(TextArray(blobs)).Add(owner).Add(now));
  }));
  return blobs;
}

}  // namespace tf::store
