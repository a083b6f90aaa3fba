#include "engine/kv_cache.h"

#include <cassert>
#include <new>
#include <string>

namespace tf::engine {

KvBlockPool::KvBlockPool(int64_t num_layers, int64_t kv_dim, int64_t block_size, int64_t num_blocks)
    : block_size_(block_size),
      kv_dim_(kv_dim),
      num_blocks_(num_blocks),
      layer_floats_(num_blocks * block_size * kv_dim),
      data_(new (std::nothrow) float[num_layers * 2 * layer_floats_]) {
  if (data_ == nullptr) {
    num_blocks_ = 0;
    layer_floats_ = 0;
    return;
  }
  free_.reserve(num_blocks);
  for (int64_t i = num_blocks - 1; i >= 0; --i) free_.push_back(static_cast<int32_t>(i));
}

int64_t KvBlockPool::BlockBytes(int64_t num_layers, int64_t kv_dim, int64_t block_size) {
  return num_layers * 2 * block_size * kv_dim * static_cast<int64_t>(sizeof(float));
}

int32_t KvBlockPool::Allocate() {
  if (free_.empty()) return -1;
  int32_t index = free_.back();
  free_.pop_back();
  return index;
}

void KvBlockPool::Free(int32_t index) {
  assert(index >= 0 && index < num_blocks_);
  free_.push_back(index);
}

KvCache::KvCache(std::shared_ptr<KvBlockPool> pool, int64_t max_positions)
    : pool_(std::move(pool)), max_positions_(max_positions) {}

KvCache::~KvCache() { Release(); }

int64_t KvCache::reserved() const {
  return static_cast<int64_t>(blocks_.size()) * pool_->block_size();
}

int64_t KvCache::BlocksToReserve(int64_t positions) const {
  const int64_t bs = pool_->block_size();
  const int64_t need = (positions + bs - 1) / bs - static_cast<int64_t>(blocks_.size());
  return need > 0 ? need : 0;
}

Status KvCache::Reserve(int64_t positions) {
  if (positions > max_positions_) {
    return ResourceExhausted("context of " + std::to_string(positions) +
                             " positions exceeds the sequence's " + std::to_string(max_positions_));
  }
  const int64_t need = BlocksToReserve(positions);
  if (need > pool_->free_blocks()) {
    return ResourceExhausted("the KV cache has " + std::to_string(pool_->free_blocks()) +
                             " free blocks; " + std::to_string(positions) + " positions need " +
                             std::to_string(need) + " more");
  }
  for (int64_t i = 0; i < need; ++i) blocks_.push_back(pool_->Allocate());
  return OkStatus();
}

void KvCache::Release() {
  // Freed in reverse, so that the pool hands them out again in the same order.
  for (auto it = blocks_.rbegin(); it != blocks_.rend(); ++it) pool_->Free(*it);
  blocks_.clear();
  size_ = 0;
}

}  // namespace tf::engine
