// PostgresStore's DatasetStore: datasets and their shards, written and deleted whole.
#include <algorithm>

#include "store/pg_store_impl.h"

namespace tf::store {
namespace {

constexpr const char* kDatasetColumns =
    "SELECT id, project_id, name, created_at, sample_count, bytes, shard_size, source_format "
    "FROM datasets ";

constexpr const char* kShardColumns =
    "SELECT dataset_id, ordinal, bucket, object_key, samples, bytes, sha256, first_sample "
    "FROM dataset_shards ";

DatasetRecord ReadDataset(const PgResult& r, int row) {
  DatasetRecord d;
  d.id = r.Text(row, 0);
  d.project_id = r.Text(row, 1);
  d.name = r.Text(row, 2);
  d.created_at = r.Int(row, 3);
  d.sample_count = r.Int(row, 4);
  d.bytes = r.Int(row, 5);
  d.shard_size = r.Int(row, 6);
  d.source_format = r.Text(row, 7);
  return d;
}

DatasetShardRecord ReadShard(const PgResult& r, int row) {
  DatasetShardRecord s;
  s.dataset_id = r.Text(row, 0);
  s.ordinal = r.Int(row, 1);
  s.bucket = r.Text(row, 2);
  s.key = r.Bytes(row, 3);
  s.samples = r.Int(row, 4);
  s.bytes = r.Int(row, 5);
  s.sha256 = r.Text(row, 6);
  s.first_sample = r.Int(row, 7);
  return s;
}

}  // namespace

Status PostgresStore::CreateDataset(const DatasetRecord& d,
                                    const std::vector<DatasetShardRecord>& shards) {
  return pool_->Run(PgTxMode::kTransaction, [&](PgConnection& conn) -> Status {
    TF_ASSIGN_OR_RETURN(
        PgResult r,
        conn.Exec("INSERT INTO datasets (id, project_id, name, created_at, sample_count, bytes, "
                  "shard_size, source_format) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) "
                  "ON CONFLICT DO NOTHING RETURNING 1",
                  PgParams()
                      .Add(d.id)
                      .Add(d.project_id)
                      .Add(d.name)
                      .Add(d.created_at)
                      .Add(d.sample_count)
                      .Add(d.bytes)
                      .Add(d.shard_size)
                      .Add(d.source_format)));
    if (r.rows() != 1) {
      TF_ASSIGN_OR_RETURN(PgResult named,
                          conn.Exec("SELECT 1 FROM datasets WHERE project_id = $1 AND name = $2",
                                    PgParams().Add(d.project_id).Add(d.name)));
      if (named.rows() > 0) {
        return AlreadyExists("dataset '" + d.name + "' already exists in project " + d.project_id);
      }
      return AlreadyExists("dataset " + d.id + " already exists");
    }
    for (const DatasetShardRecord& s : shards) {
      TF_RETURN_IF_ERROR(conn.Run(
          "INSERT INTO dataset_shards (dataset_id, ordinal, bucket, object_key, samples, bytes, "
          "sha256, first_sample) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
          PgParams()
              .Add(d.id)
              .Add(s.ordinal)
              .Add(s.bucket)
              .AddBytes(s.key)
              .Add(s.samples)
              .Add(s.bytes)
              .Add(s.sha256)
              .Add(s.first_sample)));
    }
    return OkStatus();
  });
}

Result<DatasetRecord> PostgresStore::GetDataset(const std::string& project_id,
                                                const std::string& name) {
  DatasetRecord out;
  TF_RETURN_IF_ERROR(pool_->Run(PgTxMode::kRead, [&](PgConnection& conn) -> Status {
    TF_ASSIGN_OR_RETURN(
        PgResult r, conn.Exec(std::string(kDatasetColumns) + "WHERE project_id = $1 AND name = $2",
                              PgParams().Add(project_id).Add(name)));
    if (r.rows() == 0) {
      return NotFound("dataset '" + name + "' does not exist in project " + project_id);
    }
    out = ReadDataset(r, 0);
    return OkStatus();
  }));
  return out;
}

Result<std::vector<DatasetRecord>> PostgresStore::ListDatasets(const std::string& project_id) {
  std::vector<DatasetRecord> out;
  TF_RETURN_IF_ERROR(pool_->Run(PgTxMode::kRead, [&](PgConnection& conn) -> Status {
    out.clear();
    TF_ASSIGN_OR_RETURN(
        PgResult r, conn.Exec(std::string(kDatasetColumns) + "WHERE project_id = $1 ORDER BY name",
                              PgParams().Add(project_id)));
    for (int i = 0; i < r.rows(); ++i) out.push_back(ReadDataset(r, i));
    return OkStatus();
  }));
  return out;
}

Result<std::vector<DatasetShardRecord>> PostgresStore::ListDatasetShards(
    const std::string& dataset_id) {
  std::vector<DatasetShardRecord> out;
  TF_RETURN_IF_ERROR(pool_->Run(PgTxMode::kRead, [&](PgConnection& conn) -> Status {
    out.clear();
    TF_ASSIGN_OR_RETURN(
        PgResult r, conn.Exec(std::string(kShardColumns) + "WHERE dataset_id = $1 ORDER BY ordinal",
                              PgParams().Add(dataset_id)));
    for (int i = 0; i < r.rows(); ++i) out.push_back(ReadShard(r, i));
    return OkStatus();
  }));
  return out;
}

Result<std::vector<DatasetShardRecord>> PostgresStore::DeleteDataset(const std::string& id) {
  std::vector<DatasetShardRecord> out;
  TF_RETURN_IF_ERROR(pool_->Run(PgTxMode::kTransaction, [&](PgConnection& conn) -> Status {
    out.clear();
    TF_ASSIGN_OR_RETURN(PgResult r,
                        conn.Exec("DELETE FROM datasets WHERE id = $1", PgParams().Add(id)));
    if (r.affected() == 0) return NotFound("dataset " + id + " does not exist");
    TF_ASSIGN_OR_RETURN(PgResult shards,
                        conn.Exec("DELETE FROM dataset_shards WHERE dataset_id = $1 RETURNING "
                                  "dataset_id, ordinal, bucket, object_key, samples, bytes, "
                                  "sha256, first_sample",
                                  PgParams().Add(id)));
    for (int i = 0; i < shards.rows(); ++i) out.push_back(ReadShard(shards, i));
    std::sort(out.begin(), out.end(),
              [](const auto& a, const auto& b) { return a.ordinal < b.ordinal; });
    return OkStatus();
  }));
  return out;
}

}  // namespace tf::store
