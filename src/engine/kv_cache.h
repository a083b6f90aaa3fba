// The keys and values of one sequence's past positions, per layer.
//
// The forward pass talks to the cache only through this interface, so that the paged cache
// (blocks shared between sequences, for continuous batching) can replace the contiguous one.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

namespace tf::engine {

class KvCache {
 public:
  virtual ~KvCache() = default;

  // Positions the cache can hold.
  virtual int64_t capacity() const = 0;
  // Positions filled so far: the next token goes at position size().
  virtual int64_t size() const = 0;
  // Marks positions [0, n) as filled (after a forward pass), or forgets those from n on.
  virtual void set_size(int64_t n) = 0;

  // Layer `layer`'s keys (values) for positions [0, capacity): [capacity, row_stride()], with
  // each row holding num_kv_heads * head_dim floats, head after head.
  virtual float* keys(int64_t layer) = 0;
  virtual float* values(int64_t layer) = 0;
  virtual int64_t row_stride() const = 0;
};

// One allocation of [layers, 2, capacity, kv_dim] floats.
std::unique_ptr<KvCache> NewContiguousKvCache(int64_t num_layers, int64_t kv_dim, int64_t capacity);

}  // namespace tf::engine
