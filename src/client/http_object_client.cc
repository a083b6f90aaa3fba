// ObjectClient over the server's native object API.
#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>

#include "base/crypto.h"
#include "base/mutex.h"
#include "client/bearer.h"
#include "client/object_client.h"

namespace tf::client {
namespace {

using Json = nlohmann::json;

// PutBytes sends a body up to this size whole with its head; a larger one (a dataset's shard of
// 64 MiB) streams from the caller's memory instead of being copied into the request first
// (into fresh memory, a page fault for every 4 KiB: most of the packer's time on a VM whose page
// faults are dear). Small bodies (manifests, log chunks) keep the single write, without the
// wait for "100 Continue" a streamed body makes.
constexpr size_t kWholeBodyBytes = size_t{1} << 20;

// The server's error in an answer that is not 2xx: {"error": {"code", "message"}}.
Status ErrorFromAnswer(const http::ClientResponse& response) {
  Json j = Json::parse(response.body, nullptr, /*allow_exceptions=*/false);
  if (j.is_object() && j["error"].is_object()) {
    std::string name = j["error"].value("code", "");
    std::string message = j["error"].value("message", "");
    for (int c = static_cast<int>(StatusCode::kInvalidArgument);
         c <= static_cast<int>(StatusCode::kInternal); ++c) {
      if (StatusCodeName(static_cast<StatusCode>(c)) == name) {
        return Status(static_cast<StatusCode>(c), message);
      }
    }
  }
  return Internal("the object service answered HTTP " + std::to_string(response.status));
}

class HttpObjectClient final : public ObjectClient {
 public:
  HttpObjectClient(std::string server_url, std::string token)
      : server_url_(std::move(server_url)), token_(std::move(token)) {
    exchange_ = [this](http::ClientRequest request) { return Exchange(std::move(request)); };
  }

  Status EnsureBucket(const std::string& bucket) override {
    http::ClientRequest request;
    request.method = "POST";
    request.target = "/v1/buckets";
    request.headers.emplace_back("Content-Type", "application/json");
    request.body = Json{{"name", bucket}}.dump();
    auto response = Exchange(std::move(request));
    if (!response.ok() && response.status().code() != StatusCode::kAlreadyExists) {
      return response.status().WithContext("cannot create bucket '" + bucket + "'");
    }
    return OkStatus();
  }

  Status PutFile(const std::string& bucket, const std::string& key,
                 const std::filesystem::path& file) override {
    return UploadFile(exchange_, file, bucket, key, {}).status();
  }

  Status PutFileChecked(const std::string& bucket, const std::string& key,
                        const std::filesystem::path& file, const std::string& sha256) override {
    UploadOptions options;
    options.expected_sha256 = sha256;
    return UploadFile(exchange_, file, bucket, key, options).status();
  }

  Status PutBytes(const std::string& bucket, const std::string& key,
                  std::string_view bytes) override {
    return PutBytesChecked(bucket, key, bytes, Sha256Hex(bytes));
  }

  Status PutBytesChecked(const std::string& bucket, const std::string& key, std::string_view bytes,
                         const std::string& sha) override {
    http::ClientRequest request;
    request.method = "PUT";
    request.target = ObjectTarget(bucket, key);
    if (bytes.size() <= kWholeBodyBytes) {
      request.body = std::string(bytes);
    } else {  // sent from the caller's memory a piece at a time, not copied whole first
      request.body_size = bytes.size();
      request.body_source = [rest = bytes](char* buffer,
                                           size_t capacity) mutable -> Result<size_t> {
        const size_t n = std::min(capacity, rest.size());
        std::memcpy(buffer, rest.data(), n);
        rest.remove_prefix(n);
        return n;
      };
    }
    // The server stores the object only if its SHA-256 is this one.
    request.headers.emplace_back(kChecksumHeader, sha);
    TF_ASSIGN_OR_RETURN(http::ClientResponse response, Exchange(std::move(request)));
    Json info = Json::parse(response.body, nullptr, /*allow_exceptions=*/false);
    if (!info.is_object() || info.value("sha256", "") != sha) {
      return Internal("the server's SHA-256 of tf://" + bucket + "/" + key +
                      " does not match what was sent");
    }
    return OkStatus();
  }

  Result<std::optional<std::string>> GetBytes(const std::string& bucket,
                                              const std::string& key) override {
    std::string content;
    Status s = StreamObject(exchange_, bucket, key, [&](std::string_view piece) {
      content.append(piece);
      return OkStatus();
    });
    if (s.code() == StatusCode::kNotFound) return std::optional<std::string>();
    if (!s.ok()) return s;
    return std::optional<std::string>(std::move(content));
  }

  Status GetToFile(const std::string& bucket, const std::string& key,
                   const std::filesystem::path& dest) override {
    return DownloadFile(exchange_, bucket, key, dest).status();
  }

  Result<std::vector<std::string>> ListKeys(const std::string& bucket,
                                            const std::string& prefix) override {
    return ListObjectKeys(exchange_, bucket, prefix);
  }

  Status Delete(const std::string& bucket, const std::string& key) override {
    http::ClientRequest request;
    request.method = "DELETE";
    request.target = ObjectTarget(bucket, key);
    auto response = Exchange(std::move(request));
    if (!response.ok() && response.status().code() != StatusCode::kNotFound) {
      return response.status();
    }
    return OkStatus();
  }

 private:
  // One request on a connection of this thread's own (an idle one, or a new one).
  Result<http::ClientResponse> Exchange(http::ClientRequest request) {
    request.headers.emplace_back("Authorization", BearerToken(token_));
    std::unique_ptr<http::Client> client;
    {
      MutexLock lock(mu_);
      if (!idle_.empty()) {
        client = std::move(idle_.back());
        idle_.pop_back();
      }
    }
    if (!client) {
      TF_ASSIGN_OR_RETURN(client, http::Client::Create(server_url_));
    }
    auto response = client->Exchange(request);
    {
      MutexLock lock(mu_);
      idle_.push_back(std::move(client));
    }
    if (!response.ok()) {
      return Status(response.status().code(), "cannot reach the object service at " + server_url_ +
                                                  ": " + response.status().message());
    }
    if (response->status >= 200 && response->status < 300) return response;
    return ErrorFromAnswer(*response);
  }

  const std::string server_url_;
  const std::string token_;
  ObjectExchange exchange_;
  Mutex mu_;
  std::vector<std::unique_ptr<http::Client>> idle_ GUARDED_BY(mu_);
};

}  // namespace

Result<std::unique_ptr<ObjectClient>> MakeHttpObjectClient(const std::string& server_url,
                                                           const std::string& token) {
  // Checks the URL now, so that a bad one is refused here rather than at the first call.
  TF_RETURN_IF_ERROR(http::Client::Create(server_url).status());
  return std::unique_ptr<ObjectClient>(std::make_unique<HttpObjectClient>(server_url, token));
}

}  // namespace tf::client
