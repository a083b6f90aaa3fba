#include "datasets/partition.h"

#include <algorithm>
#include <string>

namespace tf::datasets {
namespace {

uint64_t SplitMix(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// A generator of our own (not std::'s distributions, whose output differs between libraries),
// so that every build and the Python binding draw the same order.
class Rng {
 public:
  explicit Rng(std::initializer_list<uint64_t> keys) {
    uint64_t s = 0x74656e736f72666cULL;  // any fixed start
    for (uint64_t k : keys) {
      s ^= k;
      state_ = SplitMix(s);
      s = state_;
    }
  }
  // Uniform in [0, n), n > 0, without modulo bias.
  uint64_t Below(uint64_t n) {
    const uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    for (;;) {
      uint64_t x = SplitMix(state_);
      if (x < limit) return x % n;
    }
  }

 private:
  uint64_t state_ = 0;
};

template <typename T>
void Shuffle(std::vector<T>& v, Rng& rng) {
  for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[rng.Below(i)]);
}

Status OutOfRange(const std::string& field, int64_t value, const std::string& range) {
  return InvalidArgument("partition: " + field + " is " + std::to_string(value) + ", must be " +
                         range);
}

// Rank r gets [RankStart(r), RankStart(r + 1)) of the epoch's sequence.
int64_t RankStart(int64_t total_samples, int64_t rank, int64_t world) {
  return static_cast<int64_t>(static_cast<__int128>(total_samples) * rank / world);
}

}  // namespace

Status ValidatePartition(const PartitionParams& p) {
  if (p.num_nodes < 1) return OutOfRange("num_nodes", p.num_nodes, "at least 1");
  if (p.ranks_per_node < 1) return OutOfRange("ranks_per_node", p.ranks_per_node, "at least 1");
  if (p.node_rank < 0 || p.node_rank >= p.num_nodes) {
    return OutOfRange("node_rank", p.node_rank, "from 0 to num_nodes - 1");
  }
  if (p.local_rank < 0 || p.local_rank >= p.ranks_per_node) {
    return OutOfRange("local_rank", p.local_rank, "from 0 to ranks_per_node - 1");
  }
  if (p.num_workers < 1) return OutOfRange("num_workers", p.num_workers, "at least 1");
  if (p.worker_id < 0 || p.worker_id >= p.num_workers) {
    return OutOfRange("worker_id", p.worker_id, "from 0 to num_workers - 1");
  }
  if (p.window_shards < 1) return OutOfRange("window_shards", p.window_shards, "at least 1");
  if (p.block < 1) return OutOfRange("block", p.block, "at least 1");
  if (p.epoch < 0) return OutOfRange("epoch", p.epoch, "0 or more");
  if (static_cast<int64_t>(p.num_nodes) * p.ranks_per_node > (1 << 24)) {
    return InvalidArgument("partition: more than 16M ranks");
  }
  return OkStatus();
}

std::vector<int64_t> ShardOrder(int64_t shard_count, uint64_t seed, int64_t epoch) {
  std::vector<int64_t> order(shard_count);
  for (int64_t i = 0; i < shard_count; ++i) order[i] = i;
  Rng rng({seed, static_cast<uint64_t>(epoch), 0x5348415244ULL});
  Shuffle(order, rng);
  return order;
}

int64_t RankShare(int64_t total_samples, const PartitionParams& p) {
  return RankStart(total_samples, p.rank() + 1, p.world_size()) -
         RankStart(total_samples, p.rank(), p.world_size());
}

RankPlan PlanRank(const std::vector<int64_t>& shard_samples, const PartitionParams& p) {
  int64_t total = 0;
  for (int64_t n : shard_samples) total += n;
  const int64_t lo = RankStart(total, p.rank(), p.world_size());
  RankPlan plan;
  plan.samples = RankShare(total, p);
  const int64_t hi = lo + plan.samples;
  int64_t at = 0;  // sequence position of the current shard's first sample
  int64_t position = 0;
  Window window;
  for (int64_t shard : ShardOrder(static_cast<int64_t>(shard_samples.size()), p.seed, p.epoch)) {
    const int64_t n = shard_samples[shard];
    const int64_t begin = std::max(lo, at), end = std::min(hi, at + n);
    at += n;
    if (begin >= end) {
      if (at >= hi) break;
      continue;
    }
    if (window.pieces.empty()) window.first_position = position;
    window.pieces.push_back(ShardPiece{shard, begin - (at - n), end - (at - n)});
    window.samples += end - begin;
    position += end - begin;
    if (static_cast<int>(window.pieces.size()) == p.window_shards) {
      plan.windows.push_back(std::move(window));
      window = Window{};
    }
    if (at >= hi) break;
  }
  if (!window.pieces.empty()) plan.windows.push_back(std::move(window));
  return plan;
}

std::vector<SampleRef> WindowOrder(const Window& window, const PartitionParams& p,
                                   int64_t window_index) {
  std::vector<SampleRef> out;
  out.reserve(window.samples);
  for (const ShardPiece& piece : window.pieces) {
    for (int64_t i = piece.begin; i < piece.end; ++i) out.push_back(SampleRef{piece.shard, i});
  }
  Rng rng({p.seed, static_cast<uint64_t>(p.epoch), static_cast<uint64_t>(p.rank()),
           static_cast<uint64_t>(p.world_size()), static_cast<uint64_t>(window_index)});
  Shuffle(out, rng);
  return out;
}

std::vector<SampleRef> WorkerSamples(const std::vector<int64_t>& shard_samples,
                                     const PartitionParams& p, int64_t samples_seen) {
  std::vector<SampleRef> out;
  RankPlan plan = PlanRank(shard_samples, p);
  for (size_t w = 0; w < plan.windows.size(); ++w) {
    const Window& window = plan.windows[w];
    if (window.first_position + window.samples <= samples_seen) continue;
    std::vector<SampleRef> order = WindowOrder(window, p, static_cast<int64_t>(w));
    for (size_t i = 0; i < order.size(); ++i) {
      int64_t position = window.first_position + static_cast<int64_t>(i);
      if (position >= samples_seen && WorkerTakes(position, p)) out.push_back(order[i]);
    }
  }
  return out;
}

}  // namespace tf::datasets
