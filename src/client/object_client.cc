// The streaming transfers under every ObjectClient over HTTP and under `tensorfleet cp`.
#include "client/object_client.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>

#include "base/crypto.h"
#include "base/sha256_stream.h"
#include "http/url.h"

namespace tf::client {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

Status Errno(const std::string& what, const fs::path& path) {
  return Status(errno == ENOSPC ? StatusCode::kResourceExhausted : StatusCode::kInvalidArgument,
                what + " " + path.string() + ": " + std::strerror(errno));
}

std::string Describe(const std::string& bucket, const std::string& key) {
  return "tf://" + bucket + "/" + key;
}

bool SameVersion(const struct stat& a, const struct stat& b) {
  return a.st_size == b.st_size && a.st_mtim.tv_sec == b.st_mtim.tv_sec &&
         a.st_mtim.tv_nsec == b.st_mtim.tv_nsec;
}

}  // namespace

std::string ObjectTarget(std::string_view bucket, std::string_view key) {
  return "/v1/buckets/" + http::PercentEncode(bucket) + "/objects/" + http::PercentEncode(key);
}

Result<fs::path> LocalPathFor(const fs::path& dir, std::string_view relative) {
  fs::path out = dir;
  std::string_view rest = relative;
  if (rest.empty()) return InvalidArgument("an empty key is not a file name");
  while (true) {
    size_t slash = rest.find('/');
    std::string_view part = rest.substr(0, slash);
    if (part.empty() || part == "." || part == ".." || part.find('\0') != std::string_view::npos) {
      return InvalidArgument("key '" + std::string(relative) + "' is not a safe local path");
    }
    out /= std::string(part);
    if (slash == std::string_view::npos) return out;
    rest.remove_prefix(slash + 1);
  }
}

Result<uint64_t> UploadFile(const ObjectExchange& exchange, const fs::path& path,
                            const std::string& bucket, const std::string& key,
                            const UploadOptions& options, const TransferProgress& progress) {
  // Not blocking in open on a FIFO that nobody writes to (refused below unless allowed, and
  // then read blocking as usual).
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return Errno("cannot open", path);
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  Result<uint64_t> sent = UploadDescriptor(exchange, fd, path, bucket, key, options, progress);
  ::close(fd);
  return sent;
}

Result<uint64_t> UploadDescriptor(const ObjectExchange& exchange, int fd, const fs::path& path,
                                  const std::string& bucket, const std::string& key,
                                  const UploadOptions& options, const TransferProgress& progress) {
  struct stat before {};
  if (::fstat(fd, &before) != 0) return Errno("cannot read", path);
  // A pipe, socket or character device (stdin) is read to its end, its size unknown until then:
  // it goes chunked. Only where the caller asks: a path that turns out to be /dev/zero or a FIFO
  // nobody writes to would never end.
  const bool stream =
      S_ISFIFO(before.st_mode) || S_ISSOCK(before.st_mode) || S_ISCHR(before.st_mode);
  if (!S_ISREG(before.st_mode) && !(stream && options.allow_stream)) {
    return InvalidArgument(path.string() + " is not a regular file");
  }
  // A regular file is read from where the descriptor stands (stdin half read by a shell).
  uint64_t size = 0;
  if (!stream) {
    const off_t at = ::lseek(fd, 0, SEEK_CUR);
    size = static_cast<uint64_t>(before.st_size - std::clamp<off_t>(at, 0, before.st_size));
  }
  uint64_t sent = 0;
  Sha256Stream sha;
  if (progress.start) progress.start(size);
  http::ClientRequest request;
  request.method = "PUT";
  request.target = ObjectTarget(bucket, key);
  if (!options.content_type.empty()) {
    request.headers.emplace_back("Content-Type", options.content_type);
  }
  if (!options.expected_sha256.empty()) {
    request.headers.emplace_back(kChecksumHeader, options.expected_sha256);
  }
  if (!stream) request.body_size = size;
  request.body_source = [&](char* buffer, size_t capacity) -> Result<size_t> {
    ssize_t n;
    do {
      n = ::read(fd, buffer, capacity);
    } while (n < 0 && errno == EINTR);
    if (n < 0) return Errno("cannot read", path);
    sha.Update(std::string_view(buffer, static_cast<size_t>(n)));
    sent += static_cast<uint64_t>(n);
    if (progress.add) progress.add(static_cast<uint64_t>(n));
    return static_cast<size_t>(n);
  };
  auto response = exchange(std::move(request));
  struct stat after {};
  const bool changed = !stream && (::fstat(fd, &after) != 0 || !SameVersion(before, after));
  std::string local = sha.FinishHex();
  if (!options.expected_sha256.empty() && local != options.expected_sha256 &&
      (response.ok() || response.status().code() == StatusCode::kInvalidArgument)) {
    return Aborted(path.string() + " changed after it was hashed: its content is now " + local +
                   ", not " + options.expected_sha256 + "; " + Describe(bucket, key) +
                   " was not stored");
  }
  if (!response.ok()) {
    if (changed) {
      return Aborted(path.string() +
                     " changed while it was uploaded: " + response.status().message());
    }
    return response.status();
  }
  auto info = Json::parse(response->body, nullptr, /*allow_exceptions=*/false);
  if (!info.is_object() || info.value("sha256", "") != local) {
    return Internal("the server's SHA-256 of " + Describe(bucket, key) + " does not match " +
                    path.string() + " (" + local + "): upload it again");
  }
  if (changed) {
    return Aborted(path.string() + " changed while it was uploaded; " + Describe(bucket, key) +
                   " holds what was read");
  }
  return stream ? sent : size;
}

Status StreamObject(const ObjectExchange& exchange, const std::string& bucket,
                    const std::string& key, const std::function<Status(std::string_view)>& sink,
                    const TransferProgress& progress) {
  Sha256Stream sha;
  std::string expected;
  Status failed;
  http::ClientRequest request;
  request.target = ObjectTarget(bucket, key);
  request.on_head = [&](const http::ClientResponse& head) {
    expected = head.Header(kChecksumHeader);
    if (progress.start) {
      progress.start(std::strtoull(head.Header("Content-Length").c_str(), nullptr, 10));
    }
    return true;
  };
  request.on_chunk = [&](std::string_view piece) {
    failed = sink(piece);
    sha.Update(piece);
    if (progress.add) progress.add(piece.size());
    return failed.ok();
  };
  auto response = exchange(std::move(request));
  if (!response.ok()) return response.status();
  if (!failed.ok()) return failed;
  if (!expected.empty() && sha.FinishHex() != expected) {
    return Internal("the content of " + Describe(bucket, key) + " does not match its SHA-256");
  }
  return OkStatus();
}

namespace {

// Where a download of `path` lands: a symlink's target (so the link stays a link), `path`
// itself otherwise.
fs::path DownloadTarget(const fs::path& path) {
  std::error_code ec;
  if (!fs::is_symlink(path, ec)) return path;
  fs::path target = fs::weakly_canonical(path, ec);
  return ec ? path : target;
}

// A hidden name beside `path` for the download in progress: ".NAME.tmp-XXXXXXXX", or a short
// one where that would pass the file system's limit on a name.
fs::path TempPathFor(const fs::path& path) {
  std::string name = "." + path.filename().string() + ".tmp-" + RandomHex(4);
  if (name.size() > 255) name = ".tensorfleet-download.tmp-" + RandomHex(4);
  return path.parent_path() / name;
}

// Writes every byte of `piece` to `fd`; the error names `path`, where the content is going.
Status WriteAll(int fd, std::string_view piece, const fs::path& path, uint64_t* size) {
  while (!piece.empty()) {
    ssize_t n = ::write(fd, piece.data(), piece.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Errno("cannot write", path);
    piece.remove_prefix(static_cast<size_t>(n));
    *size += static_cast<uint64_t>(n);
  }
  return OkStatus();
}

// The temporary files of the downloads in progress, for RemoveDownloadTempsOnSignal's handler,
// which may only read them: each slot is claimed, filled, then marked ready.
struct TempSlot {
  std::atomic<bool> claimed{false};
  std::atomic<bool> ready{false};
  char path[4096];
};
TempSlot temp_slots[16];

// Names a temporary file in a free slot for as long as it lives (none: it is not named).
class TempRegistration {
 public:
  explicit TempRegistration(const fs::path& temp) {
    const std::string& p = temp.native();
    if (p.size() >= sizeof(TempSlot::path)) return;
    for (TempSlot& slot : temp_slots) {
      bool free = false;
      if (!slot.claimed.compare_exchange_strong(free, true)) continue;
      std::memcpy(slot.path, p.c_str(), p.size() + 1);
      slot.ready.store(true);
      slot_ = &slot;
      return;
    }
  }
  ~TempRegistration() {
    if (slot_ == nullptr) return;
    slot_->ready.store(false);
    slot_->claimed.store(false);
  }
  TempRegistration(const TempRegistration&) = delete;
  TempRegistration& operator=(const TempRegistration&) = delete;

 private:
  TempSlot* slot_ = nullptr;
};

extern "C" void RemoveTempsAndDie(int sig) {
  for (TempSlot& slot : temp_slots) {
    if (slot.ready.load()) ::unlink(slot.path);
  }
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

}  // namespace

void RemoveDownloadTempsOnSignal() {
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction now {};
    if (::sigaction(sig, nullptr, &now) == 0 && now.sa_handler == SIG_DFL) {
      ::signal(sig, RemoveTempsAndDie);
    }
  }
}

Result<uint64_t> DownloadFile(const ObjectExchange& exchange, const std::string& bucket,
                              const std::string& key, const fs::path& requested,
                              const TransferProgress& progress, bool follow_link) {
  // /dev/stdout and the like are links to whatever the descriptor is: never resolved, never
  // replaced, only written into.
  const bool device_path =
      requested.native().starts_with("/dev/") || requested.native().starts_with("/proc/");
  const fs::path path = follow_link && !device_path ? DownloadTarget(requested) : requested;
  struct stat st {};
  // Without follow_link a link there is replaced, never written through (a key of a folder
  // copied must not reach where a link in the destination points).
  const bool exists = (follow_link ? ::stat(path.c_str(), &st) : ::lstat(path.c_str(), &st)) == 0;
  if (exists && S_ISDIR(st.st_mode)) {
    return InvalidArgument("cannot save " + Describe(bucket, key) + " as " + path.string() +
                           ": it is a directory");
  }
  uint64_t size = 0;
  if (device_path || (exists && (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ||
                                 S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)))) {
    // A device or a pipe (/dev/null, a FIFO a reader waits on): written into, never replaced.
    int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (fd < 0) return Errno("cannot open", path);
    Status s = StreamObject(
        exchange, bucket, key,
        [&](std::string_view piece) { return WriteAll(fd, piece, path, &size); }, progress);
    if (::close(fd) != 0 && s.ok()) s = Errno("cannot write", path);
    if (!s.ok()) return s;
    return size;
  }
  // A file: the content goes to a hidden file beside it, renamed over it once whole and checked,
  // so a failed download leaves what was there. A file that was there keeps its permissions.
  const fs::path temp = TempPathFor(path);
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return Errno("cannot save to", path);
  TempRegistration registered(temp);
  if (exists && S_ISREG(st.st_mode)) (void)::fchmod(fd, st.st_mode & 07777);
  Status s = StreamObject(
      exchange, bucket, key,
      [&](std::string_view piece) { return WriteAll(fd, piece, path, &size); }, progress);
  if (::close(fd) != 0 && s.ok()) s = Errno("cannot write", path);
  if (s.ok() && ::rename(temp.c_str(), path.c_str()) != 0) s = Errno("cannot save to", path);
  if (!s.ok()) {
    ::unlink(temp.c_str());
    return s;
  }
  return size;
}

Result<std::vector<std::string>> ListObjectKeys(const ObjectExchange& exchange,
                                                const std::string& bucket,
                                                const std::string& prefix, int page_size) {
  std::vector<std::string> keys;
  std::string after;
  for (;;) {
    http::ClientRequest request;
    request.target = "/v1/buckets/" + http::PercentEncode(bucket) +
                     "/objects?prefix=" + http::PercentEncode(prefix) +
                     "&start_after=" + http::PercentEncode(after);
    if (page_size > 0) request.target += "&limit=" + std::to_string(page_size);
    TF_ASSIGN_OR_RETURN(http::ClientResponse response, exchange(std::move(request)));
    Json page = Json::parse(response.body, nullptr, /*allow_exceptions=*/false);
    if (!page.is_object() || !page["objects"].is_array()) {
      return Internal("the listing of " + Describe(bucket, prefix) + " is not a JSON listing");
    }
    for (const auto& o : page["objects"]) {
      if (!o.is_object() || !o["key"].is_string()) {
        return Internal("the listing of " + Describe(bucket, prefix) + " has an entry with no key");
      }
      keys.push_back(o["key"].get<std::string>());
    }
    if (!page.value("truncated", false)) return keys;
    if (!page["next_start_after"].is_string()) {
      return Internal("the listing of " + Describe(bucket, prefix) +
                      " is truncated with no next key");
    }
    after = page["next_start_after"].get<std::string>();
  }
}

}  // namespace tf::client
