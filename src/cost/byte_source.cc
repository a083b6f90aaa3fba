#include "cost/byte_source.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <cstring>
#include <vector>

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

class GzipBytes : public ByteSource {
 public:
  GzipBytes(std::unique_ptr<ByteSource> inner, std::string name)
      : inner_(std::move(inner)), name_(std::move(name)), in_(kChunk) {
    std::memset(&zs_, 0, sizeof zs_);
    // 15 window bits + 32: accept a gzip or a zlib header.
    ok_ = inflateInit2(&zs_, 15 + 32) == Z_OK;
  }
  ~GzipBytes() override { inflateEnd(&zs_); }

  Result<size_t> Read(char* buf, size_t n) override {
    if (!ok_) return Internal(name_ + ": zlib could not start");
    zs_.next_out = reinterpret_cast<Bytef*>(buf);
    zs_.avail_out = static_cast<uInt>(n);
    while (zs_.avail_out == n && !done_) {
      if (zs_.avail_in == 0) {
        auto got = inner_->Read(in_.data(), in_.size());
        if (!got.ok()) return got.status();
        if (*got == 0) {
          if (!in_member_) {
            done_ = true;
            break;
          }
          return InvalidArgument(name_ + ": gzip data ends early (truncated file?)");
        }
        zs_.next_in = reinterpret_cast<Bytef*>(in_.data());
        zs_.avail_in = static_cast<uInt>(*got);
      }
      in_member_ = true;
      int rc = inflate(&zs_, Z_NO_FLUSH);
      if (rc == Z_STREAM_END) {
        in_member_ = false;  // another member may follow
        inflateReset(&zs_);
      } else if (rc != Z_OK && !(rc == Z_BUF_ERROR && zs_.avail_in == 0)) {
        return InvalidArgument(name_ + ": corrupt gzip data (" +
                               (zs_.msg ? std::string(zs_.msg) : "zlib error") + ")");
      }
    }
    return n - zs_.avail_out;
  }

 private:
  static constexpr size_t kChunk = 256 * 1024;
  std::unique_ptr<ByteSource> inner_;
  std::string name_;
  std::vector<char> in_;
  z_stream zs_;
  bool ok_ = false;
  bool in_member_ = false;
  bool done_ = false;
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
  return std::make_unique<GzipBytes>(std::move(inner), std::move(name));
}

}  // namespace tf::cost
