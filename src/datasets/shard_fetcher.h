// Where the reader gets shards and indexes from: the one network seam of the reader, so that
// its tests run on fakes that can fail, corrupt or hold back a download.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "base/status.h"
#include "datasets/dataset_index.h"

namespace tf::datasets {

// Thread-safe: the reader's prefetch thread and its caller may fetch at once.
class ShardFetcher {
 public:
  virtual ~ShardFetcher() = default;
  // Writes the shard object's whole content to the new file `dest`. On error `dest` may hold
  // part of it (the caller removes it). Errors as the object API's; kUnavailable when the
  // server cannot be reached.
  virtual Status Fetch(const ShardInfo& shard, const std::filesystem::path& dest) = 0;
};

// Over the server's native object API (GET /v1/buckets/B/objects/K) with a bearer token.
// kInvalidArgument if the URL does not parse.
Result<std::unique_ptr<ShardFetcher>> MakeHttpShardFetcher(const std::string& server_url,
                                                           const std::string& token);

// GET /v1/datasets/NAME, checked (DatasetIndexFromJson).
Result<DatasetIndex> FetchDatasetIndex(const std::string& server_url, const std::string& token,
                                       const std::string& name);

}  // namespace tf::datasets
