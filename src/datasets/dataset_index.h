// What a dataset is made of, as the server describes it (GET /v1/datasets/NAME) and the reader
// uses it: its shards in order, each with its place in the dataset's sample numbering.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace tf::datasets {

struct ShardInfo {
  int64_t ordinal = 0;  // 0, 1, 2, ... in dataset order
  std::string bucket;
  std::string key;
  int64_t samples = 0;       // > 0
  int64_t bytes = 0;         // the shard object's size
  std::string sha256;        // of the whole shard object, hex
  int64_t first_sample = 0;  // dataset index of its sample 0: the samples of the shards before it
};

struct DatasetIndex {
  std::string name;
  std::string created_at;  // RFC 3339, as the server prints it
  int64_t samples = 0;
  int64_t bytes = 0;
  int64_t shard_size = 0;
  std::string format;  // files, jsonl or text
  std::vector<ShardInfo> shards;
};

nlohmann::json DatasetIndexToJson(const DatasetIndex& index);

// Reads the JSON of DatasetIndexToJson and checks it hangs together: ordinals 0..n-1 in order,
// every shard with samples, first_sample the running total, totals that add up. Anything else
// is kInvalidArgument naming the field; never throws.
Result<DatasetIndex> DatasetIndexFromJson(std::string_view text);

// Dataset names: [a-z0-9][a-z0-9._-]{0,62}. kInvalidArgument saying what is wrong.
Status ValidateDatasetName(std::string_view name);

}  // namespace tf::datasets
