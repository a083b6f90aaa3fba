#include "datasets/dataset_service.h"

#include <string_view>
#include <unordered_map>

#include "base/crypto.h"
#include "base/log.h"
#include "base/time_format.h"

namespace tf::datasets {
namespace {

constexpr size_t kMaxShards = 1'000'000;

DatasetIndex ToIndex(const store::DatasetRecord& d,
                     const std::vector<store::DatasetShardRecord>& shards) {
  DatasetIndex out;
  out.name = d.name;
  out.created_at = FormatTime(d.created_at);
  out.samples = d.sample_count;
  out.bytes = d.bytes;
  out.shard_size = d.shard_size;
  out.format = d.source_format;
  for (const auto& s : shards) {
    out.shards.push_back(
        ShardInfo{s.ordinal, s.bucket, s.key, s.samples, s.bytes, s.sha256, s.first_sample});
  }
  return out;
}

Status CheckRequest(const NewDataset& d) {
  TF_RETURN_IF_ERROR(ValidateDatasetName(d.name));
  if (d.format != "files" && d.format != "jsonl" && d.format != "text") {
    return InvalidArgument("format: must be files, jsonl or text, got '" + d.format + "'");
  }
  if (d.shard_size < 1) return InvalidArgument("shard_size: must be at least 1 byte");
  if (d.shards.empty()) return InvalidArgument("shards: a dataset needs at least one shard");
  if (d.shards.size() > kMaxShards) {
    return InvalidArgument("shards: at most " + std::to_string(kMaxShards));
  }
  for (size_t i = 0; i < d.shards.size(); ++i) {
    const NewShard& s = d.shards[i];
    std::string where = "shards[" + std::to_string(i) + "].";
    if (s.samples < 1) return InvalidArgument(where + "samples: must be at least 1");
    if (s.bytes < 1) return InvalidArgument(where + "bytes: must be at least 1");
    if (s.key.empty()) return InvalidArgument(where + "key: must not be empty");
    // Deleting the dataset deletes its shard objects: it may own only objects under its own
    // name, never another dataset's shards or a user's files.
    if (!s.key.starts_with(d.name + "/")) {
      return InvalidArgument(where + "key: '" + s.key + "' is not under '" + d.name +
                             "/': a dataset's shards are kept under its name");
    }
  }
  std::unordered_map<std::string_view, size_t> first_use;
  for (size_t i = 0; i < d.shards.size(); ++i) {
    auto [at, fresh] = first_use.try_emplace(d.shards[i].key, i);
    if (!fresh) {
      return InvalidArgument("shards[" + std::to_string(i) + "].key: '" + d.shards[i].key +
                             "' is also shards[" + std::to_string(at->second) +
                             "]: each shard is an object of its own");
    }
  }
  return OkStatus();
}

}  // namespace

Result<DatasetIndex> DatasetService::Create(const std::string& project_id, const NewDataset& d) {
  TF_RETURN_IF_ERROR(CheckRequest(d));
  store::DatasetRecord record;
  record.id = "ds_" + RandomHex(16);
  record.project_id = project_id;
  record.name = d.name;
  record.created_at = clock_.Now();
  record.shard_size = d.shard_size;
  record.source_format = d.format;
  std::vector<store::DatasetShardRecord> shards;
  for (size_t i = 0; i < d.shards.size(); ++i) {
    const NewShard& s = d.shards[i];
    auto head = objects_.Head(project_id, d.bucket, s.key);
    if (!head.ok()) {
      return head.status().WithContext("shard " + std::to_string(i) + " (" + d.bucket + "/" +
                                       s.key + ")");
    }
    if (head->size != static_cast<uint64_t>(s.bytes) || head->sha256 != s.sha256) {
      return FailedPrecondition("shard " + std::to_string(i) + " (" + d.bucket + "/" + s.key +
                                ") is " + std::to_string(head->size) + " bytes with SHA-256 " +
                                head->sha256 + ", not the " + std::to_string(s.bytes) +
                                " bytes with SHA-256 " + s.sha256 + " that was uploaded");
    }
    shards.push_back(store::DatasetShardRecord{record.id, static_cast<int64_t>(i), d.bucket, s.key,
                                               s.samples, s.bytes, s.sha256, record.sample_count});
    record.sample_count += s.samples;
    record.bytes += s.bytes;
  }
  TF_RETURN_IF_ERROR(store_.CreateDataset(record, shards));
  return ToIndex(record, shards);
}

Result<DatasetIndex> DatasetService::Get(const std::string& project_id, const std::string& name) {
  TF_ASSIGN_OR_RETURN(store::DatasetRecord d, store_.GetDataset(project_id, name));
  TF_ASSIGN_OR_RETURN(std::vector<store::DatasetShardRecord> shards,
                      store_.ListDatasetShards(d.id));
  // Every dataset has shards, and a delete takes them with the dataset in one transaction: none
  // means it was deleted between the two reads.
  if (shards.empty()) {
    return NotFound("dataset '" + name + "' does not exist in project " + project_id +
                    " (it was deleted as it was read)");
  }
  return ToIndex(d, shards);
}

Result<std::vector<DatasetIndex>> DatasetService::List(const std::string& project_id) {
  TF_ASSIGN_OR_RETURN(std::vector<store::DatasetRecord> all, store_.ListDatasets(project_id));
  std::vector<DatasetIndex> out;
  for (const auto& d : all) out.push_back(ToIndex(d, {}));
  return out;
}

Result<int> DatasetService::Delete(const std::string& project_id, const std::string& name) {
  TF_ASSIGN_OR_RETURN(store::DatasetRecord d, store_.GetDataset(project_id, name));
  TF_ASSIGN_OR_RETURN(std::vector<store::DatasetShardRecord> shards, store_.DeleteDataset(d.id));
  int deleted = 0;
  for (const auto& s : shards) {
    Status st = objects_.Delete(project_id, s.bucket, s.key);
    if (st.ok()) {
      ++deleted;
    } else if (st.code() != StatusCode::kNotFound) {
      spdlog::warn("datasets: shard object {}/{} of deleted dataset {} was not deleted: {}",
                   s.bucket, s.key, name, st.ToString());
    }
  }
  return deleted;
}

}  // namespace tf::datasets
