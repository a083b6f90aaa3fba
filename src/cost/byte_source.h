// Where the cost readers get their bytes: a file (plain or gzip, told apart by its first
// bytes) or memory. Readers pull fixed-size chunks, so memory use does not grow with the
// input.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"

namespace tf::cost {

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Copies up to `n` bytes into `buf`; 0 means the end. An error names the source.
  virtual Result<size_t> Read(char* buf, size_t n) = 0;
};

// Opens `path` for reading. A file starting with the gzip magic bytes is decompressed
// (concatenated gzip members are read one after another). Not found and permission errors
// name the path.
Result<std::unique_ptr<ByteSource>> OpenFileSource(const std::string& path);

// Reads `data`, which must outlive the source.
std::unique_ptr<ByteSource> MemorySource(std::string_view data);

// Decompresses gzip (or zlib) data read from `inner`; `name` is used in error messages.
std::unique_ptr<ByteSource> GzipSource(std::unique_ptr<ByteSource> inner, std::string name);

}  // namespace tf::cost
