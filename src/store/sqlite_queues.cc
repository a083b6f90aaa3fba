// SqliteStore's queue records: create, read, list, update, delete.
#include "store/config_json.h"
#include "store/sqlite_store_impl.h"

namespace tf::store {
namespace {

constexpr const char* kQueueColumns =
    "SELECT id, project_id, name, config, created_at, updated_at FROM queues ";

Result<Queue> ReadQueue(const Stmt& q) {
  Queue out;
  out.id = q.Int(0);
  out.project_id = q.Text(1);
  out.name = q.Text(2);
  TF_ASSIGN_OR_RETURN(out.config, QueueConfigFromJson(q.Text(3)));
  out.created_at = q.Int(4);
  out.updated_at = q.Int(5);
  return out;
}

// Runs `q` (already bound) and reads at most one queue into `out`.
Status ReadOneQueue(Stmt& q, const std::string& what, Queue& out) {
  TF_ASSIGN_OR_RETURN(bool row, q.Step());
  if (!row) return NotFound("queue " + what + " does not exist");
  TF_ASSIGN_OR_RETURN(out, ReadQueue(q));
  return OkStatus();
}

}  // namespace

Result<Queue> SqliteStore::CreateQueue(Queue queue) {
  TF_RETURN_IF_ERROR(writer_->Write([&](SqliteDb& db) -> Status {
    TF_ASSIGN_OR_RETURN(
        Stmt q, db.Prepare("INSERT INTO queues (project_id, name, config, created_at, updated_at) "
                           "VALUES (?, ?, ?, ?, ?)"));
    Status s = q.Bind(1, queue.project_id)
                   .Bind(2, queue.name)
                   .Bind(3, QueueConfigToJson(queue.config))
                   .Bind(4, queue.created_at)
                   .Bind(5, queue.updated_at)
                   .Run();
    if (s.code() == StatusCode::kAlreadyExists) {
      return AlreadyExists("queue '" + queue.name + "' already exists");
    }
    TF_RETURN_IF_ERROR(s);
    queue.id = db.LastInsertId();
    return OkStatus();
  }));
  return queue;
}

Result<Queue> SqliteStore::GetQueue(const std::string& project_id, const std::string& name) {
  Queue out;
  TF_RETURN_IF_ERROR(readers_.With([&](SqliteDb& db) -> Status {
    TF_ASSIGN_OR_RETURN(
        Stmt q, db.Prepare(std::string(kQueueColumns) + "WHERE project_id = ? AND name = ?"));
    q.Bind(1, project_id).Bind(2, name);
    return ReadOneQueue(q, "'" + name + "'", out);
  }));
  return out;
}

Result<Queue> SqliteStore::GetQueueById(int64_t id) {
  Queue out;
  TF_RETURN_IF_ERROR(readers_.With([&](SqliteDb& db) -> Status {
    TF_ASSIGN_OR_RETURN(Stmt q, db.Prepare(std::string(kQueueColumns) + "WHERE id = ?"));
    q.Bind(1, id);
    return ReadOneQueue(q, "#" + std::to_string(id), out);
  }));
  return out;
}

Result<std::vector<Queue>> SqliteStore::ListQueues(const std::string& project_id,
                                                   const std::string& prefix) {
  std::vector<Queue> out;
  TF_RETURN_IF_ERROR(readers_.With([&](SqliteDb& db) -> Status {
    // substr() rather than LIKE: a prefix may contain % or _.
    TF_ASSIGN_OR_RETURN(Stmt q, db.Prepare(std::string(kQueueColumns) +
                                           "WHERE project_id = ? AND substr(name, 1, ?) = ? "
                                           "ORDER BY name"));
    q.Bind(1, project_id).Bind(2, static_cast<int64_t>(prefix.size())).Bind(3, prefix);
    for (;;) {
      TF_ASSIGN_OR_RETURN(bool row, q.Step());
      if (!row) return OkStatus();
      TF_ASSIGN_OR_RETURN(Queue queue, ReadQueue(q));
      out.push_back(std::move(queue));
    }
  }));
  return out;
}

Status SqliteStore::UpdateQueueConfig(int64_t id, const QueueConfig& config, TimeMs now) {
  return writer_->Write([&](SqliteDb& db) -> Status {
    TF_ASSIGN_OR_RETURN(Stmt q,
                        db.Prepare("UPDATE queues SET config = ?, updated_at = ? WHERE id = ?"));
    TF_RETURN_IF_ERROR(q.Bind(1, QueueConfigToJson(config)).Bind(2, now).Bind(3, id).Run());
    if (db.Changes() == 0) return NotFound("queue #" + std::to_string(id) + " does not exist");
    return OkStatus();
  });
}

Status SqliteStore::DeleteQueue(int64_t id) {
  return writer_->Write([&](SqliteDb& db) -> Status {
    TF_ASSIGN_OR_RETURN(Stmt q, db.Prepare("DELETE FROM queues WHERE id = ?"));
    TF_RETURN_IF_ERROR(q.Bind(1, id).Run());
    if (db.Changes() == 0) return NotFound("queue #" + std::to_string(id) + " does not exist");
    TF_ASSIGN_OR_RETURN(Stmt m, db.Prepare("DELETE FROM messages WHERE queue_id = ?"));
    TF_RETURN_IF_ERROR(m.Bind(1, id).Run());
    TF_ASSIGN_OR_RETURN(Stmt d, db.Prepare("DELETE FROM dedup WHERE queue_id = ?"));
    return d.Bind(1, id).Run();
  });
}

}  // namespace tf::store
