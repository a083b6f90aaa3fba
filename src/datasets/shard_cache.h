// A bounded local directory of shards, shared by the reader's threads and by every process
// that points at it (the dataloader workers of a node): each shard is downloaded once, checked
// against the SHA-256 in the index, and kept as `<sha256>.tfs` until the directory grows past its
// bound, when the least recently used shards that no reader of this process holds are evicted.
//
// A download holds an flock on `<sha256>.lock`, so that two processes (or threads) wanting the
// same shard download it once; it lands in a temporary name and is renamed into place only
// when complete and checked. Thread-safe.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "base/status.h"
#include "datasets/dataset_index.h"
#include "datasets/shard_fetcher.h"

namespace tf::datasets {

// A shard file mapped read-only. The mapping stays valid if the file is evicted meanwhile.
//
// One mapping per file per process: Open of a file (the same inode and size) that is mapped
// already returns that mapping, so the worker threads of one process map and read each shard in
// once. A shard downloaded again is a new file, and gets a mapping of its own.
class MappedShard {
 public:
  static Result<std::shared_ptr<const MappedShard>> Open(const std::filesystem::path& path);
  ~MappedShard();
  MappedShard(const MappedShard&) = delete;
  MappedShard& operator=(const MappedShard&) = delete;
  std::string_view bytes() const { return {data_, size_}; }

 private:
  MappedShard(const char* data, size_t size) : data_(data), size_(size) {}
  const char* data_;
  size_t size_;
};

class ShardCache {
 public:
  // `max_bytes`: the bound on the shards kept (a shard being read may take it over for a
  // while). The directory is created if missing.
  static Result<std::unique_ptr<ShardCache>> Open(const std::filesystem::path& dir,
                                                  uint64_t max_bytes);

  // Makes sure the shard is in the cache: downloads it with `fetcher` if it is not, checking
  // its size and SHA-256 (a download that does not match is tried once more, then
  // kInternal naming the shard). Keeps it from eviction until Release.
  Status Ensure(const ShardInfo& shard, ShardFetcher& fetcher);
  void Release(const ShardInfo& shard);
  // Maps a shard that Ensure brought in (MappedShard::Open). kNotFound if it is not in the
  // cache (evicted by another process).
  Result<std::shared_ptr<const MappedShard>> Map(const ShardInfo& shard);
  // Removes a cached shard found damaged, so that the next Ensure downloads it again.
  void Drop(const ShardInfo& shard);

  std::filesystem::path PathOf(const ShardInfo& shard) const;
  // Downloads done by this cache object (not by other processes): for tests and statistics.
  int64_t downloads() const;

 private:
  ShardCache(std::filesystem::path dir, uint64_t max_bytes)
      : dir_(std::move(dir)), max_bytes_(max_bytes) {}
  Status Download(const ShardInfo& shard, ShardFetcher& fetcher);
  void Evict();

  const std::filesystem::path dir_;
  const uint64_t max_bytes_;
  mutable std::mutex mu_;
  std::map<std::string, int> held_;  // sha256 -> holds; guarded by mu_
  int64_t downloads_ = 0;            // guarded by mu_
};

}  // namespace tf::datasets
