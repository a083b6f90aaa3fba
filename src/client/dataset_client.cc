// Shards are written in whole blocks (BlockWriter), so that the page cache holds them in large
// pages.
#include "client/dataset_client.h"

#include <map>
#include <thread>

#include "base/mutex.h"
#include "client/bearer.h"
#include "client/json_client.h"
#include "datasets/block_writer.h"
#include "http/http.h"
#include "http/url.h"

namespace tf::client {
namespace {

using datasets::BlockWriter;
using datasets::DatasetIndex;
using datasets::ShardFetcher;
using datasets::ShardInfo;

class HttpShardFetcher final : public ShardFetcher {
 public:
  HttpShardFetcher(std::string server_url, std::string token)
      : server_url_(std::move(server_url)), token_(std::move(token)) {}

  Status Fetch(const ShardInfo& shard, const std::filesystem::path& dest) override {
    TF_ASSIGN_OR_RETURN(PerThread * mine, ForThisThread());
    BlockWriter& file = mine->writer;
    TF_RETURN_IF_ERROR(file.Open(dest));
    Status written;
    http::ClientRequest request;
    request.target = "/v1/buckets/" + http::PercentEncode(shard.bucket) + "/objects/" +
                     http::PercentEncode(shard.key);
    request.headers.emplace_back("Authorization", BearerToken(token_));
    request.on_chunk = [&](std::string_view piece) {
      written = file.Append(piece);
      return written.ok();
    };
    auto response = mine->client->Exchange(request);
    Status closed = file.Close();
    if (!response.ok()) return response.status();
    TF_RETURN_IF_ERROR(written);
    if (response->status / 100 != 2) {
      return StatusFromErrorBody(response->status, response->body);
    }
    return closed;
  }

 private:
  // A connection and a write block for each thread that fetches.
  struct PerThread {
    std::unique_ptr<http::Client> client;
    BlockWriter writer;
  };

  Result<PerThread*> ForThisThread() {
    MutexLock lock(mu_);
    std::unique_ptr<PerThread>& slot = threads_[std::this_thread::get_id()];
    if (!slot) {
      TF_ASSIGN_OR_RETURN(std::unique_ptr<http::Client> client, http::Client::Create(server_url_));
      slot = std::make_unique<PerThread>();
      slot->client = std::move(client);
    }
    return slot.get();
  }

  const std::string server_url_;
  const std::string token_;
  Mutex mu_;
  std::map<std::thread::id, std::unique_ptr<PerThread>> threads_ GUARDED_BY(mu_);
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
  TF_RETURN_IF_ERROR(datasets::ValidateDatasetName(name));
  TF_ASSIGN_OR_RETURN(auto client, JsonClient::Create(server_url, token));
  TF_ASSIGN_OR_RETURN(nlohmann::json j, client->Call("GET", "/v1/datasets/" + name));
  return datasets::DatasetIndexFromJson(j.dump());
}

}  // namespace tf::client
