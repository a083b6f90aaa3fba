#include "cli/transfer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/crypto.h"
#include "cli/progress.h"
#include "http/url.h"
#include "objects/hashing.h"

namespace tf::cli {
namespace {

namespace fs = std::filesystem;

constexpr const char* kChecksumHeader = "x-tf-checksum-sha256";

Status Errno(const std::string& what, const fs::path& path) {
  return Status(errno == ENOSPC ? StatusCode::kResourceExhausted : StatusCode::kInvalidArgument,
                what + " " + path.string() + ": " + std::strerror(errno));
}

std::string Basename(std::string_view key) {
  size_t slash = key.rfind('/');
  return std::string(slash == std::string_view::npos ? key : key.substr(slash + 1));
}

}  // namespace

bool IsObjectUrl(std::string_view s) { return s.substr(0, kObjectScheme.size()) == kObjectScheme; }

Result<ObjectUrl> ParseObjectUrl(std::string_view s) {
  if (!IsObjectUrl(s)) return InvalidArgument("'" + std::string(s) + "' is not tf://BUCKET/KEY");
  s.remove_prefix(kObjectScheme.size());
  size_t slash = s.find('/');
  ObjectUrl url{std::string(s.substr(0, slash)), ""};
  if (slash != std::string_view::npos) url.key = std::string(s.substr(slash + 1));
  if (url.bucket.empty()) return InvalidArgument("'tf://" + std::string(s) + "' names no bucket");
  return url;
}

std::string ObjectTarget(const ObjectUrl& url) {
  return "/v1/buckets/" + http::PercentEncode(url.bucket) + "/objects/" +
         http::PercentEncode(url.key);
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

Result<uint64_t> UploadFile(ApiClient& api, const fs::path& path, const ObjectUrl& dst,
                            const std::string& content_type) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Errno("cannot open", path);
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return InvalidArgument(path.string() + " is not a regular file");
  }
  const auto size = static_cast<uint64_t>(st.st_size);
  objects::Sha256Hasher sha;
  Progress progress(path.filename().string(), size);
  http::ClientRequest request;
  request.method = "PUT";
  request.target = ObjectTarget(dst);
  if (!content_type.empty()) request.headers.emplace_back("Content-Type", content_type);
  request.body_size = size;
  request.body_source = [&](char* buffer, size_t capacity) -> Result<size_t> {
    ssize_t n;
    do {
      n = ::read(fd, buffer, capacity);
    } while (n < 0 && errno == EINTR);
    if (n < 0) return Errno("cannot read", path);
    sha.Update(std::string_view(buffer, static_cast<size_t>(n)));
    progress.Add(static_cast<uint64_t>(n));
    return static_cast<size_t>(n);
  };
  auto response = api.Exchange(std::move(request));
  ::close(fd);
  progress.Finish();
  if (!response.ok()) return response.status();
  auto info = Json::parse(response->body, nullptr, /*allow_exceptions=*/false);
  std::string local = sha.FinishHex();
  if (!info.is_object() || info.value("sha256", "") != local) {
    return Internal("the server's SHA-256 of " + dst.ToString() + " does not match " +
                    path.string() + " (" + local + "): upload it again");
  }
  return size;
}

Status StreamObject(ApiClient& api, const ObjectUrl& src,
                    const std::function<Status(std::string_view)>& sink) {
  objects::Sha256Hasher sha;
  std::string expected;
  Status failed;
  std::unique_ptr<Progress> progress;
  http::ClientRequest request;
  request.target = ObjectTarget(src);
  request.on_head = [&](const http::ClientResponse& head) {
    expected = head.Header(kChecksumHeader);
    uint64_t total = std::strtoull(head.Header("Content-Length").c_str(), nullptr, 10);
    progress = std::make_unique<Progress>(Basename(src.key), total);
    return true;
  };
  request.on_chunk = [&](std::string_view piece) {
    failed = sink(piece);
    sha.Update(piece);
    progress->Add(piece.size());
    return failed.ok();
  };
  auto response = api.Exchange(std::move(request));
  if (progress) progress->Finish();
  if (!response.ok()) return response.status();
  if (!failed.ok()) return failed;
  if (!expected.empty() && sha.FinishHex() != expected) {
    return Internal("the content of " + src.ToString() + " does not match its SHA-256");
  }
  return OkStatus();
}

Result<uint64_t> DownloadFile(ApiClient& api, const ObjectUrl& src, const fs::path& path) {
  fs::path temp = path.parent_path() / ("." + path.filename().string() + ".tf-" + RandomHex(4));
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return Errno("cannot create", temp);
  uint64_t size = 0;
  Status s = StreamObject(api, src, [&](std::string_view piece) -> Status {
    while (!piece.empty()) {
      ssize_t n = ::write(fd, piece.data(), piece.size());
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return Errno("cannot write", temp);
      piece.remove_prefix(static_cast<size_t>(n));
      size += static_cast<uint64_t>(n);
    }
    return OkStatus();
  });
  if (::close(fd) != 0 && s.ok()) s = Errno("cannot write", temp);
  if (s.ok() && ::rename(temp.c_str(), path.c_str()) != 0) s = Errno("cannot create", path);
  if (!s.ok()) {
    ::unlink(temp.c_str());
    return s;
  }
  return size;
}

Result<std::vector<std::string>> ListKeys(ApiClient& api, const std::string& bucket,
                                          const std::string& prefix) {
  std::vector<std::string> keys;
  std::string after;
  for (;;) {
    TF_ASSIGN_OR_RETURN(Json page, api.Call("GET", "/v1/buckets/" + http::PercentEncode(bucket) +
                                                       "/objects?prefix=" +
                                                       http::PercentEncode(prefix) +
                                                       "&start_after=" + http::PercentEncode(after)));
    for (const auto& o : page["objects"]) keys.push_back(o["key"].get<std::string>());
    if (!page.value("truncated", false)) return keys;
    after = page["next_start_after"].get<std::string>();
  }
}

}  // namespace tf::cli
