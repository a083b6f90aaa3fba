// GzipSource's inflater when the build found ISA-L (TF_HAVE_ISAL): igzip's streaming inflate,
// member after member. Same bytes and same errors as the zlib one (byte_source_zlib.cc).
#include "cost/audit/byte_source.h"
#include "cost/audit/byte_source_gzip.h"

#ifdef TF_HAVE_ISAL

#include <isa-l/igzip_lib.h>

#include <vector>

namespace tf::cost {
namespace {

std::string IsalError(int rc) {
  switch (rc) {
    case ISAL_INVALID_BLOCK:
      return "invalid deflate block";
    case ISAL_INVALID_SYMBOL:
      return "invalid deflate symbol";
    case ISAL_INVALID_LOOKBACK:
      return "invalid distance too far back";
    case ISAL_INVALID_WRAPPER:
      return "incorrect header check";
    case ISAL_UNSUPPORTED_METHOD:
      return "unknown compression method";
    case ISAL_INCORRECT_CHECKSUM:
      return "incorrect data check";
    case ISAL_NEED_DICT:
      return "needs a preset dictionary";
    default:
      return "igzip error " + std::to_string(rc);
  }
}

class IsalInflater : public ByteSource {
 public:
  IsalInflater(std::unique_ptr<ByteSource> inner, std::string name)
      : inner_(std::move(inner)), name_(std::move(name)), in_(kChunk) {
    // The state is ~85 KB of tables and buffers: on the heap, with the object.
    isal_inflate_init(&state_);
  }

  Result<size_t> Read(char* buf, size_t n) override {
    const uint32_t want = static_cast<uint32_t>(std::min<size_t>(n, UINT32_MAX));
    if (want == 0 || done_) return size_t{0};
    state_.next_out = reinterpret_cast<uint8_t*>(buf);
    state_.avail_out = want;
    while (state_.avail_out == want) {
      if (state_.avail_in == 0 && !eof_) {
        auto got = inner_->Read(in_.data(), in_.size());
        if (!got.ok()) return got.status();
        if (*got == 0) {
          eof_ = true;
        } else {
          state_.next_in = reinterpret_cast<uint8_t*>(in_.data());
          state_.avail_in = static_cast<uint32_t>(*got);
          read_ += *got;
        }
      }
      if (!in_member_) {
        if (state_.avail_in == 0) {  // the input ended between members
          done_ = true;
          break;
        }
        StartMember();
      }
      const uint32_t in_before = state_.avail_in, out_before = state_.avail_out;
      int rc = isal_inflate(&state_);
      if (rc < 0 || rc == ISAL_NEED_DICT) {
        return gzip_internal::Corrupt(name_, Offset(), IsalError(rc));
      }
      if (state_.block_state == ISAL_BLOCK_FINISH) {
        in_member_ = false;  // another member may follow
        continue;
      }
      if (state_.avail_in != in_before || state_.avail_out != out_before) continue;
      if (eof_) return gzip_internal::EndsEarly(name_, read_, member_start_);
      if (state_.avail_in != 0) {
        return Internal(name_ + ": igzip made no progress at byte " + std::to_string(Offset()));
      }
    }
    return size_t{want - state_.avail_out};
  }

 private:
  static constexpr size_t kChunk = 256 * 1024;
  uint64_t Offset() const { return read_ - state_.avail_in; }

  // Readies the state for a member whose first byte is at next_in: gzip when it starts with
  // the gzip magic byte, else zlib (as zlib's inflate accepts both).
  void StartMember() {
    uint8_t* next_in = state_.next_in;
    uint32_t avail_in = state_.avail_in;
    uint8_t* next_out = state_.next_out;
    uint32_t avail_out = state_.avail_out;
    isal_inflate_reset(&state_);
    state_.next_in = next_in;
    state_.avail_in = avail_in;
    state_.next_out = next_out;
    state_.avail_out = avail_out;
    state_.crc_flag = next_in[0] == 0x1f ? ISAL_GZIP : ISAL_ZLIB;
    state_.hist_bits = 0;  // the full 32 KB window
    in_member_ = true;
    member_start_ = Offset();
  }

  std::unique_ptr<ByteSource> inner_;
  std::string name_;
  std::vector<char> in_;
  inflate_state state_;
  bool in_member_ = false;
  bool eof_ = false;           // inner_ has returned 0
  bool done_ = false;          // every member read, nothing after
  uint64_t read_ = 0;          // compressed bytes taken from inner_
  uint64_t member_start_ = 0;  // where the current member began
};

}  // namespace

std::unique_ptr<ByteSource> IsalGzipSource(std::unique_ptr<ByteSource> inner, std::string name) {
  return std::make_unique<IsalInflater>(std::move(inner), std::move(name));
}

bool gzip_internal::HaveIsal() { return true; }

}  // namespace tf::cost

#else  // built without ISA-L

namespace tf::cost {

std::unique_ptr<ByteSource> IsalGzipSource(std::unique_ptr<ByteSource>, std::string) {
  return nullptr;
}

bool gzip_internal::HaveIsal() { return false; }

}  // namespace tf::cost

#endif
