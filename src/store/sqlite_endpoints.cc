// SqliteStore's EndpointStore: inference endpoints.
#include "store/sqlite_store_impl.h"

namespace tf::store {
namespace {

constexpr const char* kEndpointColumns =
    "SELECT id, project_id, name, state, version, created_at, updated_at, doc FROM endpoints ";

EndpointRecord ReadEndpoint(const Stmt& q) {
  return EndpointRecord{q.Text(0), q.Text(1), q.Text(2), q.Text(3),
                        q.Int(4),  q.Int(5),  q.Int(6),  q.Text(7)};
}

// kNotFound or kAborted for an update or delete of `id` that matched no row.
Status Missed(SqliteDb& db, const std::string& id, int64_t expected_version) {
  TF_ASSIGN_OR_RETURN(Stmt exists, db.Prepare("SELECT version, name FROM endpoints WHERE id = ?"));
  TF_ASSIGN_OR_RETURN(bool row, exists.Bind(1, id).Step());
  if (!row) return NotFound("endpoint '" + id + "' does not exist");
  return Aborted("endpoint '" + exists.Text(1) + "' changed meanwhile (version " +
                 std::to_string(exists.Int(0)) + ", expected " + std::to_string(expected_version) +
                 ")");
}

}  // namespace

Status SqliteStore::CreateEndpoint(const EndpointRecord& e) {
  return writer_->Write([&](SqliteDb& db) -> Status {
    TF_ASSIGN_OR_RETURN(Stmt q, db.Prepare("INSERT INTO endpoints (id, project_id, name, state, "
                                           "version, created_at, updated_at, doc) "
                                           "VALUES (?, ?, ?, ?, ?, ?, ?, ?)"));
    Status s = q.Bind(1, e.id)
                   .Bind(2, e.project_id)
                   .Bind(3, e.name)
                   .Bind(4, e.state)
                   .Bind(5, e.version)
                   .Bind(6, e.created_at)
                   .Bind(7, e.updated_at)
                   .Bind(8, e.doc_json)
                   .Run();
    if (s.code() == StatusCode::kAlreadyExists) {
      return AlreadyExists("endpoint '" + e.name + "' exists");
    }
    return s;
  });
}

Result<EndpointRecord> SqliteStore::GetEndpoint(const std::string& project_id,
                                                const std::string& name) {
  EndpointRecord out;
  TF_RETURN_IF_ERROR(readers_.With([&](SqliteDb& db) -> Status {
    TF_ASSIGN_OR_RETURN(
        Stmt q, db.Prepare(std::string(kEndpointColumns) + "WHERE project_id = ? AND name = ?"));
    TF_ASSIGN_OR_RETURN(bool row, q.Bind(1, project_id).Bind(2, name).Step());
    if (!row) return NotFound("endpoint '" + name + "' does not exist");
    out = ReadEndpoint(q);
    return OkStatus();
  }));
  return out;
}

Result<std::vector<EndpointRecord>> SqliteStore::ListEndpoints(const std::string& project_id) {
  std::vector<EndpointRecord> out;
  TF_RETURN_IF_ERROR(readers_.With([&](SqliteDb& db) -> Status {
    TF_ASSIGN_OR_RETURN(Stmt q,
                        db.Prepare(std::string(kEndpointColumns) + "WHERE ? = '' OR project_id = ? "
                                                                   "ORDER BY project_id, name"));
    q.Bind(1, project_id).Bind(2, project_id);
    for (;;) {
      TF_ASSIGN_OR_RETURN(bool row, q.Step());
      if (!row) return OkStatus();
      out.push_back(ReadEndpoint(q));
    }
  }));
  return out;
}

Status SqliteStore::UpdateEndpoint(const EndpointRecord& e, int64_t expected_version) {
  return writer_->Write([&](SqliteDb& db) -> Status {
    TF_ASSIGN_OR_RETURN(Stmt q, db.Prepare("UPDATE endpoints SET state = ?, version = ?, "
                                           "updated_at = ?, doc = ? WHERE id = ? AND version = ?"));
    TF_RETURN_IF_ERROR(q.Bind(1, e.state)
                           .Bind(2, expected_version + 1)
                           .Bind(3, e.updated_at)
                           .Bind(4, e.doc_json)
                           .Bind(5, e.id)
                           .Bind(6, expected_version)
                           .Run());
    if (db.Changes() == 0) return Missed(db, e.id, expected_version);
    return OkStatus();
  });
}

Status SqliteStore::DeleteEndpoint(const std::string& id, int64_t expected_version) {
  return writer_->Write([&](SqliteDb& db) -> Status {
    TF_ASSIGN_OR_RETURN(Stmt q, db.Prepare("DELETE FROM endpoints WHERE id = ? AND version = ?"));
    TF_RETURN_IF_ERROR(q.Bind(1, id).Bind(2, expected_version).Run());
    if (db.Changes() == 0) return Missed(db, id, expected_version);
    return OkStatus();
  });
}

Status SqliteStore::PublishEndpointLoads(const std::string& server_id,
                                         const std::vector<EndpointLoadRecord>& loads,
                                         TimeMs forget_before) {
  return writer_->Write([&](SqliteDb& db) -> Status {
    TF_ASSIGN_OR_RETURN(
        Stmt forget,
        db.Prepare("DELETE FROM endpoint_loads WHERE server_id = ? OR updated_at < ?"));
    TF_RETURN_IF_ERROR(forget.Bind(1, server_id).Bind(2, forget_before).Run());
    for (const EndpointLoadRecord& l : loads) {
      TF_ASSIGN_OR_RETURN(Stmt q, db.Prepare("INSERT INTO endpoint_loads (server_id, endpoint_id, "
                                             "arrived, queued, in_flight, replicas, updated_at) "
                                             "VALUES (?, ?, ?, ?, ?, ?, ?)"));
      TF_RETURN_IF_ERROR(q.Bind(1, server_id)
                             .Bind(2, l.endpoint_id)
                             .Bind(3, l.arrived)
                             .Bind(4, l.queued)
                             .Bind(5, l.in_flight)
                             .Bind(6, l.replicas_json)
                             .Bind(7, l.updated_at)
                             .Run());
    }
    return OkStatus();
  });
}

Result<std::vector<EndpointLoadRecord>> SqliteStore::ListEndpointLoads(TimeMs since) {
  std::vector<EndpointLoadRecord> out;
  TF_RETURN_IF_ERROR(readers_.With([&](SqliteDb& db) -> Status {
    TF_ASSIGN_OR_RETURN(Stmt q,
                        db.Prepare("SELECT server_id, endpoint_id, arrived, queued, "
                                   "in_flight, replicas, updated_at FROM endpoint_loads "
                                   "WHERE updated_at >= ? ORDER BY server_id, endpoint_id"));
    q.Bind(1, since);
    for (;;) {
      TF_ASSIGN_OR_RETURN(bool row, q.Step());
      if (!row) return OkStatus();
      out.push_back(EndpointLoadRecord{q.Text(0), q.Text(1), q.Int(2), q.Int(3), q.Int(4),
                                       q.Text(5), q.Int(6)});
    }
  }));
  return out;
}

Status SqliteStore::AddEndpointTraffic(const std::vector<EndpointTrafficRecord>& rows,
                                       TimeMs forget_before) {
  return writer_->Write([&](SqliteDb& db) -> Status {
    TF_ASSIGN_OR_RETURN(Stmt forget,
                        db.Prepare("DELETE FROM endpoint_traffic WHERE bucket_start < ?"));
    TF_RETURN_IF_ERROR(forget.Bind(1, forget_before).Run());
    for (const EndpointTrafficRecord& t : rows) {
      TF_ASSIGN_OR_RETURN(Stmt q, db.Prepare("INSERT OR REPLACE INTO endpoint_traffic (server_id, "
                                             "endpoint_id, bucket_start, summary) "
                                             "VALUES (?, ?, ?, ?)"));
      TF_RETURN_IF_ERROR(q.Bind(1, t.server_id)
                             .Bind(2, t.endpoint_id)
                             .Bind(3, t.bucket_start)
                             .Bind(4, t.summary_json)
                             .Run());
    }
    return OkStatus();
  });
}

Result<std::vector<EndpointTrafficRecord>> SqliteStore::ListEndpointTraffic(
    const std::string& endpoint_id, TimeMs since) {
  std::vector<EndpointTrafficRecord> out;
  TF_RETURN_IF_ERROR(readers_.With([&](SqliteDb& db) -> Status {
    TF_ASSIGN_OR_RETURN(Stmt q, db.Prepare("SELECT server_id, endpoint_id, bucket_start, summary "
                                           "FROM endpoint_traffic WHERE endpoint_id = ? AND "
                                           "bucket_start >= ? ORDER BY server_id, bucket_start"));
    q.Bind(1, endpoint_id).Bind(2, since);
    for (;;) {
      TF_ASSIGN_OR_RETURN(bool row, q.Step());
      if (!row) return OkStatus();
      out.push_back(EndpointTrafficRecord{q.Text(0), q.Text(1), q.Int(2), q.Text(3)});
    }
  }));
  return out;
}

}  // namespace tf::store
