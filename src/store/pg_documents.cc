// PostgresStore's DocumentStore: versioned documents of projects, by kind.
#include "store/pg_store_impl.h"

namespace tf::store {
namespace {

constexpr const char* kDocumentColumns =
    "SELECT kind, id, project_id, name, state, version, created_at, updated_at, doc "
    "FROM documents ";

DocumentRecord ReadDocument(const PgResult& r, int row) {
  DocumentRecord d;
  d.kind = r.Text(row, 0);
  d.id = r.Text(row, 1);
  d.project_id = r.Text(row, 2);
  d.name = r.Text(row, 3);
  d.state = r.Text(row, 4);
  d.version = r.Int(row, 5);
  d.created_at = r.Int(row, 6);
  d.updated_at = r.Int(row, 7);
  d.doc_json = r.Text(row, 8);
  return d;
}

// kNotFound or kAborted for an update or delete of `id` that matched no row.
Status MissedDocument(PgConnection& conn, const std::string& id, int64_t expected_version) {
  TF_ASSIGN_OR_RETURN(
      PgResult now,
      conn.Exec("SELECT version, name, kind FROM documents WHERE id = $1", PgParams().Add(id)));
  if (now.rows() == 0) return NotFound("'" + id + "' does not exist");
  return Aborted(std::string(now.Text(0, 2)) + " '" + std::string(now.Text(0, 1)) +
                 "' changed meanwhile (version " + std::string(now.Text(0, 0)) + ", expected " +
                 std::to_string(expected_version) + ")");
}

}  // namespace

Status PostgresStore::CreateDocument(const DocumentRecord& d) {
  Status s = pool_->Run(PgTxMode::kTransaction, [&](PgConnection& conn) -> Status {
    return conn.Run(
        "INSERT INTO documents (kind, id, project_id, name, state, version, created_at, "
        "updated_at, doc) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
        PgParams()
            .Add(d.kind)
            .Add(d.id)
            .Add(d.project_id)
            .Add(d.name)
            .Add(d.state)
            .Add(d.version)
            .Add(d.created_at)
            .Add(d.updated_at)
            .Add(d.doc_json));
  });
  if (s.code() == StatusCode::kAlreadyExists) {
    return AlreadyExists(d.kind + " '" + d.name + "' exists");
  }
  return s;
}

Result<DocumentRecord> PostgresStore::GetDocument(const std::string& kind,
                                                  const std::string& project_id,
                                                  const std::string& name) {
  DocumentRecord out;
  TF_RETURN_IF_ERROR(pool_->Run(PgTxMode::kRead, [&](PgConnection& conn) -> Status {
    TF_ASSIGN_OR_RETURN(PgResult r,
                        conn.Exec(std::string(kDocumentColumns) +
                                      "WHERE kind = $1 AND project_id = $2 AND name = $3",
                                  PgParams().Add(kind).Add(project_id).Add(name)));
    if (r.rows() == 0) return NotFound(kind + " '" + name + "' does not exist");
    out = ReadDocument(r, 0);
    return OkStatus();
  }));
  return out;
}

Result<std::vector<DocumentRecord>> PostgresStore::ListDocuments(
    const std::string& kind, const std::string& project_id,
    const std::vector<std::string>& states) {
  std::string sql =
      std::string(kDocumentColumns) + "WHERE kind = $1 AND ($2 = '' OR project_id = $2)";
  PgParams params;
  params.Add(kind).Add(project_id);
  if (!states.empty()) {
    sql += " AND state = ANY($3::text[])";
    params.AddTextArray(states);
  }
  sql += " ORDER BY project_id, name";
  std::vector<DocumentRecord> out;
  TF_RETURN_IF_ERROR(pool_->Run(PgTxMode::kRead, [&](PgConnection& conn) -> Status {
    out.clear();
    TF_ASSIGN_OR_RETURN(PgResult r, conn.Exec(sql, params));
    for (int i = 0; i < r.rows(); ++i) out.push_back(ReadDocument(r, i));
    return OkStatus();
  }));
  return out;
}

Status PostgresStore::UpdateDocument(const DocumentRecord& d, int64_t expected_version) {
  return pool_->Run(PgTxMode::kTransaction, [&](PgConnection& conn) -> Status {
    TF_ASSIGN_OR_RETURN(PgResult r,
                        conn.Exec("UPDATE documents SET state = $2, version = $3, "
                                  "updated_at = $4, doc = $5 WHERE id = $1 AND version = $6",
                                  PgParams()
                                      .Add(d.id)
                                      .Add(d.state)
                                      .Add(expected_version + 1)
                                      .Add(d.updated_at)
                                      .Add(d.doc_json)
                                      .Add(expected_version)));
    if (r.affected() == 0) return MissedDocument(conn, d.id, expected_version);
    return OkStatus();
  });
}

Status PostgresStore::DeleteDocument(const std::string& id, int64_t expected_version) {
  return pool_->Run(PgTxMode::kTransaction, [&](PgConnection& conn) -> Status {
    TF_ASSIGN_OR_RETURN(PgResult r,
                        conn.Exec("DELETE FROM documents WHERE id = $1 AND version = $2",
                                  PgParams().Add(id).Add(expected_version)));
    if (r.affected() == 0) return MissedDocument(conn, id, expected_version);
    return OkStatus();
  });
}

}  // namespace tf::store
