// SqliteStore's DatasetStore: datasets and their shards, written and deleted whole.
#include "store/sqlite_store_impl.h"

namespace tf::store {
namespace {

constexpr const char* kDatasetColumns =
    "SELECT id, project_id, name, created_at, sample_count, bytes, shard_size, source_format "
    "FROM datasets ";

constexpr const char* kShardColumns =
    "SELECT dataset_id, ordinal, bucket, object_key, samples, bytes, sha256, first_sample "
    "FROM dataset_shards ";

DatasetRecord ReadDataset(const Stmt& q) {
  return DatasetRecord{q.Text(0), q.Text(1), q.Text(2), q.Int(3),
                       q.Int(4),  q.Int(5),  q.Int(6),  q.Text(7)};
}

DatasetShardRecord ReadShard(const Stmt& q) {
  return DatasetShardRecord{q.Text(0), q.Int(1), q.Text(2), q.Text(3),
                            q.Int(4),  q.Int(5), q.Text(6), q.Int(7)};
}

Status ReadShards(Stmt& q, std::vector<DatasetShardRecord>& out) {
  for (;;) {
    TF_ASSIGN_OR_RETURN(bool row, q.Step());
    if (!row) return OkStatus();
    out.push_back(ReadShard(q));
  }
}

}  // namespace

Status SqliteStore::CreateDataset(const DatasetRecord& d,
                                  const std::vector<DatasetShardRecord>& shards) {
  return writer_->Write([&](SqliteDb& db) -> Status {
    TF_ASSIGN_OR_RETURN(
        Stmt q, db.Prepare("INSERT INTO datasets (id, project_id, name, created_at, sample_count, "
                           "bytes, shard_size, source_format) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
                           "ON CONFLICT DO NOTHING"));
    TF_RETURN_IF_ERROR(q.Bind(1, d.id)
                           .Bind(2, d.project_id)
                           .Bind(3, d.name)
                           .Bind(4, d.created_at)
                           .Bind(5, d.sample_count)
                           .Bind(6, d.bytes)
                           .Bind(7, d.shard_size)
                           .Bind(8, d.source_format)
                           .Run());
    if (db.Changes() != 1) {
      TF_ASSIGN_OR_RETURN(Stmt named,
                          db.Prepare("SELECT 1 FROM datasets WHERE project_id = ? AND name = ?"));
      TF_ASSIGN_OR_RETURN(bool taken, named.Bind(1, d.project_id).Bind(2, d.name).Step());
      if (taken) {
        return AlreadyExists("dataset '" + d.name + "' already exists in project " + d.project_id);
      }
      return AlreadyExists("dataset " + d.id + " already exists");
    }
    for (const DatasetShardRecord& shard : shards) {
      // A statement borrowed from the connection's cache runs once per borrowing.
      TF_ASSIGN_OR_RETURN(Stmt s,
                          db.Prepare("INSERT INTO dataset_shards (dataset_id, ordinal, bucket, "
                                     "object_key, samples, bytes, sha256, first_sample) "
                                     "VALUES (?, ?, ?, ?, ?, ?, ?, ?)"));
      TF_RETURN_IF_ERROR(s.Bind(1, d.id)
                             .Bind(2, shard.ordinal)
                             .Bind(3, shard.bucket)
                             .Bind(4, shard.key)
                             .Bind(5, shard.samples)
                             .Bind(6, shard.bytes)
                             .Bind(7, shard.sha256)
                             .Bind(8, shard.first_sample)
                             .Run());
    }
    return OkStatus();
  });
}

Result<DatasetRecord> SqliteStore::GetDataset(const std::string& project_id,
                                              const std::string& name) {
  DatasetRecord out;
  TF_RETURN_IF_ERROR(readers_.With([&](SqliteDb& db) -> Status {
    TF_ASSIGN_OR_RETURN(
        Stmt q, db.Prepare(std::string(kDatasetColumns) + "WHERE project_id = ? AND name = ?"));
    TF_ASSIGN_OR_RETURN(bool row, q.Bind(1, project_id).Bind(2, name).Step());
    if (!row) return NotFound("dataset '" + name + "' does not exist in project " + project_id);
    out = ReadDataset(q);
    return OkStatus();
  }));
  return out;
}

Result<std::vector<DatasetRecord>> SqliteStore::ListDatasets(const std::string& project_id) {
  std::vector<DatasetRecord> out;
  TF_RETURN_IF_ERROR(readers_.With([&](SqliteDb& db) -> Status {
    TF_ASSIGN_OR_RETURN(
        Stmt q, db.Prepare(std::string(kDatasetColumns) + "WHERE project_id = ? ORDER BY name"));
    q.Bind(1, project_id);
    for (;;) {
      TF_ASSIGN_OR_RETURN(bool row, q.Step());
      if (!row) return OkStatus();
      out.push_back(ReadDataset(q));
    }
  }));
  return out;
}

Result<std::vector<DatasetShardRecord>> SqliteStore::ListDatasetShards(
    const std::string& dataset_id) {
  std::vector<DatasetShardRecord> out;
  TF_RETURN_IF_ERROR(readers_.With([&](SqliteDb& db) -> Status {
    TF_ASSIGN_OR_RETURN(
        Stmt q, db.Prepare(std::string(kShardColumns) + "WHERE dataset_id = ? ORDER BY ordinal"));
    q.Bind(1, dataset_id);
    return ReadShards(q, out);
  }));
  return out;
}

Result<std::vector<DatasetShardRecord>> SqliteStore::DeleteDataset(const std::string& id) {
  std::vector<DatasetShardRecord> out;
  TF_RETURN_IF_ERROR(writer_->Write([&](SqliteDb& db) -> Status {
    out.clear();
    TF_ASSIGN_OR_RETURN(Stmt q, db.Prepare("DELETE FROM datasets WHERE id = ?"));
    TF_RETURN_IF_ERROR(q.Bind(1, id).Run());
    if (db.Changes() == 0) return NotFound("dataset " + id + " does not exist");
    TF_ASSIGN_OR_RETURN(Stmt shards, db.Prepare(std::string(kShardColumns) +
                                                "WHERE dataset_id = ? ORDER BY ordinal"));
    shards.Bind(1, id);
    TF_RETURN_IF_ERROR(ReadShards(shards, out));
    TF_ASSIGN_OR_RETURN(Stmt gone, db.Prepare("DELETE FROM dataset_shards WHERE dataset_id = ?"));
    return gone.Bind(1, id).Run();
  }));
  return out;
}

}  // namespace tf::store
