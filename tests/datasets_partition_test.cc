// The partition (src/datasets/partition.h) as a pure function: for many shapes of dataset and
// job, every sample of an epoch is read exactly once across ranks and workers, ranks differ by
// at most one sample, a rank touches only the shards of its range, the same inputs give the
// same order, epochs differ, and a resume skips exactly what was seen.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "datasets/partition.h"

namespace tf::datasets {
namespace {

// Shard sizes from a small fixed recipe: n shards of uneven sizes 1..max.
std::vector<int64_t> Shards(int n, int max, int salt) {
  std::vector<int64_t> out;
  for (int i = 0; i < n; ++i) out.push_back(1 + (i * 7 + salt * 13) % max);
  return out;
}

int64_t Key(const SampleRef& s) { return s.shard * 1'000'000 + s.index; }

// The rank's whole order, put back together from its workers as a DataLoader with batch size
// p.block would hand it out: a block from worker 0, then one from worker 1, ...
std::vector<SampleRef> RankOrderFromWorkers(const std::vector<int64_t>& shards, PartitionParams p,
                                            int64_t seen) {
  std::vector<std::vector<SampleRef>> per_worker;
  for (int w = 0; w < p.num_workers; ++w) {
    p.worker_id = w;
    per_worker.push_back(WorkerSamples(shards, p, seen));
  }
  // Positions from `seen` on, dealt in blocks: the first block may be a partial one.
  std::vector<SampleRef> out;
  std::vector<size_t> next(p.num_workers, 0);
  int64_t total = PlanRank(shards, p).samples;
  for (int64_t pos = seen; pos < total; ++pos) {
    int w = static_cast<int>((pos / p.block) % p.num_workers);
    out.push_back(per_worker[w][next[w]++]);
  }
  for (int w = 0; w < p.num_workers; ++w) EXPECT_EQ(next[w], per_worker[w].size());
  return out;
}

TEST(PartitionTest, EverySampleExactlyOnceForManyShapes) {
  int shapes = 0;
  for (int shards : {1, 2, 3, 7, 16}) {
    for (int max : {1, 5, 40}) {
      for (int nodes : {1, 2, 3}) {
        for (int per_node : {1, 2, 4}) {
          for (int workers : {1, 2, 3}) {
            for (int window : {1, 2, 5}) {
              for (int64_t block : {1, 4}) {
                std::vector<int64_t> sizes = Shards(shards, max, nodes + per_node);
                int64_t total = 0;
                for (int64_t n : sizes) total += n;
                std::map<int64_t, int> seen;
                int64_t smallest = INT64_MAX, largest = 0;
                for (int node = 0; node < nodes; ++node) {
                  for (int local = 0; local < per_node; ++local) {
                    PartitionParams p{.seed = 42,
                                      .epoch = 3,
                                      .num_nodes = nodes,
                                      .node_rank = node,
                                      .ranks_per_node = per_node,
                                      .local_rank = local,
                                      .num_workers = workers,
                                      .window_shards = window,
                                      .block = block};
                    ASSERT_TRUE(ValidatePartition(p).ok());
                    int64_t rank_total = 0;
                    for (int w = 0; w < workers; ++w) {
                      p.worker_id = w;
                      for (const SampleRef& s : WorkerSamples(sizes, p, 0)) {
                        ASSERT_GE(s.index, 0);
                        ASSERT_LT(s.index, sizes[s.shard]);
                        ++seen[Key(s)];
                        ++rank_total;
                      }
                    }
                    EXPECT_EQ(rank_total, PlanRank(sizes, p).samples);
                    EXPECT_EQ(rank_total, RankShare(total, p));
                    smallest = std::min(smallest, rank_total);
                    largest = std::max(largest, rank_total);
                  }
                }
                ASSERT_EQ(static_cast<int64_t>(seen.size()), total)
                    << shards << " shards, " << nodes << "x" << per_node << " ranks";
                for (const auto& [key, count] : seen) ASSERT_EQ(count, 1) << key;
                EXPECT_LE(largest - smallest, 1);
                ++shapes;
              }
            }
          }
        }
      }
    }
  }
  EXPECT_EQ(shapes, 5 * 3 * 3 * 3 * 3 * 3 * 2);
}

TEST(PartitionTest, MoreRanksThanSamplesLeavesSomeRanksEmptyButCoversAll) {
  std::vector<int64_t> sizes = {2, 1};
  std::set<int64_t> seen;
  for (int r = 0; r < 8; ++r) {
    PartitionParams p{.num_nodes = 8, .node_rank = r};
    auto got = WorkerSamples(sizes, p, 0);
    EXPECT_LE(got.size(), 1u);
    for (const auto& s : got) EXPECT_TRUE(seen.insert(Key(s)).second);
  }
  EXPECT_EQ(seen.size(), 3u);
}

TEST(PartitionTest, ARankReadsOnlyTheShardsOfItsRange) {
  // 64 shards of 100 over 8 ranks: each rank's 800 samples lie in at most 9 shards.
  std::vector<int64_t> sizes(64, 100);
  std::vector<int> readers(64, 0);
  for (int r = 0; r < 8; ++r) {
    PartitionParams p{.seed = 7,
                      .num_nodes = 2,
                      .node_rank = r / 4,
                      .ranks_per_node = 4,
                      .local_rank = r % 4,
                      .num_workers = 4};
    std::set<int64_t> shards;
    for (int w = 0; w < 4; ++w) {
      p.worker_id = w;
      for (const auto& s : WorkerSamples(sizes, p, 0)) shards.insert(s.shard);
    }
    EXPECT_LE(shards.size(), 9u);
    for (int64_t s : shards) ++readers[s];
  }
  // With shard-aligned ranges every shard is read by exactly one rank.
  for (int n : readers) EXPECT_EQ(n, 1);
}

TEST(PartitionTest, TheShuffleStaysInsideAWindowOfShards) {
  std::vector<int64_t> sizes(20, 50);
  PartitionParams p{.seed = 1, .window_shards = 3};
  RankPlan plan = PlanRank(sizes, p);
  ASSERT_EQ(plan.windows.size(), 7u);  // 3+3+3+3+3+3+2 shards
  auto all = WorkerSamples(sizes, p, 0);
  for (size_t w = 0; w < plan.windows.size(); ++w) {
    std::set<int64_t> allowed;
    for (const auto& piece : plan.windows[w].pieces) allowed.insert(piece.shard);
    for (int64_t i = 0; i < plan.windows[w].samples; ++i) {
      EXPECT_TRUE(allowed.count(all[plan.windows[w].first_position + i].shard));
    }
  }
  // ... and does shuffle: consecutive reads are not simply a shard in order.
  int in_order = 0;
  for (size_t i = 1; i < all.size(); ++i) {
    in_order += all[i].shard == all[i - 1].shard && all[i].index == all[i - 1].index + 1;
  }
  EXPECT_LT(in_order, static_cast<int>(all.size()) / 4);
}

TEST(PartitionTest, DeterministicAndDifferentPerEpochAndSeed) {
  std::vector<int64_t> sizes = Shards(12, 30, 1);
  PartitionParams p{.seed = 99, .epoch = 0, .num_nodes = 2, .num_workers = 2};
  auto a = WorkerSamples(sizes, p, 0);
  EXPECT_EQ(a, WorkerSamples(sizes, p, 0));
  PartitionParams next_epoch = p;
  next_epoch.epoch = 1;
  EXPECT_NE(a, WorkerSamples(sizes, next_epoch, 0));
  PartitionParams other_seed = p;
  other_seed.seed = 100;
  EXPECT_NE(a, WorkerSamples(sizes, other_seed, 0));
  EXPECT_NE(ShardOrder(12, 99, 0), ShardOrder(12, 99, 1));
  // Fixed values: the order may never change between releases, or resumed runs would skip and
  // repeat samples.
  EXPECT_EQ(ShardOrder(8, 1, 0), (std::vector<int64_t>{5, 0, 4, 2, 7, 1, 3, 6}));
}

TEST(PartitionTest, ResumeContinuesExactlyWhereTheRankStopped) {
  std::vector<int64_t> sizes = Shards(9, 25, 2);
  for (int workers : {1, 2, 3}) {
    for (int64_t block : {1, 2, 5}) {
      PartitionParams p{.seed = 5,
                        .epoch = 2,
                        .num_nodes = 2,
                        .node_rank = 1,
                        .num_workers = workers,
                        .window_shards = 2,
                        .block = block};
      std::vector<SampleRef> full = RankOrderFromWorkers(sizes, p, 0);
      ASSERT_EQ(static_cast<int64_t>(full.size()), PlanRank(sizes, p).samples);
      for (int64_t seen :
           {int64_t{0}, int64_t{1}, int64_t{7}, block * workers,
            static_cast<int64_t>(full.size()) / 2, static_cast<int64_t>(full.size()) - 1,
            static_cast<int64_t>(full.size())}) {
        std::vector<SampleRef> rest = RankOrderFromWorkers(sizes, p, seen);
        std::vector<SampleRef> want(full.begin() + seen, full.end());
        EXPECT_EQ(rest, want) << "workers " << workers << " block " << block << " seen " << seen;
      }
    }
  }
}

TEST(PartitionTest, BadParamsAreNamed) {
  PartitionParams p;
  p.node_rank = 1;
  EXPECT_NE(ValidatePartition(p).message().find("node_rank"), std::string::npos);
  p = {};
  p.worker_id = 2;
  p.num_workers = 2;
  EXPECT_NE(ValidatePartition(p).message().find("worker_id"), std::string::npos);
  p = {};
  p.block = 0;
  EXPECT_NE(ValidatePartition(p).message().find("block"), std::string::npos);
}

}  // namespace
}  // namespace tf::datasets
