// PostgresStore's multipart uploads in progress and their parts (store.h, ObjectStore). Keys are
// BYTEA, like objects' keys; a part row goes with its upload (ON DELETE CASCADE).
#include <map>

#include "store/pg_store_impl.h"

namespace tf::store {

Status PostgresStore::AddMultipartUpload(const MultipartUploadRecord& u) {
  return pool_->Run(PgTxMode::kAutocommit, [&](PgConnection& conn) -> Status {
    Status s = conn.Run(
        "INSERT INTO multipart_uploads (upload_id, owner, project_id, bucket, key, content_type, "
        "user_metadata, initiated_at, headers, checksum_algorithm, checksum_type) "
        "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
        PgParams()
            .Add(u.upload_id)
            .Add(u.owner)
            .Add(u.project_id)
            .Add(u.bucket)
            .AddBytes(u.key)
            .Add(u.content_type)
            .Add(u.user_metadata)
            .Add(u.initiated_at)
            .Add(u.headers)
            .Add(u.checksum_algorithm)
            .Add(u.checksum_type));
    if (s.code() == StatusCode::kAlreadyExists) {
      return AlreadyExists("multipart upload '" + u.upload_id + "' already exists");
    }
    return s;
  });
}

Result<std::string> PostgresStore::PutMultipartPart(const MultipartPartRecord& p) {
  std::string replaced;
  TF_RETURN_IF_ERROR(pool_->Run(PgTxMode::kTransaction, [&](PgConnection& conn) -> Status {
    replaced.clear();
    // Locks the upload's row, so that parts of one number written at once queue here.
    TF_ASSIGN_OR_RETURN(PgResult upload,
                        conn.Exec("SELECT 1 FROM multipart_uploads WHERE upload_id = $1 FOR UPDATE",
                                  PgParams().Add(p.upload_id)));
    if (upload.rows() == 0) {
      return NotFound("multipart upload '" + p.upload_id + "' does not exist");
    }
    TF_ASSIGN_OR_RETURN(PgResult old,
                        conn.Exec("DELETE FROM multipart_parts WHERE upload_id = $1 AND "
                                  "number = $2 RETURNING blob_id",
                                  PgParams().Add(p.upload_id).Add(int64_t{p.number})));
    if (old.rows() > 0) replaced = std::string(old.Text(0, 0));
    return conn.Run(
        "INSERT INTO multipart_parts (upload_id, number, size, etag, blob_id, modified_at, "
        "checksum) VALUES ($1, $2, $3, $4, $5, $6, $7)",
        PgParams()
            .Add(p.upload_id)
            .Add(int64_t{p.number})
            .Add(p.size)
            .Add(p.etag)
            .Add(p.blob_id)
            .Add(p.modified_at)
            .Add(p.checksum));
  }));
  return replaced;
}

Result<std::vector<MultipartUploadRecord>> PostgresStore::ListMultipartUploads(
    const std::string& owner) {
  std::vector<MultipartUploadRecord> out;
  TF_RETURN_IF_ERROR(pool_->Run(PgTxMode::kRead, [&](PgConnection& conn) -> Status {
    out.clear();
    TF_ASSIGN_OR_RETURN(PgResult r,
                        conn.Exec("SELECT upload_id, owner, project_id, bucket, key, content_type, "
                                  "user_metadata, initiated_at, headers, checksum_algorithm, "
                                  "checksum_type "
                                  "FROM multipart_uploads "
                                  "WHERE owner = $1 ORDER BY upload_id",
                                  PgParams().Add(owner)));
    std::map<std::string, size_t> at;  // upload id -> index in out
    for (int i = 0; i < r.rows(); ++i) {
      at[std::string(r.Text(i, 0))] = out.size();
      out.push_back(MultipartUploadRecord{std::string(r.Text(i, 0)),
                                          std::string(r.Text(i, 1)),
                                          std::string(r.Text(i, 2)),
                                          std::string(r.Text(i, 3)),
                                          r.Bytes(i, 4),
                                          std::string(r.Text(i, 5)),
                                          std::string(r.Text(i, 6)),
                                          r.Int(i, 7),
                                          {},
                                          std::string(r.Text(i, 8)),
                                          std::string(r.Text(i, 9)),
                                          std::string(r.Text(i, 10))});
    }
    TF_ASSIGN_OR_RETURN(
        PgResult parts,
        conn.Exec("SELECT p.upload_id, p.number, p.size, p.etag, p.blob_id, p.modified_at, "
                  "p.checksum "
                  "FROM multipart_parts p JOIN multipart_uploads u USING (upload_id) "
                  "WHERE u.owner = $1 ORDER BY p.upload_id, p.number",
                  PgParams().Add(owner)));
    for (int i = 0; i < parts.rows(); ++i) {
      auto it = at.find(std::string(parts.Text(i, 0)));
      if (it == at.end()) continue;
      out[it->second].parts.push_back(MultipartPartRecord{
          std::string(parts.Text(i, 0)), static_cast<int>(parts.Int(i, 1)), parts.Int(i, 2),
          std::string(parts.Text(i, 3)), std::string(parts.Text(i, 4)), parts.Int(i, 5),
          std::string(parts.Text(i, 6))});
    }
    return OkStatus();
  }));
  return out;
}

Status PostgresStore::RemoveMultipartUpload(const std::string& upload_id) {
  return pool_->Run(PgTxMode::kAutocommit, [&](PgConnection& conn) {
    return conn.Run("DELETE FROM multipart_uploads WHERE upload_id = $1",
                    PgParams().Add(upload_id));
  });
}

}  // namespace tf::store
