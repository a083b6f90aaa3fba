// PostgresStore's JobStore: managed jobs, their events and metrics.
#include <cstdio>
#include <cstdlib>

#include "store/pg_store_impl.h"

namespace tf::store {
namespace {

constexpr const char* kJobColumns =
    "SELECT id, project_id, name, state, version, priority, created_at, updated_at, doc "
    "FROM jobs ";

JobRecord ReadJob(const PgResult& r, int row) {
  JobRecord j;
  j.id = r.Text(row, 0);
  j.project_id = r.Text(row, 1);
  j.name = r.Text(row, 2);
  j.state = r.Text(row, 3);
  j.version = r.Int(row, 4);
  j.priority = static_cast<int>(r.Int(row, 5));
  j.created_at = r.Int(row, 6);
  j.updated_at = r.Int(row, 7);
  j.doc_json = r.Text(row, 8);
  return j;
}

Status AddEvent(PgConnection& conn, const JobEvent& e) {
  return conn.Run("INSERT INTO job_events (job_id, at, kind, message) VALUES ($1, $2, $3, $4)",
                  PgParams().Add(e.job_id).Add(e.at).Add(e.kind).Add(e.message));
}

std::string FormatValue(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

}  // namespace

Status PostgresStore::CreateJob(const JobRecord& job, const JobEvent& first) {
  Status s = pool_->Run(PgTxMode::kTransaction, [&](PgConnection& conn) -> Status {
    TF_RETURN_IF_ERROR(
        conn.Run("INSERT INTO jobs (id, project_id, name, state, version, priority, created_at, "
                 "updated_at, doc) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
                 PgParams()
                     .Add(job.id)
                     .Add(job.project_id)
                     .Add(job.name)
                     .Add(job.state)
                     .Add(job.version)
                     .Add(static_cast<int64_t>(job.priority))
                     .Add(job.created_at)
                     .Add(job.updated_at)
                     .Add(job.doc_json)));
    return AddEvent(conn, first);
  });
  if (s.code() == StatusCode::kAlreadyExists) return AlreadyExists("job '" + job.id + "' exists");
  return s;
}

Result<JobRecord> PostgresStore::GetJob(const std::string& id) {
  JobRecord out;
  TF_RETURN_IF_ERROR(pool_->Run(PgTxMode::kRead, [&](PgConnection& conn) -> Status {
    TF_ASSIGN_OR_RETURN(PgResult r,
                        conn.Exec(std::string(kJobColumns) + "WHERE id = $1", PgParams().Add(id)));
    if (r.rows() == 0) return NotFound("job '" + id + "' does not exist");
    out = ReadJob(r, 0);
    return OkStatus();
  }));
  return out;
}

Result<std::vector<JobRecord>> PostgresStore::ListJobs(const std::string& project_id,
                                                       const std::vector<std::string>& states,
                                                       int limit) {
  std::vector<JobRecord> out;
  TF_RETURN_IF_ERROR(pool_->Run(PgTxMode::kRead, [&](PgConnection& conn) -> Status {
    out.clear();
    TF_ASSIGN_OR_RETURN(
        PgResult r,
        conn.Exec(
            std::string(kJobColumns) + "WHERE ($1 = '' OR project_id = $1) AND "
                                       "(cardinality($2::text[]) = 0 OR state = ANY($2::text[])) "
                                       "ORDER BY created_at, id LIMIT $3",
            PgParams().Add(project_id).AddTextArray(states).Add(static_cast<int64_t>(limit))));
    for (int i = 0; i < r.rows(); ++i) out.push_back(ReadJob(r, i));
    return OkStatus();
  }));
  return out;
}

Status PostgresStore::UpdateJob(const JobRecord& job, int64_t expected_version,
                                const std::vector<JobEvent>& events) {
  return pool_->Run(PgTxMode::kTransaction, [&](PgConnection& conn) -> Status {
    TF_ASSIGN_OR_RETURN(
        PgResult r, conn.Exec("UPDATE jobs SET name = $2, state = $3, version = $4, priority = $5, "
                              "updated_at = $6, doc = $7 WHERE id = $1 AND version = $8",
                              PgParams()
                                  .Add(job.id)
                                  .Add(job.name)
                                  .Add(job.state)
                                  .Add(expected_version + 1)
                                  .Add(static_cast<int64_t>(job.priority))
                                  .Add(job.updated_at)
                                  .Add(job.doc_json)
                                  .Add(expected_version)));
    if (r.affected() == 0) {
      TF_ASSIGN_OR_RETURN(PgResult now, conn.Exec("SELECT version FROM jobs WHERE id = $1",
                                                  PgParams().Add(job.id)));
      if (now.rows() == 0) return NotFound("job '" + job.id + "' does not exist");
      return Aborted("job '" + job.id + "' changed meanwhile (version " +
                     std::string(now.Text(0, 0)) + ", expected " +
                     std::to_string(expected_version) + ")");
    }
    for (const JobEvent& e : events) TF_RETURN_IF_ERROR(AddEvent(conn, e));
    return OkStatus();
  });
}

Result<std::vector<JobEvent>> PostgresStore::ListJobEvents(const std::string& job_id,
                                                           int64_t after_seq) {
  std::vector<JobEvent> out;
  TF_RETURN_IF_ERROR(pool_->Run(PgTxMode::kRead, [&](PgConnection& conn) -> Status {
    out.clear();
    TF_ASSIGN_OR_RETURN(PgResult r,
                        conn.Exec("SELECT seq, job_id, at, kind, message FROM job_events "
                                  "WHERE job_id = $1 AND seq > $2 ORDER BY seq",
                                  PgParams().Add(job_id).Add(after_seq)));
    for (int i = 0; i < r.rows(); ++i) {
      out.push_back(JobEvent{r.Int(i, 0), std::string(r.Text(i, 1)), r.Int(i, 2),
                             std::string(r.Text(i, 3)), std::string(r.Text(i, 4))});
    }
    return OkStatus();
  }));
  return out;
}

Status PostgresStore::AddMetrics(const std::vector<MetricPoint>& points) {
  if (points.empty()) return OkStatus();
  return pool_->Run(PgTxMode::kTransaction, [&](PgConnection& conn) -> Status {
    for (const MetricPoint& p : points) {
      TF_RETURN_IF_ERROR(
          conn.Run("INSERT INTO job_metrics (job_id, attempt, name, step, value, "
                   "at) VALUES ($1, $2, $3, $4, $5, $6)",
                   PgParams()
                       .Add(p.job_id)
                       .Add(static_cast<int64_t>(p.attempt))
                       .Add(p.name)
                       .Add(p.step)
                       .Add(FormatValue(p.value))
                       .Add(p.at)));
    }
    return OkStatus();
  });
}

Result<std::vector<MetricPoint>> PostgresStore::ListMetrics(const std::string& job_id, int limit) {
  std::vector<MetricPoint> out;
  TF_RETURN_IF_ERROR(pool_->Run(PgTxMode::kRead, [&](PgConnection& conn) -> Status {
    out.clear();
    TF_ASSIGN_OR_RETURN(
        PgResult r,
        conn.Exec("SELECT job_id, attempt, name, step, value::text, at FROM (SELECT * FROM "
                  "job_metrics WHERE job_id = $1 ORDER BY seq DESC LIMIT $2) m ORDER BY seq",
                  PgParams().Add(job_id).Add(static_cast<int64_t>(limit))));
    for (int i = 0; i < r.rows(); ++i) {
      out.push_back(MetricPoint{
          std::string(r.Text(i, 0)), static_cast<int>(r.Int(i, 1)), std::string(r.Text(i, 2)),
          r.Int(i, 3), std::strtod(std::string(r.Text(i, 4)).c_str(), nullptr), r.Int(i, 5)});
    }
    return OkStatus();
  }));
  return out;
}

}  // namespace tf::store
