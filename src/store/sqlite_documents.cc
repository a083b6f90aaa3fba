// SqliteStore's DocumentStore: versioned documents of projects, by kind.
#include "store/sqlite_store_impl.h"

namespace tf::store {
namespace {

constexpr const char* kDocumentColumns =
    "SELECT kind, id, project_id, name, state, version, created_at, updated_at, doc "
    "FROM documents ";

DocumentRecord ReadDocument(const Stmt& q) {
  return DocumentRecord{q.Text(0), q.Text(1), q.Text(2), q.Text(3), q.Text(4),
                        q.Int(5),  q.Int(6),  q.Int(7),  q.Text(8)};
}

// kNotFound or kAborted for an update or delete of `id` that matched no row.
Status MissedDocument(SqliteDb& db, const std::string& id, int64_t expected_version) {
  TF_ASSIGN_OR_RETURN(Stmt exists,
                      db.Prepare("SELECT version, name, kind FROM documents WHERE id = ?"));
  TF_ASSIGN_OR_RETURN(bool row, exists.Bind(1, id).Step());
  if (!row) return NotFound("'" + id + "' does not exist");
  return Aborted(exists.Text(2) + " '" + exists.Text(1) + "' changed meanwhile (version " +
                 std::to_string(exists.Int(0)) + ", expected " + std::to_string(expected_version) +
                 ")");
}

}  // namespace

Status SqliteStore::CreateDocument(const DocumentRecord& d) {
  return writer_->Write([&](SqliteDb& db) -> Status {
    TF_ASSIGN_OR_RETURN(Stmt q, db.Prepare("INSERT INTO documents (kind, id, project_id, name, "
                                           "state, version, created_at, updated_at, doc) "
                                           "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"));
    Status s = q.Bind(1, d.kind)
                   .Bind(2, d.id)
                   .Bind(3, d.project_id)
                   .Bind(4, d.name)
                   .Bind(5, d.state)
                   .Bind(6, d.version)
                   .Bind(7, d.created_at)
                   .Bind(8, d.updated_at)
                   .Bind(9, d.doc_json)
                   .Run();
    if (s.code() == StatusCode::kAlreadyExists) {
      return AlreadyExists(d.kind + " '" + d.name + "' exists");
    }
    return s;
  });
}

Result<DocumentRecord> SqliteStore::GetDocument(const std::string& kind,
                                                const std::string& project_id,
                                                const std::string& name) {
  DocumentRecord out;
  TF_RETURN_IF_ERROR(readers_.With([&](SqliteDb& db) -> Status {
    TF_ASSIGN_OR_RETURN(Stmt q, db.Prepare(std::string(kDocumentColumns) +
                                           "WHERE kind = ? AND project_id = ? AND name = ?"));
    TF_ASSIGN_OR_RETURN(bool row, q.Bind(1, kind).Bind(2, project_id).Bind(3, name).Step());
    if (!row) return NotFound(kind + " '" + name + "' does not exist");
    out = ReadDocument(q);
    return OkStatus();
  }));
  return out;
}

Result<std::vector<DocumentRecord>> SqliteStore::ListDocuments(
    const std::string& kind, const std::string& project_id,
    const std::vector<std::string>& states) {
  std::string sql = std::string(kDocumentColumns) + "WHERE kind = ? AND (? = '' OR project_id = ?)";
  if (!states.empty()) {
    sql += " AND state IN (";
    for (size_t i = 0; i < states.size(); ++i) sql += i == 0 ? "?" : ", ?";
    sql += ")";
  }
  sql += " ORDER BY project_id, name";
  std::vector<DocumentRecord> out;
  TF_RETURN_IF_ERROR(readers_.With([&](SqliteDb& db) -> Status {
    TF_ASSIGN_OR_RETURN(Stmt q, db.Prepare(sql));
    q.Bind(1, kind).Bind(2, project_id).Bind(3, project_id);
    for (size_t i = 0; i < states.size(); ++i) q.Bind(static_cast<int>(4 + i), states[i]);
    for (;;) {
      TF_ASSIGN_OR_RETURN(bool row, q.Step());
      if (!row) return OkStatus();
      out.push_back(ReadDocument(q));
    }
  }));
  return out;
}

Status SqliteStore::UpdateDocument(const DocumentRecord& d, int64_t expected_version) {
  return writer_->Write([&](SqliteDb& db) -> Status {
    TF_ASSIGN_OR_RETURN(Stmt q, db.Prepare("UPDATE documents SET state = ?, version = ?, "
                                           "updated_at = ?, doc = ? WHERE id = ? AND version = ?"));
    TF_RETURN_IF_ERROR(q.Bind(1, d.state)
                           .Bind(2, expected_version + 1)
                           .Bind(3, d.updated_at)
                           .Bind(4, d.doc_json)
                           .Bind(5, d.id)
                           .Bind(6, expected_version)
                           .Run());
    if (db.Changes() == 0) return MissedDocument(db, d.id, expected_version);
    return OkStatus();
  });
}

Status SqliteStore::DeleteDocument(const std::string& id, int64_t expected_version) {
  return writer_->Write([&](SqliteDb& db) -> Status {
    TF_ASSIGN_OR_RETURN(Stmt q, db.Prepare("DELETE FROM documents WHERE id = ? AND version = ?"));
    TF_RETURN_IF_ERROR(q.Bind(1, id).Bind(2, expected_version).Run());
    if (db.Changes() == 0) return MissedDocument(db, id, expected_version);
    return OkStatus();
  });
}

}  // namespace tf::store
