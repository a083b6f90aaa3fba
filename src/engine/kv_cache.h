// The paged KV cache: the keys and values of past positions, kept in fixed-size blocks of a
// shared pool, with a block table per sequence.
//
// KvBlockPool owns the memory: per layer, keys and values of num_blocks blocks of block_size
// positions. A KvCache is one sequence's view of a pool: its block table (block i holds
// positions [i * block_size, (i + 1) * block_size)) and how many positions are filled. Blocks are
// taken from the pool as the sequence grows (Reserve) and given back at once when it is
// released or destroyed.
//
// Prefix caching: a full block whose keys and values are computed may be published, named by
// its tokens and by the block before it (its parent's serial: every publication gets a serial
// of its own, so a name is never reused for other content, and a match checks the tokens
// themselves, not a hash). Another sequence whose tokens start the same way then adopts the
// published blocks instead of computing them again (AcquireCached): a block is counted by the
// sequences that hold it, and is written only by the one that filled it, before it was full.
// A published block that no sequence holds stays cached until its memory is needed: Allocate
// takes a free block first, then evicts the cached block that was let go of longest ago.
//
// Thread safety: neither class is thread-safe. A pool and the caches drawing on it belong to
// one thread at a time (the engine's), which may read and write block contents from several
// threads inside one forward pass as long as no two write the same row.
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <optional>
#include <span>
#include <unordered_map>
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
  // Blocks Allocate can hand out: free ones, and cached ones that no sequence holds.
  int64_t free_blocks() const { return static_cast<int64_t>(free_.size()) + idle_cached_; }
  int64_t used_blocks() const { return num_blocks_ - free_blocks(); }
  // Published blocks, held by a sequence or idle; and idle cached blocks evicted so far.
  int64_t cached_blocks() const { return static_cast<int64_t>(by_name_.size()); }
  int64_t evictions() const { return evictions_; }
  bool allocated() const { return data_ != nullptr; }

  // Layer `layer`'s keys (values): [num_blocks, block_size, kv_dim], each row holding
  // num_kv_heads * head_dim floats, head after head.
  float* keys(int64_t layer) { return data_.get() + (2 * layer) * layer_floats_; }
  float* values(int64_t layer) { return data_.get() + (2 * layer + 1) * layer_floats_; }

  // A block for the caller to fill (held once), or -1 when none is left: a free one (a fresh
  // pool hands out 0, 1, 2, ... in order), else the idle cached block let go of longest ago,
  // which is then no longer cached.
  int32_t Allocate();
  // Lets go of block `index`, held by the caller (from Allocate or AcquireCached). A block no
  // one holds any more is free again, or, if published, cached and idle.
  void Free(int32_t index);

  // A published block: where it is, and the serial that names it as a parent.
  struct CachedBlock {
    int32_t index = -1;
    uint64_t serial = 0;
  };
  // The published block that holds `tokens` (block_size of them) after the block named
  // `parent` (0: at the start of a sequence), held for the caller; nullopt when none is cached.
  std::optional<CachedBlock> AcquireCached(uint64_t parent, std::span<const int32_t> tokens);
  // Publishes block `index` (held by the caller, its keys and values computed for `tokens`
  // after `parent`) and returns the serial that now names that content: the block's own, or
  // that of a block published with the same content before (this block then stays private).
  uint64_t Publish(int32_t index, uint64_t parent, std::span<const int32_t> tokens);

 private:
  // What a published block holds (its parent and tokens), and where it sits among the idle.
  struct Published {
    uint64_t serial = 0;  // 0: not published
    uint64_t parent = 0;
    std::list<int32_t>::iterator idle;  // valid while no one holds the block
  };
  static uint64_t NameOf(uint64_t parent, std::span<const int32_t> tokens);
  std::span<const int32_t> TokensOf(int32_t index) const;
  void Unpublish(int32_t index);

  int64_t block_size_;
  int64_t kv_dim_;
  int64_t num_blocks_;
  int64_t layer_floats_;              // num_blocks * block_size * kv_dim
  std::unique_ptr<float[]> data_;     // [layers, 2, num_blocks, block_size, kv_dim]
  std::vector<int32_t> free_;         // a stack of free indices
  std::vector<int32_t> holders_;      // per block: the sequences that hold it
  std::vector<Published> published_;  // per block
  std::vector<int32_t> tokens_;       // per block: its block_size tokens
  std::unordered_multimap<uint64_t, int32_t> by_name_;  // NameOf(parent, tokens) -> block
  std::list<int32_t> idle_;                             // cached, held by none; oldest first
  int64_t idle_cached_ = 0;
  uint64_t next_serial_ = 1;
  int64_t evictions_ = 0;
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
  // Appends a published block this sequence now holds (from the pool's AcquireCached) and
  // counts its positions as filled. Only while every block held so far is full.
  void AdoptCached(int32_t index);

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
