// PostgresStore's queue records, counts and whole-queue operations.
#include <map>

#include "store/config_json.h"
#include "store/pg_store_impl.h"

namespace tf::store {
namespace {

constexpr const char* kQueueColumns =
    "SELECT id, project_id, name, config, created_at, updated_at FROM queues ";

Result<Queue> ReadQueue(const PgResult& r, int row) {
  Queue out;
  out.id = r.Int(row, 0);
  out.project_id = r.Text(row, 1);
  out.name = r.Text(row, 2);
  TF_ASSIGN_OR_RETURN(out.config, QueueConfigFromJson(std::string(r.Text(row, 3))));
  out.created_at = r.Int(row, 4);
  out.updated_at = r.Int(row, 5);
  return out;
}

Status NoSuchQueue(int64_t id) {
  return NotFound("queue #" + std::to_string(id) + " does not exist");
}

Status QueueExists(PgConnection& conn, int64_t id) {
  TF_ASSIGN_OR_RETURN(PgResult r,
                      conn.Exec("SELECT 1 FROM queues WHERE id = $1", PgParams().Add(id)));
  return r.rows() == 0 ? NoSuchQueue(id) : OkStatus();
}

}  // namespace

Result<Queue> PostgresStore::CreateQueue(Queue queue) {
  Status s = pool_->Run(PgTxMode::kAutocommit, [&](PgConnection& conn) -> Status {
    TF_ASSIGN_OR_RETURN(
        PgResult r,
        conn.Exec("INSERT INTO queues (project_id, name, config, created_at, updated_at) "
                  "VALUES ($1, $2, $3, $4, $5) RETURNING id",
                  PgParams()
                      .Add(queue.project_id)
                      .Add(queue.name)
                      .Add(QueueConfigToJson(queue.config))
                      .Add(queue.created_at)
                      .Add(queue.updated_at)));
    queue.id = r.Int(0, 0);
    return OkStatus();
  });
  if (s.code() == StatusCode::kAlreadyExists) {
    return AlreadyExists("queue '" + queue.name + "' already exists");
  }
  TF_RETURN_IF_ERROR(s);
  return queue;
}

Result<Queue> PostgresStore::GetQueue(const std::string& project_id, const std::string& name) {
  Queue out;
  TF_RETURN_IF_ERROR(pool_->Run(PgTxMode::kRead, [&](PgConnection& conn) -> Status {
    TF_ASSIGN_OR_RETURN(
        PgResult r, conn.Exec(std::string(kQueueColumns) + "WHERE project_id = $1 AND name = $2",
                              PgParams().Add(project_id).Add(name)));
    if (r.rows() == 0) return NotFound("queue '" + name + "' does not exist");
    TF_ASSIGN_OR_RETURN(out, ReadQueue(r, 0));
    return OkStatus();
  }));
  return out;
}

Result<Queue> PostgresStore::GetQueueById(int64_t id) {
  Queue out;
  TF_RETURN_IF_ERROR(pool_->Run(PgTxMode::kRead, [&](PgConnection& conn) -> Status {
    TF_ASSIGN_OR_RETURN(
        PgResult r, conn.Exec(std::string(kQueueColumns) + "WHERE id = $1", PgParams().Add(id)));
    if (r.rows() == 0) return NoSuchQueue(id);
    TF_ASSIGN_OR_RETURN(out, ReadQueue(r, 0));
    return OkStatus();
  }));
  return out;
}

Result<std::vector<Queue>> PostgresStore::ListQueues(const std::string& project_id,
                                                     const std::string& prefix) {
  std::vector<Queue> out;
  TF_RETURN_IF_ERROR(pool_->Run(PgTxMode::kRead, [&](PgConnection& conn) -> Status {
    out.clear();
    // starts_with rather than LIKE: a prefix may contain % or _.
    TF_ASSIGN_OR_RETURN(PgResult r,
                        conn.Exec(std::string(kQueueColumns) +
                                      "WHERE project_id = $1 AND starts_with(name, $2::text) "
                                      "ORDER BY name",
                                  PgParams().Add(project_id).Add(prefix)));
    for (int i = 0; i < r.rows(); ++i) {
      TF_ASSIGN_OR_RETURN(Queue queue, ReadQueue(r, i));
      out.push_back(std::move(queue));
    }
    return OkStatus();
  }));
  return out;
}

Status PostgresStore::UpdateQueueConfig(int64_t id, const QueueConfig& config, TimeMs now) {
  return pool_->Run(PgTxMode::kAutocommit, [&](PgConnection& conn) -> Status {
    TF_ASSIGN_OR_RETURN(PgResult r,
                        conn.Exec("UPDATE queues SET config = $1, updated_at = $2 WHERE id = $3",
                                  PgParams().Add(QueueConfigToJson(config)).Add(now).Add(id)));
    if (r.affected() == 0) return NoSuchQueue(id);
    return OkStatus();
  });
}

Status PostgresStore::DeleteQueue(int64_t id) {
  return pool_->Run(PgTxMode::kTransaction, [&](PgConnection& conn) -> Status {
    // Deleting the row first waits for sends in flight (they hold a key-share lock on it), so
    // none of their messages is left behind.
    TF_ASSIGN_OR_RETURN(PgResult r,
                        conn.Exec("DELETE FROM queues WHERE id = $1", PgParams().Add(id)));
    if (r.affected() == 0) return NoSuchQueue(id);
    TF_RETURN_IF_ERROR(conn.Run("DELETE FROM messages WHERE queue_id = $1", PgParams().Add(id)));
    return conn.Run("DELETE FROM dedup WHERE queue_id = $1", PgParams().Add(id));
  });
}

Result<int64_t> PostgresStore::PurgeQueue(int64_t queue_id) {
  int64_t deleted = 0;
  TF_RETURN_IF_ERROR(pool_->Run(PgTxMode::kTransaction, [&](PgConnection& conn) -> Status {
    TF_RETURN_IF_ERROR(QueueExists(conn, queue_id));
    TF_ASSIGN_OR_RETURN(PgResult r, conn.Exec("DELETE FROM messages WHERE queue_id = $1",
                                              PgParams().Add(queue_id)));
    deleted = r.affected();
    return OkStatus();
  }));
  return deleted;
}

Result<QueueCounts> PostgresStore::CountMessages(int64_t queue_id, TimeMs now) {
  QueueCounts counts;
  TF_RETURN_IF_ERROR(pool_->Run(PgTxMode::kRead, [&](PgConnection& conn) -> Status {
    TF_ASSIGN_OR_RETURN(PgResult r,
                        conn.Exec("SELECT count(*) FILTER (WHERE visible_at <= $2), "
                                  "count(*) FILTER (WHERE visible_at > $2 AND receive_count > 0), "
                                  "count(*) FILTER (WHERE visible_at > $2 AND receive_count = 0) "
                                  "FROM messages WHERE queue_id = $1",
                                  PgParams().Add(queue_id).Add(now)));
    counts = QueueCounts{r.Int(0, 0), r.Int(0, 1), r.Int(0, 2)};
    return OkStatus();
  }));
  return counts;
}

Result<int64_t> PostgresStore::RedriveMessages(int64_t from_queue_id, int64_t to_queue_id,
                                               TimeMs now, int64_t limit) {
  std::vector<int64_t> targets;
  int64_t moved = 0;
  TF_RETURN_IF_ERROR(pool_->Run(PgTxMode::kTransaction, [&](PgConnection& conn) -> Status {
    targets.clear();
    moved = 0;
    TF_RETURN_IF_ERROR(QueueExists(conn, from_queue_id));
    // Visible messages only: one being worked on in the dead-letter queue stays there.
    TF_ASSIGN_OR_RETURN(
        PgResult picked,
        conn.Exec(
            "SELECT seq, source_queue_id FROM messages "
            "WHERE queue_id = $1 AND visible_at <= $2 "
            // Back to their sources: only messages whose source still exists, so that
            // unmovable ones never use up the limit ahead of movable ones.
            "AND ($4::bigint <> 0 OR source_queue_id IN (SELECT id FROM queues)) "
            "ORDER BY seq LIMIT $3 FOR UPDATE SKIP LOCKED",
            PgParams().Add(from_queue_id).Add(now).Add(limit < 0 ? 0 : limit).Add(to_queue_id)));
    std::map<int64_t, std::vector<int64_t>> by_target;
    for (int i = 0; i < picked.rows(); ++i) {
      int64_t target = to_queue_id != 0 ? to_queue_id : picked.Int(i, 1);
      if (target != 0) by_target[target].push_back(picked.Int(i, 0));  // 0: never dead-lettered
    }
    for (const auto& [target, seqs] : by_target) {
      // The target's retention starts over; a key-share lock keeps it from being deleted meanwhile.
      TF_ASSIGN_OR_RETURN(PgResult queue,
                          conn.Exec("SELECT config FROM queues WHERE id = $1 FOR KEY SHARE",
                                    PgParams().Add(target)));
      if (queue.rows() == 0) {
        if (to_queue_id != 0) return NoSuchQueue(target);
        continue;  // its source queue was deleted: leave it here
      }
      TF_ASSIGN_OR_RETURN(QueueConfig config, QueueConfigFromJson(std::string(queue.Text(0, 0))));
      TF_RETURN_IF_ERROR(conn.Run(
          "UPDATE messages SET queue_id = $1, source_queue_id = 0, visible_at = $2, "
          "expires_at = $3, receive_count = 0, receipt = 0, first_received_at = 0 "
          "WHERE seq = ANY($4::bigint[])",
          PgParams().Add(target).Add(now).Add(now + config.retention_ms).AddInt64Array(seqs)));
      targets.push_back(target);
      moved += static_cast<int64_t>(seqs.size());
    }
    return NotifyQueues(conn, targets);
  }));
  for (int64_t queue_id : targets) NotifyLocal(queue_id);
  return moved;
}

Result<int64_t> PostgresStore::DeleteExpired(TimeMs now) {
  int64_t deleted = 0;
  TF_RETURN_IF_ERROR(pool_->Run(PgTxMode::kTransaction, [&](PgConnection& conn) -> Status {
    TF_ASSIGN_OR_RETURN(
        PgResult r, conn.Exec("DELETE FROM messages WHERE expires_at <= $1", PgParams().Add(now)));
    deleted = r.affected();
    return conn.Run("DELETE FROM dedup WHERE expires_at <= $1", PgParams().Add(now));
  }));
  return deleted;
}

}  // namespace tf::store
