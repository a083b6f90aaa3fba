#include "cost/audit/byte_sink.h"

#include <errno.h>
#include <zlib.h>

#include <cstdio>
#include <cstring>

namespace tf::cost {
namespace {

class FileSink : public ByteSink {
 public:
  FileSink(FILE* f, std::string path) : f_(f), path_(std::move(path)) {}
  ~FileSink() override {
    if (f_) std::fclose(f_);
  }
  Status Write(std::string_view data) override {
    if (std::fwrite(data.data(), 1, data.size(), f_) != data.size()) return Error();
    return OkStatus();
  }
  Status Close() override {
    int rc = std::fclose(f_);
    f_ = nullptr;
    return rc == 0 ? OkStatus() : Error();
  }

 private:
  Status Error() { return Unavailable(path_ + ": write failed: " + std::strerror(errno)); }
  FILE* f_;
  std::string path_;
};

class GzipSink : public ByteSink {
 public:
  GzipSink(gzFile f, std::string path) : f_(f), path_(std::move(path)) {}
  ~GzipSink() override {
    if (f_) gzclose(f_);
  }
  Status Write(std::string_view data) override {
    while (!data.empty()) {
      unsigned chunk = static_cast<unsigned>(std::min<size_t>(data.size(), 1 << 30));
      if (gzwrite(f_, data.data(), chunk) != static_cast<int>(chunk)) {
        return Unavailable(path_ + ": gzip write failed");
      }
      data.remove_prefix(chunk);
    }
    return OkStatus();
  }
  Status Close() override {
    int rc = gzclose(f_);
    f_ = nullptr;
    return rc == Z_OK ? OkStatus() : Unavailable(path_ + ": gzip close failed");
  }

 private:
  gzFile f_;
  std::string path_;
};

class StringBytes : public ByteSink {
 public:
  explicit StringBytes(std::string* out) : out_(out) {}
  Status Write(std::string_view data) override {
    out_->append(data);
    return OkStatus();
  }
  Status Close() override { return OkStatus(); }

 private:
  std::string* out_;
};

}  // namespace

Result<std::unique_ptr<ByteSink>> OpenFileSink(const std::string& path, bool gzip) {
  if (gzip) {
    gzFile f = gzopen(path.c_str(), "wb1");
    if (!f) return Unavailable(path + ": cannot create: " + std::strerror(errno));
    gzbuffer(f, 1 << 20);
    return std::unique_ptr<ByteSink>(new GzipSink(f, path));
  }
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return Unavailable(path + ": cannot create: " + std::strerror(errno));
  return std::unique_ptr<ByteSink>(new FileSink(f, path));
}

std::unique_ptr<ByteSink> StringSink(std::string* out) {
  return std::make_unique<StringBytes>(out);
}

}  // namespace tf::cost
