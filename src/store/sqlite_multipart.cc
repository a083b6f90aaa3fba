// SqliteStore's multipart uploads in progress and their parts (store.h, ObjectStore). Keys are
// bound as BLOBs, like objects' keys.
#include <map>

#include "store/sqlite_store_impl.h"

namespace tf::store {

Status SqliteStore::AddMultipartUpload(const MultipartUploadRecord& u) {
  return writer_->Write([&](SqliteDb& db) -> Status {
    TF_ASSIGN_OR_RETURN(
        Stmt q, db.Prepare("INSERT INTO multipart_uploads (upload_id, owner, project_id, "
                           "bucket, key, content_type, user_metadata, initiated_at, headers, "
                           "checksum_algorithm, checksum_type) "
                           "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"));
    Status s = q.Bind(1, u.upload_id)
                   .Bind(2, u.owner)
                   .Bind(3, u.project_id)
                   .Bind(4, u.bucket)
                   .BindBlob(5, u.key)
                   .Bind(6, u.content_type)
                   .Bind(7, u.user_metadata)
                   .Bind(8, u.initiated_at)
                   .Bind(9, u.headers)
                   .Bind(10, u.checksum_algorithm)
                   .Bind(11, u.checksum_type)
                   .Run();
    if (s.code() == StatusCode::kAlreadyExists) {
      return AlreadyExists("multipart upload '" + u.upload_id + "' already exists");
    }
    return s;
  });
}

Result<std::string> SqliteStore::PutMultipartPart(const MultipartPartRecord& p) {
  std::string replaced;
  TF_RETURN_IF_ERROR(writer_->Write([&](SqliteDb& db) -> Status {
    replaced.clear();
    TF_ASSIGN_OR_RETURN(Stmt upload,
                        db.Prepare("SELECT 1 FROM multipart_uploads WHERE upload_id = ?"));
    TF_ASSIGN_OR_RETURN(bool exists, upload.Bind(1, p.upload_id).Step());
    if (!exists) return NotFound("multipart upload '" + p.upload_id + "' does not exist");
    TF_ASSIGN_OR_RETURN(Stmt old, db.Prepare("SELECT blob_id FROM multipart_parts "
                                             "WHERE upload_id = ? AND number = ?"));
    TF_ASSIGN_OR_RETURN(bool had, old.Bind(1, p.upload_id).Bind(2, int64_t{p.number}).Step());
    if (had) replaced = old.Text(0);
    TF_ASSIGN_OR_RETURN(Stmt q, db.Prepare("INSERT OR REPLACE INTO multipart_parts (upload_id, "
                                           "number, size, etag, blob_id, modified_at, checksum) "
                                           "VALUES (?, ?, ?, ?, ?, ?, ?)"));
    return q.Bind(1, p.upload_id)
        .Bind(2, int64_t{p.number})
        .Bind(3, p.size)
        .Bind(4, p.etag)
        .Bind(5, p.blob_id)
        .Bind(6, p.modified_at)
        .Bind(7, p.checksum)
        .Run();
  }));
  return replaced;
}

Result<std::vector<MultipartUploadRecord>> SqliteStore::ListMultipartUploads(
    const std::string& owner) {
  std::vector<MultipartUploadRecord> out;
  TF_RETURN_IF_ERROR(readers_.With([&](SqliteDb& db) -> Status {
    out.clear();
    std::map<std::string, size_t> at;  // upload id -> index in out
    TF_ASSIGN_OR_RETURN(Stmt q, db.Prepare("SELECT upload_id, owner, project_id, bucket, key, "
                                           "content_type, user_metadata, initiated_at, headers, "
                                           "checksum_algorithm, checksum_type FROM "
                                           "multipart_uploads WHERE owner = ? ORDER BY upload_id"));
    q.Bind(1, owner);
    for (;;) {
      TF_ASSIGN_OR_RETURN(bool row, q.Step());
      if (!row) break;
      at[q.Text(0)] = out.size();
      out.push_back(MultipartUploadRecord{q.Text(0),
                                          q.Text(1),
                                          q.Text(2),
                                          q.Text(3),
                                          q.Text(4),
                                          q.Text(5),
                                          q.Text(6),
                                          q.Int(7),
                                          {},
                                          q.Text(8),
                                          q.Text(9),
                                          q.Text(10)});
    }
    TF_ASSIGN_OR_RETURN(
        Stmt parts,
        db.Prepare("SELECT p.upload_id, p.number, p.size, p.etag, p.blob_id, p.modified_at, "
                   "p.checksum "
                   "FROM multipart_parts p JOIN multipart_uploads u USING (upload_id) "
                   "WHERE u.owner = ? ORDER BY p.upload_id, p.number"));
    parts.Bind(1, owner);
    for (;;) {
      TF_ASSIGN_OR_RETURN(bool row, parts.Step());
      if (!row) return OkStatus();
      auto it = at.find(parts.Text(0));
      if (it == at.end()) continue;  // an upload added between the two reads
      out[it->second].parts.push_back(
          MultipartPartRecord{parts.Text(0), static_cast<int>(parts.Int(1)), parts.Int(2),
                              parts.Text(3), parts.Text(4), parts.Int(5), parts.Text(6)});
    }
  }));
  return out;
}

Status SqliteStore::RemoveMultipartUpload(const std::string& upload_id) {
  return writer_->Write([&](SqliteDb& db) -> Status {
    TF_ASSIGN_OR_RETURN(Stmt parts, db.Prepare("DELETE FROM multipart_parts WHERE upload_id = ?"));
    TF_RETURN_IF_ERROR(parts.Bind(1, upload_id).Run());
    TF_ASSIGN_OR_RETURN(Stmt q, db.Prepare("DELETE FROM multipart_uploads WHERE upload_id = ?"));
    return q.Bind(1, upload_id).Run();
  });
}

}  // namespace tf::store
