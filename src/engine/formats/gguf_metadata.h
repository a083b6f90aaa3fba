// Typed reads of a GGUF file's metadata that record the first problem, with the file and the
// key, so that a caller can read many fields and check once.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "engine/formats/gguf.h"

namespace tf::engine {

class GgufMetadata {
 public:
  explicit GgufMetadata(const GgufFile& file) : file_(file) {}

  bool Has(const std::string& key) const { return file_.Find(key) != nullptr; }
  // The value of `key` if its type is `type` (arrays: of elements of `element`); else null, and
  // a missing key (when required) or a wrong type is recorded.
  const GgufValue* Array(const std::string& key, GgufValueType element, bool required);

  // A positive (or, with allow_zero, non-negative) integer; required unless `fallback` is set.
  int64_t Int(const std::string& key, std::optional<int64_t> fallback = std::nullopt,
              bool allow_zero = false);
  // A positive number; required unless `fallback` is set.
  double Number(const std::string& key, std::optional<double> fallback = std::nullopt);
  bool Bool(const std::string& key, bool fallback);
  std::string String(const std::string& key, std::optional<std::string> fallback = std::nullopt);

  void Fail(const std::string& key, const std::string& what);
  const Status& status() const { return status_; }
  const GgufFile& file() const { return file_; }

 private:
  const GgufFile& file_;
  Status status_;
};

}  // namespace tf::engine
