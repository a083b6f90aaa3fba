// The dataset reader's side of the API: shards fetched over the native object API and the
// dataset index, both with the project's bearer token.
#pragma once

#include <memory>
#include <string>

#include "base/status.h"
#include "datasets/dataset_index.h"
#include "datasets/shard_fetcher.h"

namespace tf::client {

// A ShardFetcher over the server's native object API (GET /v1/buckets/B/objects/K), one HTTP
// connection per thread. kInvalidArgument if the URL does not parse.
Result<std::unique_ptr<datasets::ShardFetcher>> MakeHttpShardFetcher(const std::string& server_url,
                                                                     const std::string& token);

// GET /v1/datasets/NAME, checked (DatasetIndexFromJson).
Result<datasets::DatasetIndex> FetchDatasetIndex(const std::string& server_url,
                                                 const std::string& token, const std::string& name);

}  // namespace tf::client
