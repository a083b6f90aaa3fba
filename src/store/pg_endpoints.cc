// PostgresStore's EndpointStore: inference endpoints.
#include "store/pg_store_impl.h"

namespace tf::store {
namespace {

constexpr const char* kEndpointColumns =
    "SELECT id, project_id, name, state, version, created_at, updated_at, doc FROM endpoints ";

EndpointRecord ReadEndpoint(const PgResult& r, int row) {
  EndpointRecord e;
  e.id = r.Text(row, 0);
  e.project_id = r.Text(row, 1);
  e.name = r.Text(row, 2);
  e.state = r.Text(row, 3);
  e.version = r.Int(row, 4);
  e.created_at = r.Int(row, 5);
  e.updated_at = r.Int(row, 6);
  e.doc_json = r.Text(row, 7);
  return e;
}

// kNotFound or kAborted for an update or delete of `id` that matched no row.
Status Missed(PgConnection& conn, const std::string& id, int64_t expected_version) {
  TF_ASSIGN_OR_RETURN(PgResult now, conn.Exec("SELECT version, name FROM endpoints WHERE id = $1",
                                              PgParams().Add(id)));
  if (now.rows() == 0) return NotFound("endpoint '" + id + "' does not exist");
  return Aborted("endpoint '" + std::string(now.Text(0, 1)) + "' changed meanwhile (version " +
                 std::string(now.Text(0, 0)) + ", expected " + std::to_string(expected_version) +
                 ")");
}

}  // namespace

Status PostgresStore::CreateEndpoint(const EndpointRecord& e) {
  Status s = pool_->Run(PgTxMode::kTransaction, [&](PgConnection& conn) -> Status {
    return conn.Run(
        "INSERT INTO endpoints (id, project_id, name, state, version, created_at, updated_at, "
        "doc) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        PgParams()
            .Add(e.id)
            .Add(e.project_id)
            .Add(e.name)
            .Add(e.state)
            .Add(e.version)
            .Add(e.created_at)
            .Add(e.updated_at)
            .Add(e.doc_json));
  });
  if (s.code() == StatusCode::kAlreadyExists) {
    return AlreadyExists("endpoint '" + e.name + "' exists");
  }
  return s;
}

Result<EndpointRecord> PostgresStore::GetEndpoint(const std::string& project_id,
                                                  const std::string& name) {
  EndpointRecord out;
  TF_RETURN_IF_ERROR(pool_->Run(PgTxMode::kRead, [&](PgConnection& conn) -> Status {
    TF_ASSIGN_OR_RETURN(
        PgResult r, conn.Exec(std::string(kEndpointColumns) + "WHERE project_id = $1 AND name = $2",
                              PgParams().Add(project_id).Add(name)));
    if (r.rows() == 0) return NotFound("endpoint '" + name + "' does not exist");
    out = ReadEndpoint(r, 0);
    return OkStatus();
  }));
  return out;
}

Result<std::vector<EndpointRecord>> PostgresStore::ListEndpoints(const std::string& project_id) {
  std::vector<EndpointRecord> out;
  TF_RETURN_IF_ERROR(pool_->Run(PgTxMode::kRead, [&](PgConnection& conn) -> Status {
    out.clear();
    TF_ASSIGN_OR_RETURN(
        PgResult r, conn.Exec(std::string(kEndpointColumns) + "WHERE $1 = '' OR project_id = $1 "
                                                              "ORDER BY project_id, name",
                              PgParams().Add(project_id)));
    for (int i = 0; i < r.rows(); ++i) out.push_back(ReadEndpoint(r, i));
    return OkStatus();
  }));
  return out;
}

Status PostgresStore::UpdateEndpoint(const EndpointRecord& e, int64_t expected_version) {
  return pool_->Run(PgTxMode::kTransaction, [&](PgConnection& conn) -> Status {
    TF_ASSIGN_OR_RETURN(PgResult r,
                        conn.Exec("UPDATE endpoints SET state = $2, version = $3, "
                                  "updated_at = $4, doc = $5 WHERE id = $1 AND version = $6",
                                  PgParams()
                                      .Add(e.id)
                                      .Add(e.state)
                                      .Add(expected_version + 1)
                                      .Add(e.updated_at)
                                      .Add(e.doc_json)
                                      .Add(expected_version)));
    if (r.affected() == 0) return Missed(conn, e.id, expected_version);
    return OkStatus();
  });
}

Status PostgresStore::DeleteEndpoint(const std::string& id, int64_t expected_version) {
  return pool_->Run(PgTxMode::kTransaction, [&](PgConnection& conn) -> Status {
    TF_ASSIGN_OR_RETURN(PgResult r,
                        conn.Exec("DELETE FROM endpoints WHERE id = $1 AND version = $2",
                                  PgParams().Add(id).Add(expected_version)));
    if (r.affected() == 0) return Missed(conn, id, expected_version);
    return OkStatus();
  });
}

Status PostgresStore::PublishEndpointLoads(const std::string& server_id,
                                           const std::vector<EndpointLoadRecord>& loads,
                                           TimeMs forget_before) {
  return pool_->Run(PgTxMode::kTransaction, [&](PgConnection& conn) -> Status {
    TF_RETURN_IF_ERROR(
        conn.Run("DELETE FROM endpoint_loads WHERE server_id = $1 OR updated_at < $2",
                 PgParams().Add(server_id).Add(forget_before)));
    for (const EndpointLoadRecord& l : loads) {
      TF_RETURN_IF_ERROR(conn.Run(
          "INSERT INTO endpoint_loads (server_id, endpoint_id, arrived, queued, in_flight, "
          "replicas, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7)",
          PgParams()
              .Add(server_id)
              .Add(l.endpoint_id)
              .Add(l.arrived)
              .Add(l.queued)
              .Add(l.in_flight)
              .Add(l.replicas_json)
              .Add(l.updated_at)));
    }
    return OkStatus();
  });
}

Result<std::vector<EndpointLoadRecord>> PostgresStore::ListEndpointLoads(TimeMs since) {
  std::vector<EndpointLoadRecord> out;
  TF_RETURN_IF_ERROR(pool_->Run(PgTxMode::kRead, [&](PgConnection& conn) -> Status {
    out.clear();
    TF_ASSIGN_OR_RETURN(
        PgResult r,
        conn.Exec("SELECT server_id, endpoint_id, arrived, queued, in_flight, replicas, "
                  "updated_at FROM endpoint_loads WHERE updated_at >= $1 "
                  "ORDER BY server_id, endpoint_id",
                  PgParams().Add(since)));
    for (int i = 0; i < r.rows(); ++i) {
      out.push_back(EndpointLoadRecord{std::string(r.Text(i, 0)), std::string(r.Text(i, 1)),
                                       r.Int(i, 2), r.Int(i, 3), r.Int(i, 4),
                                       std::string(r.Text(i, 5)), r.Int(i, 6)});
    }
    return OkStatus();
  }));
  return out;
}

Status PostgresStore::AddEndpointTraffic(const std::vector<EndpointTrafficRecord>& rows,
                                         TimeMs forget_before) {
  return pool_->Run(PgTxMode::kTransaction, [&](PgConnection& conn) -> Status {
    TF_RETURN_IF_ERROR(conn.Run("DELETE FROM endpoint_traffic WHERE bucket_start < $1",
                                PgParams().Add(forget_before)));
    for (const EndpointTrafficRecord& t : rows) {
      TF_RETURN_IF_ERROR(conn.Run(
          "INSERT INTO endpoint_traffic (server_id, endpoint_id, bucket_start, summary) "
          "VALUES ($1, $2, $3, $4) ON CONFLICT (endpoint_id, bucket_start, server_id) "
          "DO UPDATE SET summary = EXCLUDED.summary",
          PgParams().Add(t.server_id).Add(t.endpoint_id).Add(t.bucket_start).Add(t.summary_json)));
    }
    return OkStatus();
  });
}

Result<std::vector<EndpointTrafficRecord>> PostgresStore::ListEndpointTraffic(
    const std::string& endpoint_id, TimeMs since) {
  std::vector<EndpointTrafficRecord> out;
  TF_RETURN_IF_ERROR(pool_->Run(PgTxMode::kRead, [&](PgConnection& conn) -> Status {
    out.clear();
    TF_ASSIGN_OR_RETURN(
        PgResult r,
        conn.Exec("SELECT server_id, endpoint_id, bucket_start, summary FROM endpoint_traffic "
                  "WHERE endpoint_id = $1 AND bucket_start >= $2 "
                  "ORDER BY server_id, bucket_start",
                  PgParams().Add(endpoint_id).Add(since)));
    for (int i = 0; i < r.rows(); ++i) {
      out.push_back(EndpointTrafficRecord{std::string(r.Text(i, 0)), std::string(r.Text(i, 1)),
                                          r.Int(i, 2), std::string(r.Text(i, 3))});
    }
    return OkStatus();
  }));
  return out;
}

}  // namespace tf::store
