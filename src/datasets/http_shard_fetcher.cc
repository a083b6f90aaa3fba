// ShardFetcher over the server's native object API, one HTTP connection per thread.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>

#include "datasets/shard_fetcher.h"
#include "http/http.h"
#include "http/json_client.h"
#include "http/url.h"

namespace tf::datasets {
namespace {

class HttpShardFetcher final : public ShardFetcher {
 public:
  HttpShardFetcher(std::string server_url, std::string token)
      : server_url_(std::move(server_url)), token_(std::move(token)) {}

  Status Fetch(const ShardInfo& shard, const std::filesystem::path& dest) override {
    TF_ASSIGN_OR_RETURN(http::Client * client, ClientForThisThread());
    int fd = ::open(dest.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
      return Internal("cannot create " + dest.string() + ": " + std::strerror(errno));
    }
    Status written;
    http::ClientRequest request;
    request.target = "/v1/buckets/" + http::PercentEncode(shard.bucket) + "/objects/" +
                     http::PercentEncode(shard.key);
    request.headers.emplace_back("Authorization", "Bearer " + token_);
    request.on_chunk = [&](std::string_view piece) {
      while (!piece.empty()) {
        ssize_t n = ::write(fd, piece.data(), piece.size());
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
          written =
              ResourceExhausted("cannot write " + dest.string() + ": " + std::strerror(errno));
          return false;
        }
        piece.remove_prefix(n);
      }
      return true;
    };
    auto response = client->Exchange(request);
    ::close(fd);
    if (!response.ok()) return response.status();
    if (!written.ok()) return written;
    if (response->status / 100 != 2) {
      return http::StatusFromErrorBody(response->status, response->body);
    }
    return OkStatus();
  }

 private:
  Result<http::Client*> ClientForThisThread() {
    std::lock_guard lock(mu_);
    auto& slot = clients_[std::this_thread::get_id()];
    if (!slot) {
      TF_ASSIGN_OR_RETURN(slot, http::Client::Create(server_url_));
    }
    return slot.get();
  }

  const std::string server_url_;
  const std::string token_;
  std::mutex mu_;
  std::map<std::thread::id, std::unique_ptr<http::Client>> clients_;  // guarded by mu_
};

}  // namespace

Result<std::unique_ptr<ShardFetcher>> MakeHttpShardFetcher(const std::string& server_url,
                                                           const std::string& token) {
  // Fails early on a URL that does not parse.
  TF_RETURN_IF_ERROR(http::Client::Create(server_url).status());
  return std::unique_ptr<ShardFetcher>(new HttpShardFetcher(server_url, token));
}

Result<DatasetIndex> FetchDatasetIndex(const std::string& server_url, const std::string& token,
                                       const std::string& name) {
  TF_RETURN_IF_ERROR(ValidateDatasetName(name));
  TF_ASSIGN_OR_RETURN(auto client, http::JsonClient::Create(server_url, token));
  TF_ASSIGN_OR_RETURN(nlohmann::json j, client->Call("GET", "/v1/datasets/" + name));
  return DatasetIndexFromJson(j.dump());
}

}  // namespace tf::datasets
