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

// Decompresses gzip (or zlib) data read from `inner`, member after member; `name` is used in
// error messages. Every inflater below gives the same bytes and the same kinds of error:
// InvalidArgument for corrupt data (naming `name` and the compressed offset near the fault)
// and for data that ends inside a member (naming the offset where it ended); an empty input
// reads as empty. Errors from `inner` are passed on.
//
// GzipSource takes ISA-L's inflater when the build has it (the faster), else
// zlib's. TF_GZIP=zlib in the environment forces zlib (to compare the two).
std::unique_ptr<ByteSource> GzipSource(std::unique_ptr<ByteSource> inner, std::string name);

// zlib's inflater, always built in.
std::unique_ptr<ByteSource> ZlibGzipSource(std::unique_ptr<ByteSource> inner, std::string name);

// ISA-L's inflater (igzip); null when the build did not find ISA-L.
std::unique_ptr<ByteSource> IsalGzipSource(std::unique_ptr<ByteSource> inner, std::string name);

}  // namespace tf::cost
