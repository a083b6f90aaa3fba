#include "engine/kv_cache.h"

#include <algorithm>
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
  holders_.assign(num_blocks, 0);
  published_.resize(num_blocks);
  tokens_.resize(num_blocks * block_size);
}

int64_t KvBlockPool::BlockBytes(int64_t num_layers, int64_t kv_dim, int64_t block_size) {
  return num_layers * 2 * block_size * kv_dim * static_cast<int64_t>(sizeof(float));
}

int32_t KvBlockPool::Allocate() {
  int32_t index;
  if (!free_.empty()) {
    index = free_.back();
    free_.pop_back();
  } else if (!idle_.empty()) {
    index = idle_.front();
    idle_.pop_front();
    --idle_cached_;
    Unpublish(index);
    ++evictions_;
  } else {
    return -1;
  }
  holders_[index] = 1;
  return index;
}

void KvBlockPool::Free(int32_t index) {
  assert(index >= 0 && index < num_blocks_ && holders_[index] > 0);
  if (--holders_[index] > 0) return;
  if (published_[index].serial != 0) {
    published_[index].idle = idle_.insert(idle_.end(), index);
    ++idle_cached_;
  } else {
    free_.push_back(index);
  }
}

uint64_t KvBlockPool::NameOf(uint64_t parent, std::span<const int32_t> tokens) {
  // FNV-1a over the parent's serial and the tokens, then a final mix: only an index into
  // by_name_, whose matches are checked against the tokens and the parent themselves.
  uint64_t h = 0xcbf29ce484222325ull ^ parent;
  for (int32_t t : tokens) h = (h ^ static_cast<uint32_t>(t)) * 0x100000001b3ull;
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  return h ^ (h >> 33);
}

std::span<const int32_t> KvBlockPool::TokensOf(int32_t index) const {
  return {tokens_.data() + index * block_size_, static_cast<size_t>(block_size_)};
}

std::optional<KvBlockPool::CachedBlock> KvBlockPool::AcquireCached(
    uint64_t parent, std::span<const int32_t> tokens) {
  assert(static_cast<int64_t>(tokens.size()) == block_size_);
  auto [begin, end] = by_name_.equal_range(NameOf(parent, tokens));
  for (auto it = begin; it != end; ++it) {
    const int32_t index = it->second;
    Published& p = published_[index];
    if (p.parent != parent || !std::ranges::equal(TokensOf(index), tokens)) continue;
    if (holders_[index]++ == 0) {
      idle_.erase(p.idle);
      --idle_cached_;
    }
    return CachedBlock{index, p.serial};
  }
  return std::nullopt;
}

uint64_t KvBlockPool::Publish(int32_t index, uint64_t parent, std::span<const int32_t> tokens) {
  assert(static_cast<int64_t>(tokens.size()) == block_size_ && holders_[index] > 0);
  if (published_[index].serial != 0) return published_[index].serial;
  const uint64_t name = NameOf(parent, tokens);
  auto [begin, end] = by_name_.equal_range(name);
  for (auto it = begin; it != end; ++it) {
    const Published& other = published_[it->second];
    if (other.parent == parent && std::ranges::equal(TokensOf(it->second), tokens)) {
      return other.serial;  // the same content is cached already: this block stays private
    }
  }
  Published& p = published_[index];
  p.serial = next_serial_++;
  p.parent = parent;
  std::ranges::copy(tokens, tokens_.begin() + index * block_size_);
  by_name_.emplace(name, index);
  return p.serial;
}

void KvBlockPool::Unpublish(int32_t index) {
  auto [begin, end] = by_name_.equal_range(NameOf(published_[index].parent, TokensOf(index)));
  for (auto it = begin; it != end; ++it) {
    if (it->second == index) {
      by_name_.erase(it);
      break;
    }
  }
  published_[index] = Published{};
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

void KvCache::AdoptCached(int32_t index) {
  assert(size_ == reserved());
  blocks_.push_back(index);
  size_ = reserved();
}

void KvCache::Release() {
  // Freed in reverse, so that the pool hands them out again in the same order.
  for (auto it = blocks_.rbegin(); it != blocks_.rend(); ++it) pool_->Free(*it);
  blocks_.clear();
  size_ = 0;
}

}  // namespace tf::engine
