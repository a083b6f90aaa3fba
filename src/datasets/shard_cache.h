// A bounded local directory of shards, shared by the reader's threads and by every process
// that points at it (the dataloader workers of a node): each shard is downloaded once, checked
// against the SHA-256 in the index, and kept as `<sha256>.tfs` until the directory grows past its
// bound, when the least recently used shards that no reader holds are evicted.
//
// A download holds an flock on `<sha256>.lock`, so that two processes (or threads) wanting the
// same shard download it once; it lands in a temporary name and is renamed into place only
// when complete and checked. A hold (Ensure to Release) is a shared flock on the shard's file,
// so that a reader of any process sharing the directory keeps it from eviction; eviction
// removes a file only under an exclusive flock on it and on its `.lock`, and also removes the
// temporary files of downloads whose process died (their `.lock` is free). Thread-safe.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/mutex.h"
#include "base/status.h"
#include "datasets/dataset_index.h"
#include "datasets/shard_fetcher.h"

namespace tf::datasets {

// A shard file mapped read-only. The mapping stays valid if the file is evicted meanwhile.
//
// One mapping per file per process: Open of a file (the same inode and size) that is mapped
// already returns that mapping, so the worker threads of one process map each shard once; a
// thread that asks while another is mapping it waits for that mapping. A shard downloaded again
// is a new file, and gets a mapping of its own.
//
// Open maps without reading anything in; Populate reads a range in (the reader populates the
// bytes of the samples it will read, so that its shuffled reads take no page faults).
//
// The mapping is advised MADV_HUGEPAGE: where the page cache holds the file in 2 MiB pieces (a
// file read in from the disk through such a mapping, or written in large blocks as
// BlockWriter does), each piece is mapped with one page-table entry instead of 512. Reading a
// shard through 4 KiB entries ran at a third of the speed on a virtual machine whose page
// tables the hypervisor shadows (docs/benchmarks/datasets.md, 2026-12-05).
//
// Fork-safe: a process forked while another thread maps a file can map it too.
class MappedShard {
 public:
  static Result<std::shared_ptr<const MappedShard>> Open(const std::filesystem::path& path);
  ~MappedShard();
  MappedShard(const MappedShard&) = delete;
  MappedShard& operator=(const MappedShard&) = delete;
  std::string_view bytes() const { return {data_, size_}; }

  // Reads bytes [offset, offset + length) of the file into the page cache and maps them
  // (MADV_POPULATE_READ; touching each page where the kernel lacks it), the range clipped to
  // the mapping. kInternal naming the file if they cannot be read (a file shortened since it
  // was mapped), instead of a bus error when a sample is read. Thread-safe.
  Status Populate(uint64_t offset, uint64_t length) const;
  Status PopulateAll() const { return Populate(0, size_); }
  // Whether every page of bytes [offset, offset + length) is in the page cache already (mincore;
  // false if that cannot be told), so that reading them in takes no disk time.
  bool Resident(uint64_t offset, uint64_t length) const;

  // Mappings made by this process (not those shared): for tests.
  static int64_t mappings_made();
  // For tests: `hook` runs in every Open that maps a file, while it is marked as being mapped
  // (other threads asking for the file wait); empty to stop.
  static void SetWhileMappingForTesting(std::function<void()> hook);
  // Whether `st` is the file this maps (the same device and inode).
  bool IsFile(const struct stat& st) const { return st.st_dev == dev_ && st.st_ino == ino_; }

 private:
  MappedShard(const char* data, size_t size, std::string path, dev_t dev, ino_t ino)
      : data_(data), size_(size), path_(std::move(path)), dev_(dev), ino_(ino) {}
  const char* data_;
  size_t size_;
  std::string path_;
  dev_t dev_;
  ino_t ino_;
};

// A turn at reading shards in from the disk, shared by every process that uses the cache
// directory (an flock on one of its `read-slot-<i>.lock` files); given back when destroyed, or
// when the process ends.
class ReadSlot {
 public:
  ReadSlot(ReadSlot&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  ReadSlot& operator=(ReadSlot&&) = delete;
  ~ReadSlot();

 private:
  friend class ShardCache;
  explicit ReadSlot(int fd) : fd_(fd) {}
  int fd_;
};

// Makes `dir` (mode 0700, its parents as usual) if it is missing. Shards found in a cache are
// checked for damage but cannot be checked for who put them there, so a directory another user
// owns, or one every user may write into, is refused (kPermissionDenied, saying how to choose
// another); kInvalidArgument if it is not a directory.
Status PrepareCacheDirectory(const std::filesystem::path& dir);

class ShardCache {
 public:
  // `max_bytes`: the bound on the shards kept (a shard being read may take it over for a
  // while). The directory is made as PrepareCacheDirectory says.
  static Result<std::unique_ptr<ShardCache>> Open(const std::filesystem::path& dir,
                                                  uint64_t max_bytes);

  ~ShardCache();

  // Makes sure the shard is in the cache: downloads it with `fetcher` if it is not, checking
  // its size and SHA-256 (a download that does not match is tried once more, then
  // kInternal naming the shard). Keeps it from eviction, by this cache object or any other of
  // the directory, until Release (one Release for each Ensure).
  Status Ensure(const ShardInfo& shard, ShardFetcher& fetcher);
  // Gives one hold back; if holds kept the directory over its bound, evicts what it can now.
  void Release(const ShardInfo& shard);
  // Maps a shard that Ensure brought in (MappedShard::Open). kNotFound if it is not in the
  // cache (evicted by another process).
  Result<std::shared_ptr<const MappedShard>> Map(const ShardInfo& shard);
  // Removes a cached shard found damaged, so that the next Ensure downloads it again: the file
  // `damaged` maps (any file there when it is null), not one another reader has put in its
  // place meanwhile.
  void Drop(const ShardInfo& shard, const MappedShard* damaged);

  // One of `slots` turns at reading from the disk, waiting for one if all are taken. Readers
  // given a bound (ReaderOptions::read_slots) take one for each shard piece they read in, so
  // that a disk that serves few streams best is given only a few pieces at a time, whatever
  // the ranks and workers of the node (docs/datasets.md).
  Result<ReadSlot> TakeReadSlot(int slots);
  // The same without waiting: nullopt if all `slots` are taken.
  Result<std::optional<ReadSlot>> TryTakeReadSlot(int slots);

  std::filesystem::path PathOf(const ShardInfo& shard) const;
  // Downloads done by this cache object (not by other processes): for tests and statistics.
  int64_t downloads() const;

 private:
  ShardCache(std::filesystem::path dir, uint64_t max_bytes)
      : dir_(std::move(dir)), max_bytes_(max_bytes) {}
  Status Download(const ShardInfo& shard, ShardFetcher& fetcher);
  // Opens the shard's file with a shared flock and keeps the descriptor as one hold; kNotFound
  // if the file is not there (never downloaded, evicted, or removed as damaged by a reader of
  // another process).
  Status Hold(const ShardInfo& shard);
  void Evict();
  // Removes a shard's file or a leftover temporary file unless a download, an Ensure or a hold
  // (of any process) is using it; whether it was removed.
  bool RemoveUnlessInUse(const std::filesystem::path& path, const std::string& sha256);
  std::filesystem::path LockPathOf(const std::string& sha256) const;

  const std::filesystem::path dir_;
  const uint64_t max_bytes_;
  mutable Mutex mu_;
  // sha256 -> one descriptor per hold, each with a shared flock on the file
  std::map<std::string, std::vector<int>> held_ GUARDED_BY(mu_);
  bool over_bound_ GUARDED_BY(mu_) = false;  // the last Evict left more than max_bytes_
  int64_t downloads_ GUARDED_BY(mu_) = 0;
};

}  // namespace tf::datasets
