// Streams one dataloader worker's share of an epoch (datasets/partition.h) out of a dataset's
// shards, fetching them ahead of need on a background thread into a ShardCache.
//
// Every shard is checked against the SHA-256 of the index when it is downloaded, its
// structure when it is mapped, and every sample against its CRC-32C before it is returned: when its
// shard piece has been read in (the reader checks each piece of a window as it arrives, while
// the next ones are still being read), or else as it is returned. A
// shard found damaged (in the cache, or as downloaded) is removed and downloaded once more; if
// it is damaged again, Next returns the error (kInternal, naming the shard and the offset) and
// never the damaged bytes.
//
// Not thread-safe: one caller at a time. The background thread is the reader's own and stops
// when the reader is destroyed.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "datasets/dataset_index.h"
#include "datasets/partition.h"
#include "datasets/shard_cache.h"
#include "datasets/shard_fetcher.h"

namespace tf::datasets {

struct ReaderOptions {
  std::filesystem::path cache_dir;
  uint64_t cache_bytes = uint64_t{8} << 30;
  // Shards downloaded ahead of the window being read.
  int prefetch_shards = 4;
  // Threads downloading and reading in those shards, each one shard at a time (1 to 16).
  int prefetch_threads = 2;
  // Shard pieces read in from the disk at once by all the readers sharing cache_dir, whatever
  // their process (ShardCache::TakeReadSlot); 0 for no bound (0 to 64). No bound by default:
  // with several workers a rank reads faster without one, and with one worker it is level
  // (docs/benchmarks/datasets.md, 2026-12-02). A disk that serves few streams best (a spinning
  // one; not measured here) may want a bound of 2 to 4.
  int read_slots = 0;
};

struct Sample {
  int64_t index = 0;      // in the dataset: its shard's first_sample + its place in the shard
  int64_t position = 0;   // in the rank's order of this epoch (what samples_seen counts)
  std::string_view data;  // valid until the next call of Next
};

class DatasetReader {
 public:
  // kInvalidArgument for bad params (ValidatePartition), or a samples_seen that is negative or
  // past the end of the rank's share (rank_samples; at the end, nothing is left to read).
  static Result<std::unique_ptr<DatasetReader>> Open(DatasetIndex index, PartitionParams params,
                                                     int64_t samples_seen, ReaderOptions options,
                                                     std::shared_ptr<ShardFetcher> fetcher);
  virtual ~DatasetReader() = default;

  // The next sample of this worker's share; nullopt once it is all read. After an error every
  // later call returns that error again: the failed step may have passed samples it could not
  // return, so going on would skip them. To go on, open a new reader at the position reached.
  virtual Result<std::optional<Sample>> Next() = 0;
  // The rank's share of this epoch, in samples (every worker of the rank sees the same).
  virtual int64_t rank_samples() const = 0;
  virtual const ShardCache& cache() const = 0;
  // Samples returned so far whose CRC-32C was checked when their shard piece arrived (the others
  // were checked as they were returned): for tests and statistics.
  virtual int64_t checked_on_arrival() const = 0;
};

}  // namespace tf::datasets
