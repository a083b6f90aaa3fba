#include "datasets/block_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace tf::datasets {

BlockWriter::~BlockWriter() { CloseFd(); }

void BlockWriter::CloseFd() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

Status BlockWriter::Open(const std::filesystem::path& path) {
  CloseFd();
  used_ = 0;
  written_ = 0;
  failed_ = OkStatus();
  path_ = path.string();
  if (!block_) block_ = std::make_unique<char[]>(kWriteBlockBytes);
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    failed_ = Internal("cannot create " + path_ + ": " + std::strerror(errno));
    return failed_;
  }
  return OkStatus();
}

Status BlockWriter::Append(std::string_view bytes) {
  if (!failed_.ok()) return failed_;
  if (fd_ < 0) return FailedPrecondition("BlockWriter::Append with no file open");
  while (!bytes.empty()) {
    const uint64_t take = std::min<uint64_t>(bytes.size(), kWriteBlockBytes - used_);
    std::memcpy(block_.get() + used_, bytes.data(), take);
    used_ += take;
    bytes.remove_prefix(take);
    if (used_ == kWriteBlockBytes) TF_RETURN_IF_ERROR(Flush());
  }
  return OkStatus();
}

Status BlockWriter::Flush() {
  const char* p = block_.get();
  uint64_t left = used_;
  while (left > 0) {
    const ssize_t n = ::write(fd_, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = n == 0 ? "the disk took no bytes" : std::strerror(errno);
      failed_ = ResourceExhausted("cannot write " + path_ + " at byte " + std::to_string(written_) +
                                  ": " + why);
      return failed_;
    }
    p += n;
    left -= static_cast<uint64_t>(n);
    written_ += static_cast<uint64_t>(n);
  }
  used_ = 0;
  return OkStatus();
}

Status BlockWriter::Close() {
  if (!failed_.ok()) {
    CloseFd();
    return failed_;
  }
  if (fd_ < 0) return FailedPrecondition("BlockWriter::Close with no file open");
  Status flushed = Flush();
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0 && flushed.ok()) {
    failed_ = ResourceExhausted("cannot write " + path_ + ": " + std::strerror(errno));
    return failed_;
  }
  return flushed;
}

}  // namespace tf::datasets
