// The paged KV cache: the keys and values of past positions, kept in fixed-size blocks of a
// shared pool, with a block table per sequence.
//
// KvBlockPool owns the memory: per layer, keys and values of num_blocks blocks of block_size
// positions. A KvCache is one sequence's view of a pool: its block table (block i holds
// positions [i * block_size, (i + 1) * block_size)) and how many positions are filled. Blocks are
// taken from the pool as the sequence grows (Reserve) and given back at once when it is
// released or destroyed.
//
// Thread safety: neither class is thread-safe. A pool and the caches drawing on it belong to
// one thread at a time (the engine's), which may read and write block contents from several
// threads inside one forward pass as long as no two write the same row.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "base/status.h"

namespace tf::engine {

inline constexpr int64_t kKvBlockSize = 16;  // positions per block

class KvBlockPool {
 public:
  // Memory for num_blocks blocks (not touched until used). num_blocks >= 0, block_size >= 1.
  // When the memory cannot be had, the pool has no blocks and allocated() is false.
  KvBlockPool(int64_t num_layers, int64_t kv_dim, int64_t block_size, int64_t num_blocks);
  KvBlockPool(const KvBlockPool&) = delete;
  KvBlockPool& operator=(const KvBlockPool&) = delete;

  // Bytes one block takes: keys and values of every layer.
  static int64_t BlockBytes(int64_t num_layers, int64_t kv_dim, int64_t block_size);

  int64_t block_size() const { return block_size_; }
  int64_t kv_dim() const { return kv_dim_; }
  int64_t num_blocks() const { return num_blocks_; }
  int64_t free_blocks() const { return static_cast<int64_t>(free_.size()); }
  int64_t used_blocks() const { return num_blocks_ - free_blocks(); }
  bool allocated() const { return data_ != nullptr; }

  // Layer `layer`'s keys (values): [num_blocks, block_size, kv_dim], each row holding
  // num_kv_heads * head_dim floats, head after head.
  float* keys(int64_t layer) { return data_.get() + (2 * layer) * layer_floats_; }
  float* values(int64_t layer) { return data_.get() + (2 * layer + 1) * layer_floats_; }

  // A free block's index, or -1 when none is left. A fresh pool hands out 0, 1, 2, ... in order.
  int32_t Allocate();
  // Gives block `index` back (it must have come from Allocate and not been freed since).
  void Free(int32_t index);

 private:
  int64_t block_size_;
  int64_t kv_dim_;
  int64_t num_blocks_;
  int64_t layer_floats_;           // num_blocks * block_size * kv_dim
  std::unique_ptr<float[]> data_;  // [layers, 2, num_blocks, block_size, kv_dim]
  std::vector<int32_t> free_;      // a stack of free indices
};

class KvCache {
 public:
  // A sequence of up to `max_positions` positions over `pool`, holding no blocks yet.
  KvCache(std::shared_ptr<KvBlockPool> pool, int64_t max_positions);
  ~KvCache();  // gives its blocks back
  KvCache(const KvCache&) = delete;
  KvCache& operator=(const KvCache&) = delete;

  // The most positions this sequence may grow to (the context it was given).
  int64_t capacity() const { return max_positions_; }
  // Positions filled so far: the next token goes at position size().
  int64_t size() const { return size_; }
  // Marks positions [0, n) as filled (after a forward pass), or forgets those from n on (their
  // blocks stay reserved). n <= reserved().
  void set_size(int64_t n) { size_ = n; }
  // Positions the blocks held now can take.
  int64_t reserved() const;

  // Blocks more that Reserve(positions) would take from the pool (0 when already reserved).
  int64_t BlocksToReserve(int64_t positions) const;
  // Takes blocks from the pool until `positions` positions fit. ResourceExhausted, taking
  // nothing, when positions > capacity() or the pool has too few free blocks.
  Status Reserve(int64_t positions);
  // Gives every block back and empties the sequence (size() becomes 0).
  void Release();

  // Block i holds positions [i * block_size, (i + 1) * block_size).
  std::span<const int32_t> block_table() const { return blocks_; }
  KvBlockPool& pool() { return *pool_; }
  const KvBlockPool& pool() const { return *pool_; }

 private:
  std::shared_ptr<KvBlockPool> pool_;
  int64_t max_positions_;
  int64_t size_ = 0;
  std::vector<int32_t> blocks_;
};

}  // namespace tf::engine
