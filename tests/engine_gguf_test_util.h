// Building small GGUF files byte by byte for the reader's tests (the fixtures themselves are
// written by llama.cpp's gguf-py: tests/data/engine/gguf/make_gguf.py).
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

namespace tf::testing {

class GgufBuilder {
 public:
  explicit GgufBuilder(uint32_t version = 3) : version_(version) {}

  GgufBuilder& String(const std::string& key, const std::string& value) {
    Key(key, 8);
    Str(&kv_, value);
    ++n_kv_;
    return *this;
  }
  GgufBuilder& U32(const std::string& key, uint32_t value) {
    Key(key, 4);
    Put(&kv_, value);
    ++n_kv_;
    return *this;
  }
  GgufBuilder& F32(const std::string& key, float value) {
    Key(key, 6);
    Put(&kv_, value);
    ++n_kv_;
    return *this;
  }
  GgufBuilder& Strings(const std::string& key, const std::vector<std::string>& values) {
    Key(key, 9);
    Put(&kv_, uint32_t{8});
    Put(&kv_, uint64_t{values.size()});
    for (const auto& v : values) Str(&kv_, v);
    ++n_kv_;
    return *this;
  }
  GgufBuilder& Raw(const std::string& key, uint32_t type, const std::string& value_bytes) {
    Key(key, type);
    kv_ += value_bytes;
    ++n_kv_;
    return *this;
  }
  // A tensor with `ne` (row length first) of ggml `type` whose data is `bytes`, placed after the
  // previous one (aligned to 32) unless `offset` is given.
  GgufBuilder& Tensor(const std::string& name, std::vector<uint64_t> ne, uint32_t type,
                      const std::string& bytes, int64_t offset = -1) {
    Str(&infos_, name);
    Put(&infos_, static_cast<uint32_t>(ne.size()));
    for (uint64_t d : ne) Put(&infos_, d);
    Put(&infos_, type);
    while (data_.size() % 32 != 0) data_.push_back('\0');
    Put(&infos_, offset >= 0 ? static_cast<uint64_t>(offset) : uint64_t{data_.size()});
    data_ += bytes;
    ++n_tensors_;
    return *this;
  }
  GgufBuilder& TensorCount(uint64_t n) {
    n_tensors_override_ = n;
    return *this;
  }
  GgufBuilder& KvCount(uint64_t n) {
    n_kv_override_ = n;
    return *this;
  }

  std::string Bytes() const {
    std::string out = "GGUF";
    Put(&out, version_);
    Put(&out, n_tensors_override_ ? *n_tensors_override_ : n_tensors_);
    Put(&out, n_kv_override_ ? *n_kv_override_ : n_kv_);
    out += kv_;
    out += infos_;
    while (out.size() % 32 != 0) out.push_back('\0');
    return out + data_;
  }

 private:
  template <typename T>
  static void Put(std::string* out, T v) {
    char b[sizeof v];
    std::memcpy(b, &v, sizeof v);
    out->append(b, sizeof v);
  }
  static void Str(std::string* out, const std::string& s) {
    Put(out, uint64_t{s.size()});
    *out += s;
  }
  void Key(const std::string& key, uint32_t type) {
    Str(&kv_, key);
    Put(&kv_, type);
  }

  uint32_t version_;
  uint64_t n_kv_ = 0, n_tensors_ = 0;
  std::optional<uint64_t> n_kv_override_, n_tensors_override_;
  std::string kv_, infos_, data_;
};

}  // namespace tf::testing
