// SqliteStore's JobStore: managed jobs, their events and metrics.
#include <cstdio>
#include <cstdlib>

#include "store/sqlite_store_impl.h"

namespace tf::store {
namespace {

constexpr const char* kJobColumns =
    "SELECT id, project_id, name, state, version, priority, created_at, updated_at, doc "
    "FROM jobs ";

JobRecord ReadJob(const Stmt& q) {
  JobRecord j;
  j.id = q.Text(0);
  j.project_id = q.Text(1);
  j.name = q.Text(2);
  j.state = q.Text(3);
  j.version = q.Int(4);
  j.priority = static_cast<int>(q.Int(5));
  j.created_at = q.Int(6);
  j.updated_at = q.Int(7);
  j.doc_json = q.Text(8);
  return j;
}

Status AddEvent(SqliteDb& db, const JobEvent& e) {
  TF_ASSIGN_OR_RETURN(
      Stmt q, db.Prepare("INSERT INTO job_events (job_id, at, kind, message) VALUES (?, ?, ?, ?)"));
  return q.Bind(1, e.job_id).Bind(2, e.at).Bind(3, e.kind).Bind(4, e.message).Run();
}

std::string Placeholders(size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) out += i ? ", ?" : "?";
  return out;
}

std::string FormatValue(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

}  // namespace

Status SqliteStore::CreateJob(const JobRecord& job, const JobEvent& first) {
  return writer_->Write([&](SqliteDb& db) -> Status {
    TF_ASSIGN_OR_RETURN(Stmt q, db.Prepare("INSERT INTO jobs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"));
    Status s = q.Bind(1, job.id)
                   .Bind(2, job.project_id)
                   .Bind(3, job.name)
                   .Bind(4, job.state)
                   .Bind(5, job.version)
                   .Bind(6, static_cast<int64_t>(job.priority))
                   .Bind(7, job.created_at)
                   .Bind(8, job.updated_at)
                   .Bind(9, job.doc_json)
                   .Run();
    if (s.code() == StatusCode::kAlreadyExists) return AlreadyExists("job '" + job.id + "' exists");
    TF_RETURN_IF_ERROR(s);
    return AddEvent(db, first);
  });
}

Result<JobRecord> SqliteStore::GetJob(const std::string& id) {
  JobRecord out;
  TF_RETURN_IF_ERROR(readers_.With([&](SqliteDb& db) -> Status {
    TF_ASSIGN_OR_RETURN(Stmt q, db.Prepare(std::string(kJobColumns) + "WHERE id = ?"));
    TF_ASSIGN_OR_RETURN(bool row, q.Bind(1, id).Step());
    if (!row) return NotFound("job '" + id + "' does not exist");
    out = ReadJob(q);
    return OkStatus();
  }));
  return out;
}

Result<std::vector<JobRecord>> SqliteStore::ListJobs(const std::string& project_id,
                                                     const std::vector<std::string>& states,
                                                     int limit) {
  std::vector<JobRecord> out;
  TF_RETURN_IF_ERROR(readers_.With([&](SqliteDb& db) -> Status {
    std::string sql = std::string(kJobColumns) + "WHERE 1 = 1 ";
    if (!project_id.empty()) sql += "AND project_id = ? ";
    if (!states.empty()) sql += "AND state IN (" + Placeholders(states.size()) + ") ";
    sql += "ORDER BY created_at, id LIMIT ?";
    TF_ASSIGN_OR_RETURN(Stmt q, db.Prepare(sql));
    int i = 1;
    if (!project_id.empty()) q.Bind(i++, project_id);
    for (const std::string& s : states) q.Bind(i++, s);
    q.Bind(i, static_cast<int64_t>(limit));
    for (;;) {
      TF_ASSIGN_OR_RETURN(bool row, q.Step());
      if (!row) return OkStatus();
      out.push_back(ReadJob(q));
    }
  }));
  return out;
}

Status SqliteStore::UpdateJob(const JobRecord& job, int64_t expected_version,
                              const std::vector<JobEvent>& events) {
  return writer_->Write([&](SqliteDb& db) -> Status {
    TF_ASSIGN_OR_RETURN(Stmt q, db.Prepare("UPDATE jobs SET name = ?, state = ?, version = ?, "
                                           "priority = ?, updated_at = ?, doc = ? "
                                           "WHERE id = ? AND version = ?"));
    TF_RETURN_IF_ERROR(q.Bind(1, job.name)
                           .Bind(2, job.state)
                           .Bind(3, expected_version + 1)
                           .Bind(4, static_cast<int64_t>(job.priority))
                           .Bind(5, job.updated_at)
                           .Bind(6, job.doc_json)
                           .Bind(7, job.id)
                           .Bind(8, expected_version)
                           .Run());
    if (db.Changes() == 0) {
      TF_ASSIGN_OR_RETURN(Stmt exists, db.Prepare("SELECT version FROM jobs WHERE id = ?"));
      TF_ASSIGN_OR_RETURN(bool row, exists.Bind(1, job.id).Step());
      if (!row) return NotFound("job '" + job.id + "' does not exist");
      return Aborted("job '" + job.id + "' changed meanwhile (version " +
                     std::to_string(exists.Int(0)) + ", expected " +
                     std::to_string(expected_version) + ")");
    }
    for (const JobEvent& e : events) TF_RETURN_IF_ERROR(AddEvent(db, e));
    return OkStatus();
  });
}

Result<std::vector<JobEvent>> SqliteStore::ListJobEvents(const std::string& job_id,
                                                         int64_t after_seq) {
  std::vector<JobEvent> out;
  TF_RETURN_IF_ERROR(readers_.With([&](SqliteDb& db) -> Status {
    TF_ASSIGN_OR_RETURN(Stmt q, db.Prepare("SELECT seq, job_id, at, kind, message FROM job_events "
                                           "WHERE job_id = ? AND seq > ? ORDER BY seq"));
    q.Bind(1, job_id).Bind(2, after_seq);
    for (;;) {
      TF_ASSIGN_OR_RETURN(bool row, q.Step());
      if (!row) return OkStatus();
      out.push_back(JobEvent{q.Int(0), q.Text(1), q.Int(2), q.Text(3), q.Text(4)});
    }
  }));
  return out;
}

Status SqliteStore::AddMetrics(const std::vector<MetricPoint>& points) {
  if (points.empty()) return OkStatus();
  return writer_->Write([&](SqliteDb& db) -> Status {
    for (const MetricPoint& p : points) {
      // A statement per row: each Stmt resets the cached statement when it goes.
      TF_ASSIGN_OR_RETURN(Stmt q, db.Prepare("INSERT INTO job_metrics (job_id, attempt, name, "
                                             "step, value, at) VALUES (?, ?, ?, ?, ?, ?)"));
      TF_RETURN_IF_ERROR(q.Bind(1, p.job_id)
                             .Bind(2, static_cast<int64_t>(p.attempt))
                             .Bind(3, p.name)
                             .Bind(4, p.step)
                             .Bind(5, FormatValue(p.value))
                             .Bind(6, p.at)
                             .Run());
    }
    return OkStatus();
  });
}

Result<std::vector<MetricPoint>> SqliteStore::ListMetrics(const std::string& job_id, int limit) {
  std::vector<MetricPoint> out;
  TF_RETURN_IF_ERROR(readers_.With([&](SqliteDb& db) -> Status {
    TF_ASSIGN_OR_RETURN(
        Stmt q,
        db.Prepare("SELECT job_id, attempt, name, step, value, at FROM (SELECT * FROM job_metrics "
                   "WHERE job_id = ? ORDER BY seq DESC LIMIT ?) ORDER BY seq"));
    q.Bind(1, job_id).Bind(2, static_cast<int64_t>(limit));
    for (;;) {
      TF_ASSIGN_OR_RETURN(bool row, q.Step());
      if (!row) return OkStatus();
      out.push_back(MetricPoint{q.Text(0), static_cast<int>(q.Int(1)), q.Text(2), q.Int(3),
                                std::strtod(q.Text(4).c_str(), nullptr), q.Int(5)});
    }
  }));
  return out;
}

}  // namespace tf::store
