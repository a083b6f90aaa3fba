// Where the bill generator writes: a file, plain or gzip-compressed. Writes are buffered.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"

namespace tf::cost {

class ByteSink {
 public:
  virtual ~ByteSink() = default;
  virtual Status Write(std::string_view data) = 0;
  // Flushes and closes; the file is complete only when this returns OK.
  virtual Status Close() = 0;
};

// Creates (or truncates) `path`. With `gzip`, the data is compressed at zlib level 1 (fast:
// the generator writes gigabytes for the benchmark).
Result<std::unique_ptr<ByteSink>> OpenFileSink(const std::string& path, bool gzip);

// Appends to a string (tests).
std::unique_ptr<ByteSink> StringSink(std::string* out);

}  // namespace tf::cost
