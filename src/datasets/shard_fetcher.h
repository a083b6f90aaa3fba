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
// Implemented over HTTP by client/dataset_client.h (MakeHttpShardFetcher); tests fake it.
class ShardFetcher {
 public:
  virtual ~ShardFetcher() = default;
  // Writes the shard object's whole content to the new file `dest`. On error `dest` may hold
  // part of it (the caller removes it). Errors as the object API's; kUnavailable when the
  // server cannot be reached.
  virtual Status Fetch(const ShardInfo& shard, const std::filesystem::path& dest) = 0;
};

}  // namespace tf::datasets
