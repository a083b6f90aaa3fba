// GzipSource's inflater when ISA-L is missing or TF_GZIP=zlib: zlib's inflate, member after
// member.
#include <zlib.h>

#include <cstring>
#include <vector>

#include "cost/audit/byte_source.h"
#include "cost/audit/byte_source_gzip.h"

namespace tf::cost {
namespace {

class ZlibInflater : public ByteSource {
 public:
  ZlibInflater(std::unique_ptr<ByteSource> inner, std::string name)
      : inner_(std::move(inner)), name_(std::move(name)), in_(kChunk) {
    std::memset(&zs_, 0, sizeof zs_);
    // 15 window bits + 32: accept a gzip or a zlib header.
    ok_ = inflateInit2(&zs_, 15 + 32) == Z_OK;
  }
  ~ZlibInflater() override { inflateEnd(&zs_); }

  Result<size_t> Read(char* buf, size_t n) override {
    if (!ok_) return Internal(name_ + ": zlib could not start");
    const uInt want = static_cast<uInt>(std::min<size_t>(n, UINT32_MAX));
    if (want == 0) return size_t{0};
    zs_.next_out = reinterpret_cast<Bytef*>(buf);
    zs_.avail_out = want;
    while (zs_.avail_out == want && !done_) {
      if (zs_.avail_in == 0) {
        auto got = inner_->Read(in_.data(), in_.size());
        if (!got.ok()) return got.status();
        if (*got == 0) {
          if (!in_member_) {
            done_ = true;
            break;
          }
          return gzip_internal::EndsEarly(name_, read_, member_start_);
        }
        zs_.next_in = reinterpret_cast<Bytef*>(in_.data());
        zs_.avail_in = static_cast<uInt>(*got);
        read_ += *got;
      }
      if (!in_member_) {
        in_member_ = true;
        member_start_ = Offset();
      }
      int rc = inflate(&zs_, Z_NO_FLUSH);
      if (rc == Z_STREAM_END) {
        in_member_ = false;  // another member may follow
        inflateReset(&zs_);
      } else if (rc != Z_OK && !(rc == Z_BUF_ERROR && zs_.avail_in == 0)) {
        return gzip_internal::Corrupt(
            name_, Offset(), zs_.msg ? std::string(zs_.msg) : "zlib error " + std::to_string(rc));
      }
    }
    return size_t{want - zs_.avail_out};
  }

 private:
  static constexpr size_t kChunk = 256 * 1024;
  uint64_t Offset() const { return read_ - zs_.avail_in; }

  std::unique_ptr<ByteSource> inner_;
  std::string name_;
  std::vector<char> in_;
  z_stream zs_;
  bool ok_ = false;
  bool in_member_ = false;
  bool done_ = false;
  uint64_t read_ = 0;          // compressed bytes taken from inner_
  uint64_t member_start_ = 0;  // where the current member began
};

}  // namespace

std::unique_ptr<ByteSource> ZlibGzipSource(std::unique_ptr<ByteSource> inner, std::string name) {
  return std::make_unique<ZlibInflater>(std::move(inner), std::move(name));
}

}  // namespace tf::cost
