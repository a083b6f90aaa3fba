// Fuzzes what the dataset reader takes from outside: a shard's bytes (header, offset table,
// samples, footer), the dataset index JSON the server sends, and the partition over the sample
// counts such an index claims. Any crash, hang or sanitizer report is a bug; malformed input
// must end as a clean Status.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "datasets/dataset_index.h"
#include "datasets/partition.h"
#include "datasets/shard_format.h"

namespace {

void ReadShard(std::string_view bytes) {
  auto view = tf::datasets::ShardView::Open(bytes, "fuzz.tfs");
  if (!view.ok()) return;
  for (uint64_t i = 0; i < view->sample_count() && i < 100000; ++i) (void)view->Sample(i);
  (void)view->Verify();
}

void ReadIndex(std::string_view text) {
  auto index = tf::datasets::DatasetIndexFromJson(text);
  if (!index.ok() || index->shards.size() > 1000) return;
  std::vector<int64_t> sizes;
  int64_t total = 0;
  for (const auto& s : index->shards) {
    if (s.samples > 100000 || total > 1000000) return;
    sizes.push_back(s.samples);
    total += s.samples;
  }
  tf::datasets::PartitionParams p{.seed = static_cast<uint64_t>(total),
                                  .num_nodes = 2,
                                  .node_rank = 1,
                                  .num_workers = 3,
                                  .worker_id = 2};
  (void)tf::datasets::WorkerSamples(sizes, p, total / 3);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  ReadShard(input);
  // The same bytes behind a valid header, so that the table checks are reached often.
  if (size >= 16) {
    std::string shard(input);
    shard.replace(0, 8, "TFSHARD1");
    ReadShard(shard);
  }
  ReadIndex(input);
  return 0;
}
