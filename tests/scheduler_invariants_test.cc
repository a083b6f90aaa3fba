// The scheduler's pure core (see scheduler_test.cc): the same input gives the same output in any
// order, placements never break the rules on random fleets, and CheckFeasible names the field
// that can never be met.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "fleet/scheduler.h"
#include "scheduler_test_util.h"

namespace tf::testing {
namespace {

// --- Determinism and invariants --------------------------------------------------------------

// A fleet of mixed machines in three zones with placement groups, some spot, some cordoned,
// some partly busy, and a queue of mixed work; all drawn from a seeded generator.
struct Scenario {
  std::vector<NodeState> nodes;
  std::vector<WorkRequest> pending;
};

Scenario MakeScenario(unsigned seed, int node_count, int job_count) {
  std::mt19937 rng(seed);
  auto pick = [&](int n) { return static_cast<int>(rng() % n); };
  Scenario s;
  const char* zones[] = {"a", "b", "c"};
  for (int i = 0; i < node_count; ++i) {
    int gpus = std::vector<int>{0, 4, 8, 8}[pick(4)];
    std::map<std::string, std::string> labels = {{"zone", zones[pick(3)]}};
    if (pick(2)) labels["placement_group"] = "pg" + std::to_string(pick(4));
    NodeState n =
        Node("node-" + std::to_string(i), gpus, 32 + 32 * pick(3), 256 + 256 * pick(3), labels);
    n.spot = pick(4) == 0;
    n.schedulable = pick(10) != 0;
    n.price_per_hour = 1 + pick(20);
    n.free_gpus.resize(pick(gpus + 1));
    n.free_cpus -= pick(n.free_cpus / 2 + 1);
    s.nodes.push_back(n);
  }
  for (int i = 0; i < job_count; ++i) {
    WorkRequest r = Job("job-" + std::to_string(i), std::vector<int>{0, 1, 2, 4, 8}[pick(5)],
                        pick(5) == 0 ? 2 + pick(3) : 1);
    r.priority = pick(3);
    r.queued_at = pick(1000);
    r.cpus_per_node = 1 + pick(16);
    r.memory_per_node = (1 + pick(64)) * kGiB;
    if (pick(6) == 0) r.node_selector = {{"zone", zones[pick(3)]}};
    r.capacity = std::vector<CapacityType>{CapacityType::kAny, CapacityType::kAny,
                                           CapacityType::kSpot, CapacityType::kOnDemand}[pick(4)];
    r.allow_zone_split = pick(2);
    if (pick(10) == 0) r.not_before = kNow + pick(2) * kMinuteMs;
    s.pending.push_back(r);
  }
  return s;
}

std::string Fingerprint(const ScheduleResult& result) {
  std::string out;
  for (const auto& p : result.placements) {
    out += p.job_id + ":";
    for (const auto& r : p.ranks) {
      out += r.node_id + "[";
      for (int g : r.gpus) out += std::to_string(g) + ",";
      out += "]";
    }
    out += "\n";
  }
  for (const auto& w : result.waiting) out += w.job_id + " waits: " + w.reason + "\n";
  return out;
}

TEST(FleetScheduleDeterminism, SameInputSameOutputWhateverTheInputOrder) {
  Scenario s = MakeScenario(7, 60, 400);
  ScheduleResult first = Schedule(s.nodes, s.pending, kNow);
  ASSERT_GT(first.placements.size(), 10u);
  ASSERT_GT(first.waiting.size(), 10u);
  std::mt19937 rng(99);
  for (int round = 0; round < 3; ++round) {
    std::shuffle(s.nodes.begin(), s.nodes.end(), rng);
    std::shuffle(s.pending.begin(), s.pending.end(), rng);
    EXPECT_EQ(Fingerprint(Schedule(s.nodes, s.pending, kNow)), Fingerprint(first)) << round;
  }
}

TEST(FleetScheduleDeterminism, PlacementsNeverOvercommitOrBreakTheRules) {
  for (unsigned seed = 1; seed <= 20; ++seed) {
    Scenario s = MakeScenario(seed, 40, 200);
    ScheduleResult result = Schedule(s.nodes, s.pending, kNow);
    std::map<std::string, const NodeState*> node_by_id;
    for (const auto& n : s.nodes) node_by_id[n.id] = &n;
    std::map<std::string, const WorkRequest*> request_by_id;
    for (const auto& r : s.pending) request_by_id[r.job_id] = &r;

    std::set<std::string> seen;
    std::map<std::string, std::set<int>> gpus_used;
    std::map<std::string, int64_t> cpus_used, memory_used;
    for (const auto& p : result.placements) {
      EXPECT_TRUE(seen.insert(p.job_id).second) << "seed " << seed << ": " << p.job_id;
      const WorkRequest& r = *request_by_id.at(p.job_id);
      EXPECT_LE(r.not_before, kNow);
      ASSERT_EQ(static_cast<int>(p.ranks.size()), r.nodes) << p.job_id;
      std::set<std::string> job_nodes, job_zones;
      for (const auto& rank : p.ranks) {
        const NodeState& n = *node_by_id.at(rank.node_id);
        EXPECT_TRUE(n.schedulable) << rank.node_id;
        EXPECT_TRUE(r.capacity == CapacityType::kAny ||
                    n.spot == (r.capacity == CapacityType::kSpot));
        for (const auto& [k, v] : r.node_selector) EXPECT_EQ(n.labels.at(k), v);
        EXPECT_TRUE(job_nodes.insert(rank.node_id).second) << p.job_id << " reuses a node";
        job_zones.insert(n.labels.at("zone"));
        EXPECT_EQ(static_cast<int>(rank.gpus.size()), r.gpus_per_node);
        for (int g : rank.gpus) {
          EXPECT_TRUE(std::count(n.free_gpus.begin(), n.free_gpus.end(), g)) << "GPU not free";
          EXPECT_TRUE(gpus_used[rank.node_id].insert(g).second) << "GPU given twice";
        }
        cpus_used[rank.node_id] += r.cpus_per_node;
        memory_used[rank.node_id] += r.memory_per_node;
      }
      if (!r.allow_zone_split) {
        EXPECT_EQ(job_zones.size(), 1u) << p.job_id;
      }
    }
    for (const auto& [id, used] : cpus_used) EXPECT_LE(used, node_by_id[id]->free_cpus);
    for (const auto& [id, used] : memory_used) EXPECT_LE(used, node_by_id[id]->free_memory_bytes);
    for (const auto& w : result.waiting) {
      EXPECT_TRUE(seen.insert(w.job_id).second) << w.job_id << " listed twice";
      EXPECT_FALSE(w.reason.empty());
    }
    EXPECT_EQ(seen.size(), s.pending.size()) << "seed " << seed;
  }
}

// --- CheckFeasible ---------------------------------------------------------------------------

TEST(FleetCheckFeasible, NamesTheFieldThatCanNeverBeMet) {
  NodeState a = Zoned("a1", "us-east-1a", "pg1");
  a.labels["gpu"] = "h100";
  NodeState a2 = Zoned("a2", "us-east-1a");
  a2.labels["gpu"] = "h100";
  NodeState b = Zoned("b1", "us-east-1b", "", 4);
  b.labels["gpu"] = "a100";
  b.spot = true;
  b.schedulable = false;  // a cordoned node still counts: it may come back
  const std::vector<NodeState> fleet = {a, a2, b};
  struct Row {
    const char* name;
    WorkRequest request;
    std::string error;  // "" for OK
  };
  auto with = [](WorkRequest r, auto change) {
    change(r);
    return r;
  };
  const Row rows[] = {
      {"fits", Job("j", 8, 2), ""},
      {"busy nodes do not matter", Job("j", 8), ""},
      {"a cordoned node counts",
       with(Job("j", 4), [](auto& r) { r.capacity = CapacityType::kSpot; }), ""},
      {"too many GPUs", Job("j", 16),
       "resources.gpus: 16 GPUs per node requested; the largest node has 8"},
      {"too many GPUs for the selected nodes",
       with(Job("j", 8),
            [](auto& r) {
              r.node_selector = {{"gpu", "a100"}};
            }),
       "resources.gpus: 8 GPUs per node requested; the largest node (of the nodes labelled "
       "gpu=a100) has 4"},
      {"too many CPUs", with(Job("j", 1), [](auto& r) { r.cpus_per_node = 65; }),
       "resources.cpus: 65 CPUs per node requested; the largest node has 64"},
      {"too much memory", with(Job("j", 1), [](auto& r) { r.memory_per_node = 600 * kGiB; }),
       "resources.memory: 600 GiB per node requested; the largest node has 512 GiB"},
      {"no such label value",
       with(Job("j", 1),
            [](auto& r) {
              r.node_selector = {{"gpu", "mi300"}};
            }),
       "node_selector: no node has gpu=mi300 (gpu values in the fleet: a100, h100)"},
      {"labels never together",
       with(Job("j", 1),
            [](auto& r) {
              r.node_selector = {{"gpu", "a100"}, {"zone", "us-east-1a"}};
            }),
       "node_selector: no node has all of gpu=a100, zone=us-east-1a together"},
      {"no spot with the labels",
       with(Job("j", 1),
            [](auto& r) {
              r.node_selector = {{"gpu", "h100"}};
              r.capacity = CapacityType::kSpot;
            }),
       "capacity: spot capacity requested; no node with the requested labels is spot"},
      {"too many nodes", Job("j", 4, 4), "nodes: 4 nodes requested; only 3 can hold 4 GPUs each"},
      {"a gang larger than any zone", Job("j", 4, 3),
       "allow_zone_split: 3 nodes requested in one zone; at most 2 in any one zone can hold 4 "
       "GPUs each (allow_zone_split lets a gang span zones)"},
      {"a split gang may span zones",
       with(Job("j", 4, 3), [](auto& r) { r.allow_zone_split = true; }), ""},
      {"invalid", Job("j", 1, 0), "nodes: must be at least 1, got 0"},
  };
  for (const Row& row : rows) {
    Status status = CheckFeasible(fleet, row.request);
    if (row.error.empty()) {
      EXPECT_TRUE(status.ok()) << row.name << ": " << status.ToString();
    } else {
      EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << row.name;
      EXPECT_EQ(status.message(), row.error) << row.name;
    }
  }
  EXPECT_TRUE(CheckFeasible({}, Job("j", 64)).ok()) << "an empty fleet accepts everything";
}

TEST(FleetCheckFeasible, CordonedNodesExplainAWaitInSchedule) {
  // The only 8-GPU machine is cordoned: the request is feasible on the fleet but cannot start
  // until the machine returns, and Schedule says so.
  NodeState cordoned = Node("big", 8);
  cordoned.schedulable = false;
  std::vector<NodeState> fleet = {cordoned, Node("small", 4)};
  EXPECT_TRUE(CheckFeasible(fleet, Job("j", 8)).ok());
  ScheduleResult result = Schedule(fleet, {Job("j", 8), Job("s", 4)}, kNow);
  EXPECT_EQ(ReasonFor(result, "j"),
            "cannot run until draining, lost or cordoned nodes return: resources.gpus: 8 GPUs "
            "per node requested; the largest node has 4");
  EXPECT_EQ(NodesOf(result)["s"], std::vector<std::string>{"small"});
}

}  // namespace
}  // namespace tf::testing
