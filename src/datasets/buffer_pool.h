// Memory for the batches the Python binding hands to PyTorch (python/tensorfleet_data,
// batched=True), recycled: a buffer the program has let go of is kept and given to a later batch
// of about its size, so that the batch's copy writes into pages that are already in memory.
//
// Without it each batch of half a megabyte came fresh from the allocator (which maps anything
// that large anew and unmaps it when freed): one page fault for every 4 KiB written, and on a
// virtual machine whose page faults leave the guest, those faults cost more than the copy did
// (docs/benchmarks/datasets.md, 2026-12-04). A new buffer is mapped with its pages filled in at
// once (MAP_POPULATE), one call instead of a fault a page.
//
// Thread-safe. A process forked while another thread holds the pool's lock gets a pool it can
// use (the lock is taken around fork); the child keeps the buffers kept at the fork, its own
// copies.
#pragma once

#include <cstdint>
#include <vector>

#include "base/mutex.h"
#include "base/status.h"

namespace tf::datasets {

class BufferPool;

// One buffer, owned alone; given back to its pool when destroyed. Move-only.
class PooledBuffer {
 public:
  PooledBuffer() = default;
  PooledBuffer(PooledBuffer&& other) noexcept;
  PooledBuffer& operator=(PooledBuffer&& other) noexcept;
  PooledBuffer(const PooledBuffer&) = delete;
  PooledBuffer& operator=(const PooledBuffer&) = delete;
  ~PooledBuffer();

  char* data() const { return data_; }
  // How many bytes data() holds: at least what was asked for.
  uint64_t capacity() const { return capacity_; }

 private:
  friend class BufferPool;
  PooledBuffer(BufferPool* pool, char* data, uint64_t capacity)
      : pool_(pool), data_(data), capacity_(capacity) {}
  void GiveBack();

  BufferPool* pool_ = nullptr;
  char* data_ = nullptr;
  uint64_t capacity_ = 0;
};

class BufferPool {
 public:
  // Keeps at most `max_kept_bytes` of buffers nobody holds; a buffer given back beyond that is
  // unmapped.
  explicit BufferPool(uint64_t max_kept_bytes);
  ~BufferPool();  // unmaps the kept buffers; every PooledBuffer must be gone by then
  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;

  // A buffer of at least `bytes`: the smallest kept one that holds them and is at most twice
  // as big (a small batch does not take a big batch's buffer), else a new one (rounded up to
  // 64 KiB). 0 bytes: an empty buffer, no memory. kResourceExhausted if the memory cannot be
  // mapped.
  Result<PooledBuffer> Get(uint64_t bytes);

  uint64_t kept_bytes() const;
  int64_t mapped() const;  // new buffers mapped so far

  // The pool for batches in this process (128 MiB kept at most), made on first use.
  static BufferPool& ForBatches();

 private:
  friend class PooledBuffer;
  struct Kept {
    char* data;
    uint64_t capacity;
  };
  void GiveBack(char* data, uint64_t capacity);
  // Around a fork, for ForBatches' pool: the lock is held across it, so the child's is free.
  static void LockForFork();
  static void UnlockAfterFork();

  const uint64_t max_kept_bytes_;
  mutable Mutex mu_;
  std::vector<Kept> kept_ GUARDED_BY(mu_);
  uint64_t kept_bytes_ GUARDED_BY(mu_) = 0;
  int64_t mapped_ GUARDED_BY(mu_) = 0;
};

}  // namespace tf::datasets
