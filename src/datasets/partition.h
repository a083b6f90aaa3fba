// Which samples of a dataset one dataloader worker of one rank reads in an epoch, and in what
// order: a pure, deterministic function of the dataset's shard sizes and PartitionParams
// (docs/datasets.md, "Partition").
//
//  1. The shards are put in an order drawn from (seed, epoch).
//  2. Their samples, shard after shard in that order, are cut into world_size contiguous
//     ranges, one per rank, whose sizes differ by at most one sample (no padding: the first
//     total % world_size ranks get one more). A rank reads only the shards its range touches.
//  3. A rank's range is cut into windows of `window_shards` shard pieces; the samples of each
//     window are shuffled together (drawn from seed, epoch, rank and window), so a rank holds
//     at most a window of shards at a time.
//  4. The rank's order is dealt to its dataloader workers in blocks of `block` samples, round
//     robin: with block = the DataLoader's batch size, the batches a DataLoader hands out in turn
//     from its workers are exactly the rank's order.
//
// Across every rank and worker, each sample of an epoch is read exactly once. A run that has
// seen `samples_seen` samples of its rank's order resumes by skipping exactly those.
#pragma once

#include <cstdint>
#include <vector>

#include "base/status.h"

namespace tf::datasets {

struct PartitionParams {
  uint64_t seed = 0;
  int64_t epoch = 0;
  int num_nodes = 1;
  int node_rank = 0;
  int ranks_per_node = 1;
  int local_rank = 0;
  int num_workers = 1;  // dataloader workers of this rank
  int worker_id = 0;
  int window_shards = 4;
  int64_t block = 1;

  int world_size() const { return num_nodes * ranks_per_node; }
  int rank() const { return node_rank * ranks_per_node + local_rank; }
};

// kInvalidArgument naming the first field out of range.
Status ValidatePartition(const PartitionParams& p);

// Samples [begin, end) of shard `shard` (its place in the dataset, not in the epoch's order).
struct ShardPiece {
  int64_t shard = 0;
  int64_t begin = 0;
  int64_t end = 0;
};

// Samples read together: consecutive pieces of the epoch's shard order.
struct Window {
  std::vector<ShardPiece> pieces;
  int64_t first_position = 0;  // its first sample's position in the rank's order
  int64_t samples = 0;
};

struct RankPlan {
  int64_t samples = 0;  // the rank's share of the epoch
  std::vector<Window> windows;
};

struct SampleRef {
  int64_t shard = 0;
  int64_t index = 0;  // within the shard
  friend bool operator==(const SampleRef&, const SampleRef&) = default;
};

// The epoch's shard order: a permutation of 0..shard_count-1.
std::vector<int64_t> ShardOrder(int64_t shard_count, uint64_t seed, int64_t epoch);

// How many of an epoch's `total_samples` samples rank p.rank() reads (step 2): what
// PlanRank(...).samples is, without planning the windows. Call ValidatePartition first.
int64_t RankShare(int64_t total_samples, const PartitionParams& p);

// The rank's share of the epoch. `shard_samples[i]` is shard i's sample count (each > 0).
// Call ValidatePartition first.
RankPlan PlanRank(const std::vector<int64_t>& shard_samples, const PartitionParams& p);

// Window `window_index` of the rank's plan in the rank's order.
std::vector<SampleRef> WindowOrder(const Window& window, const PartitionParams& p,
                                   int64_t window_index);

// Whether the sample at `position` of the rank's order is this worker's.
inline bool WorkerTakes(int64_t position, const PartitionParams& p) {
  return (position / p.block) % p.num_workers == p.worker_id;
}

// Everything this worker reads, in order, skipping the first `samples_seen` positions of the
// rank's order. For tests and small datasets: it holds the whole list.
std::vector<SampleRef> WorkerSamples(const std::vector<int64_t>& shard_samples,
                                     const PartitionParams& p, int64_t samples_seen);

}  // namespace tf::datasets
