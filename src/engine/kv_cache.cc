#include "engine/kv_cache.h"

namespace tf::engine {
namespace {

class ContiguousKvCache : public KvCache {
 public:
  ContiguousKvCache(int64_t num_layers, int64_t kv_dim, int64_t capacity)
      : kv_dim_(kv_dim), capacity_(capacity), data_(num_layers * 2 * capacity * kv_dim) {}

  int64_t capacity() const override { return capacity_; }
  int64_t size() const override { return size_; }
  void set_size(int64_t n) override { size_ = n; }
  float* keys(int64_t layer) override { return data_.data() + (2 * layer) * capacity_ * kv_dim_; }
  float* values(int64_t layer) override {
    return data_.data() + (2 * layer + 1) * capacity_ * kv_dim_;
  }
  int64_t row_stride() const override { return kv_dim_; }

 private:
  int64_t kv_dim_;
  int64_t capacity_;
  int64_t size_ = 0;
  std::vector<float> data_;  // [layers, 2, capacity, kv_dim]
};

}  // namespace

std::unique_ptr<KvCache> NewContiguousKvCache(int64_t num_layers, int64_t kv_dim,
                                              int64_t capacity) {
  return std::make_unique<ContiguousKvCache>(num_layers, kv_dim, capacity);
}

}  // namespace tf::engine
