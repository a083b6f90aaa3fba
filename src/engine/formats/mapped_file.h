// A read-only memory mapping of a whole file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "base/status.h"

namespace tf::engine {

class MappedFile {
 public:
  // Maps `path` read-only. NotFound if it does not exist; InvalidArgument if it is not a regular
  // file; Internal for other system errors. The message names the file.
  static Result<std::unique_ptr<MappedFile>> Open(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }

  // Whether [begin, begin + bytes) lies within the mapping.
  bool Contains(const void* begin, size_t bytes) const;
  // Gives the memory of the whole pages within [begin, begin + bytes) (which must lie within
  // the mapping) back to the system; later reads bring them in again from the file, so what
  // they read does not change. For bytes that will not be read again (a model's Q8_0 rows once
  // repacked). Advice only: nothing fails.
  void DropPages(const void* begin, size_t bytes) const;

 private:
  MappedFile(std::string path, const uint8_t* data, size_t size)
      : path_(std::move(path)), data_(data), size_(size) {}

  std::string path_;
  const uint8_t* data_;  // null for an empty file
  size_t size_;
};

}  // namespace tf::engine
