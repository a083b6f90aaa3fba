#include "objects/bucket_client.h"

#include <utility>

#include "s3/sigv4.h"

namespace tf::objects {
namespace {

constexpr size_t kMaxIdle = 8;
constexpr std::chrono::milliseconds kTimeout{60'000};

// The text of <Name>...</Name> in an S3 error document, or "".
std::string XmlField(const std::string& body, const std::string& name) {
  const std::string open = "<" + name + ">", close = "</" + name + ">";
  size_t begin = body.find(open);
  if (begin == std::string::npos) return "";
  begin += open.size();
  size_t end = body.find(close, begin);
  return end == std::string::npos ? "" : body.substr(begin, end - begin);
}

}  // namespace

BucketClient::BucketClient(s3::BucketLocation location, const Clock& clock)
    : location_(std::move(location)), clock_(clock) {}

BucketClient::~BucketClient() = default;

Result<std::unique_ptr<http::Client>> BucketClient::Acquire() {
  {
    MutexLock lock(mu_);
    if (!idle_.empty()) {
      auto client = std::move(idle_.back());
      idle_.pop_back();
      return client;
    }
  }
  return http::Client::Create(location_.endpoint);
}

void BucketClient::Release(std::unique_ptr<http::Client> client) {
  MutexLock lock(mu_);
  if (idle_.size() < kMaxIdle) idle_.push_back(std::move(client));
}

Result<http::ClientResponse> BucketClient::Call(http::ClientRequest request,
                                                const std::string& path,
                                                const std::string& payload_sha256) {
  std::string query;
  if (size_t q = request.target.find('?'); q != std::string::npos) {
    query = request.target.substr(q + 1);
  }
  SignRequest(location_, request.method, path, query, payload_sha256, clock_.Now(),
              &request.headers);
  request.timeout = kTimeout;
  TF_ASSIGN_OR_RETURN(auto client, Acquire());
  auto response = client->Exchange(request);
  if (!response.ok()) {
    return Unavailable("object store " + location_.endpoint + " did not answer " + request.method +
                       " " + path + ": " + response.status().message());
  }
  Release(std::move(client));
  return response;
}

Status BucketClient::ErrorOf(const std::string& operation, const std::string& what,
                             const http::ClientResponse& response) const {
  std::string code = XmlField(response.body, "Code");
  std::string message = XmlField(response.body, "Message");
  std::string text = "object store " + location_.endpoint + ": " + operation + " " + what +
                     " answered " + std::to_string(response.status);
  if (!code.empty()) text += " " + code;
  if (!message.empty()) text += ": " + message;
  if (response.status == 404) return NotFound(text);
  if (response.status == 403 || response.status == 401) return PermissionDenied(text);
  if (response.status >= 500) return Unavailable(text);
  return Internal(text);
}

Status BucketClient::CheckBucket() {
  const std::string path = "/" + location_.bucket;
  http::ClientRequest r;
  r.method = "HEAD";
  r.target = path;
  TF_ASSIGN_OR_RETURN(auto response, Call(std::move(r), path, std::string(s3::kEmptySha256)));
  if (response.status != 200) return ErrorOf("HEAD", "bucket " + location_.bucket, response);
  return OkStatus();
}

Status BucketClient::Put(const std::string& key, uint64_t size, const std::string& sha256,
                         std::function<Result<size_t>(char*, size_t)> source) {
  const std::string path = location_.PathOf(key);
  http::ClientRequest r;
  r.method = "PUT";
  r.target = path;
  r.headers.emplace_back("Content-Type", "application/octet-stream");
  r.body_source = std::move(source);
  r.body_size = size;
  TF_ASSIGN_OR_RETURN(auto response, Call(std::move(r), path, sha256));
  if (response.status != 200) return ErrorOf("PUT", key, response);
  return OkStatus();
}

Result<uint64_t> BucketClient::Size(const std::string& key) {
  const std::string path = location_.PathOf(key);
  http::ClientRequest r;
  r.method = "HEAD";
  r.target = path;
  TF_ASSIGN_OR_RETURN(auto response, Call(std::move(r), path, std::string(s3::kEmptySha256)));
  if (response.status != 200) return ErrorOf("HEAD", key, response);
  const std::string& length = response.Header("Content-Length");
  uint64_t size = 0;
  try {
    size_t used = 0;
    size = std::stoull(length, &used);
    if (used != length.size()) throw std::invalid_argument(length);
  } catch (const std::exception&) {
    return Internal("object store " + location_.endpoint + ": HEAD " + key +
                    " gave no usable Content-Length ('" + length + "')");
  }
  return size;
}

Result<std::string> BucketClient::GetRange(const std::string& key, uint64_t offset, uint64_t n) {
  const std::string path = location_.PathOf(key);
  http::ClientRequest r;
  r.method = "GET";
  r.target = path;
  const std::string range =
      "bytes=" + std::to_string(offset) + "-" + std::to_string(offset + n - 1);
  r.headers.emplace_back("Range", range);
  TF_ASSIGN_OR_RETURN(auto response, Call(std::move(r), path, std::string(s3::kEmptySha256)));
  if (response.status != 206 && response.status != 200) {
    return ErrorOf("GET", key + " (" + range + ")", response);
  }
  if (response.status == 200 && offset == 0 && response.body.size() > n) {
    response.body.resize(n);  // a service that ignores Range sends the whole object
  }
  if (response.body.size() != n) {
    return Internal("object store " + location_.endpoint + ": GET " + key + " (" + range +
                    ") returned " + std::to_string(response.body.size()) + " bytes");
  }
  return std::move(response.body);
}

Status BucketClient::Delete(const std::string& key) {
  const std::string path = location_.PathOf(key);
  http::ClientRequest r;
  r.method = "DELETE";
  r.target = path;
  TF_ASSIGN_OR_RETURN(auto response, Call(std::move(r), path, std::string(s3::kEmptySha256)));
  if (response.status == 204 || response.status == 200 || response.status == 404) {
    return OkStatus();
  }
  return ErrorOf("DELETE", key, response);
}

}  // namespace tf::objects
