#include "worker/log_shipper.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace tf::worker {

std::string LogChunkKey(const std::string& prefix, int64_t number) {
  char digits[32];
  std::snprintf(digits, sizeof digits, "%010lld", static_cast<long long>(number));
  std::string base = prefix;
  while (!base.empty() && base.back() == '/') base.pop_back();
  return base.empty() ? std::string(digits) : base + "/" + digits;
}

LogShipper::LogShipper(client::ObjectClient& client, std::string bucket, std::string prefix,
                       std::filesystem::path file, size_t max_chunk_bytes)
    : client_(client),
      bucket_(std::move(bucket)),
      prefix_(std::move(prefix)),
      file_(std::move(file)),
      max_chunk_bytes_(max_chunk_bytes == 0 ? kMaxLogChunkBytes : max_chunk_bytes) {}

Result<int> LogShipper::ShipNow() {
  MutexLock lock(mu_);
  int fd = ::open(file_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return 0;
    return InvalidArgument("cannot open log " + file_.string() + ": " + std::strerror(errno));
  }
  int shipped = 0;
  Status failed;
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    failed = InvalidArgument("cannot read log " + file_.string() + ": " + std::strerror(errno));
  }
  // Up to the size the file had now; what is appended meanwhile goes next time.
  const uint64_t end = failed.ok() ? static_cast<uint64_t>(st.st_size) : 0;
  std::string chunk;
  while (failed.ok() && offset_ < end) {
    chunk.resize(static_cast<size_t>(std::min<uint64_t>(end - offset_, max_chunk_bytes_)));
    size_t filled = 0;
    errno = 0;
    while (filled < chunk.size()) {
      ssize_t n = ::pread(fd, chunk.data() + filled, chunk.size() - filled,
                          static_cast<off_t>(offset_ + filled));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      filled += static_cast<size_t>(n);
    }
    if (filled < chunk.size()) {
      failed = InvalidArgument("cannot read log " + file_.string() + " at byte " +
                               std::to_string(offset_ + filled) +
                               (errno ? std::string(": ") + std::strerror(errno) : ""));
      break;
    }
    failed = client_.PutBytes(bucket_, LogChunkKey(prefix_, next_chunk_), chunk);
    if (!failed.ok()) break;
    ++next_chunk_;
    offset_ += filled;
    ++shipped;
  }
  ::close(fd);
  if (!failed.ok()) return failed;
  return shipped;
}

int64_t LogShipper::next_chunk() const {
  MutexLock lock(mu_);
  return next_chunk_;
}

uint64_t LogShipper::shipped_bytes() const {
  MutexLock lock(mu_);
  return offset_;
}

Result<std::vector<LogChunk>> ReadLogChunks(client::ObjectClient& client, const std::string& bucket,
                                            const std::string& prefix, int64_t from_chunk,
                                            size_t max_bytes) {
  if (from_chunk < 0) return InvalidArgument("chunk numbers start at 0");
  std::vector<LogChunk> out;
  size_t gathered = 0;
  for (int64_t number = from_chunk; out.empty() || gathered < max_bytes; ++number) {
    TF_ASSIGN_OR_RETURN(std::optional<std::string> bytes,
                        client.GetBytes(bucket, LogChunkKey(prefix, number)));
    if (!bytes) break;
    gathered += bytes->size();
    out.push_back({number, std::move(*bytes)});
  }
  return out;
}

}  // namespace tf::worker
