#include "cost/audit/byte_source.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string_view>

#include "cost/audit/byte_source_gzip.h"

namespace tf::cost {
namespace {

class FileSource : public ByteSource {
 public:
  FileSource(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  ~FileSource() override { ::close(fd_); }

  Result<size_t> Read(char* buf, size_t n) override {
    for (;;) {
      ssize_t got = ::read(fd_, buf, n);
      if (got >= 0) return static_cast<size_t>(got);
      if (errno == EINTR) continue;
      return Unavailable(path_ + ": read failed: " + std::strerror(errno));
    }
  }

 private:
  int fd_;
  std::string path_;
};

class MemoryBytes : public ByteSource {
 public:
  explicit MemoryBytes(std::string_view data) : data_(data) {}
  Result<size_t> Read(char* buf, size_t n) override {
    size_t take = std::min(n, data_.size());
    std::memcpy(buf, data_.data(), take);
    data_.remove_prefix(take);
    return take;
  }

 private:
  std::string_view data_;
};

}  // namespace

Result<std::unique_ptr<ByteSource>> OpenFileSource(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    std::string why = path + ": " + std::strerror(err);
    if (err == ENOENT) return NotFound(why);
    if (err == EACCES) return PermissionDenied(why);
    return Unavailable(why);
  }
  unsigned char magic[2] = {0, 0};
  ssize_t got = ::pread(fd, magic, 2, 0);
  std::unique_ptr<ByteSource> file = std::make_unique<FileSource>(fd, path);
  if (got == 2 && magic[0] == 0x1f && magic[1] == 0x8b) {
    return GzipSource(std::move(file), path);
  }
  return file;
}

std::unique_ptr<ByteSource> MemorySource(std::string_view data) {
  return std::make_unique<MemoryBytes>(data);
}

std::unique_ptr<ByteSource> GzipSource(std::unique_ptr<ByteSource> inner, std::string name) {
  const char* choice = std::getenv("TF_GZIP");
  bool force_zlib = choice != nullptr && std::string_view(choice) == "zlib";
  if (gzip_internal::HaveIsal() && !force_zlib) {
    return IsalGzipSource(std::move(inner), std::move(name));
  }
  return ZlibGzipSource(std::move(inner), std::move(name));
}

}  // namespace tf::cost
