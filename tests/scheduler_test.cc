// The scheduler's pure core as tables: each row is a fleet, the pending work and what must come
// out (where each job lands, or the words of why it waits). This file: the order of the queue,
// fit, best fit and gangs; scheduler_backfill_test.cc and scheduler_invariants_test.cc hold the
// rest.
#include "fleet/scheduler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "scheduler_test_util.h"

namespace tf::testing {
namespace {

// --- Order -----------------------------------------------------------------------------------

TEST(FleetScheduleOrder, PriorityThenQueuedAtThenJobId) {
  struct Row {
    const char* name;
    std::vector<WorkRequest> pending;  // id, priority, queued_at
    std::vector<std::string> placed;   // one 8-GPU node, one 4-GPU slot each: the first two win
  };
  auto job = [](const char* id, int priority, TimeMs queued_at) {
    WorkRequest r = Job(id, 4);
    r.priority = priority;
    r.queued_at = queued_at;
    return r;
  };
  const Row rows[] = {
      {"higher priority first", {job("a", 0, 1), job("b", 5, 2), job("c", 1, 3)}, {"b", "c"}},
      {"older first within a priority",
       {job("a", 1, 30), job("b", 1, 10), job("c", 1, 20)},
       {"b", "c"}},
      {"job id breaks a tie", {job("z", 1, 10), job("m", 1, 10), job("a", 1, 10)}, {"a", "m"}},
      {"priority beats age",
       {job("old", 0, 1), job("new", 1, 99), job("mid", 0, 50)},
       {"new", "old"}},
      {"negative priority last", {job("low", -1, 1), job("a", 0, 5), job("b", 0, 6)}, {"a", "b"}},
  };
  for (const Row& row : rows) {
    ScheduleResult result = Schedule({Node("n1", 8)}, row.pending, kNow);
    EXPECT_EQ(PlacedOrder(result), row.placed) << row.name;
    EXPECT_EQ(result.waiting.size(), 1u) << row.name;
  }
}

TEST(FleetScheduleOrder, BackingOffRequestsAreSkipped) {
  WorkRequest early = Job("retry", 1);
  early.priority = 10;
  early.not_before = kNow + 12 * kSecondMs;
  WorkRequest due = Job("due", 1);
  due.not_before = kNow;  // eligible from this instant
  ScheduleResult result = Schedule({Node("n1", 1)}, {early, due}, kNow);
  EXPECT_EQ(PlacedOrder(result), std::vector<std::string>{"due"});
  EXPECT_EQ(ReasonFor(result, "retry"), "backing off: eligible again in 12 s");
}

TEST(FleetScheduleOrder, BackoffReasonsSayHowLong) {
  const std::pair<TimeMs, const char*> rows[] = {
      {250, "250 ms"},
      {12 * kSecondMs + 1, "13 s"},  // rounded up: never promises too early
      {5 * kMinuteMs + 3 * kSecondMs, "5 min 3 s"},
      {2 * kHourMs, "2 h"},
      {2 * kHourMs + 5 * kMinuteMs, "2 h 5 min"},
  };
  for (const auto& [wait, words] : rows) {
    WorkRequest r = Job("j", 1);
    r.not_before = kNow + wait;
    EXPECT_EQ(ReasonFor(Schedule({Node("n1", 1)}, {r}, kNow), "j"),
              std::string("backing off: eligible again in ") + words);
  }
}

// --- Fit -------------------------------------------------------------------------------------

TEST(FleetScheduleFit, ResourcesLabelsCapacityAndSchedulable) {
  struct Row {
    const char* name;
    NodeState node;
    WorkRequest request;
    bool placed;
    std::string reason;  // when not placed: the exact words
  };
  auto with = [](WorkRequest r, auto change) {
    change(r);
    return r;
  };
  NodeState a100 = Node("a100-1", 8, 96, 1024, {{"zone", "us-east-1a"}, {"gpu", "a100"}});
  NodeState spot = a100;
  spot.spot = true;
  NodeState cordoned = a100;
  cordoned.schedulable = false;
  const Row rows[] = {
      {"exact fit", a100,
       with(Job("j", 8),
            [](auto& r) {
              r.cpus_per_node = 96;
              r.memory_per_node = 1024 * kGiB;
            }),
       true, ""},
      {"too many GPUs free", Busy(a100, 4), Job("j", 8), false,
       "needs 8 GPUs on one node; the largest free is 4; node a100-1 is reserved for it as it "
       "drains"},
      {"too many CPUs", a100, with(Job("j", 1), [](auto& r) { r.cpus_per_node = 97; }), false,
       "can never run on this fleet: resources.cpus: 97 CPUs per node requested; the largest "
       "node has 96"},
      {"too much memory free",
       [&] {
         NodeState n = a100;
         n.free_memory_bytes = 100 * kGiB;
         return n;
       }(),
       with(Job("j", 1), [](auto& r) { r.memory_per_node = 200 * kGiB; }), false,
       "needs 200 GiB memory on one node; the most free is 100 GiB; node a100-1 is reserved "
       "for it as it drains"},
      {"selector matches", a100,
       with(Job("j", 1),
            [](auto& r) {
              r.node_selector = {{"gpu", "a100"}, {"zone", "us-east-1a"}};
            }),
       true, ""},
      {"selector value differs", a100,
       with(Job("j", 1),
            [](auto& r) {
              r.node_selector = {{"gpu", "h100"}};
            }),
       false,
       "can never run on this fleet: node_selector: no node has gpu=h100 (gpu values in the "
       "fleet: a100)"},
      {"selector label absent", a100,
       with(Job("j", 1),
            [](auto& r) {
              r.node_selector = {{"interconnect", "efa"}};
            }),
       false,
       "can never run on this fleet: node_selector: no node has a label 'interconnect' (wanted "
       "interconnect=efa)"},
      {"spot wanted, node on-demand", a100,
       with(Job("j", 1), [](auto& r) { r.capacity = CapacityType::kSpot; }), false,
       "can never run on this fleet: capacity: spot capacity requested; no node is spot"},
      {"on-demand wanted, node spot", spot,
       with(Job("j", 1), [](auto& r) { r.capacity = CapacityType::kOnDemand; }), false,
       "can never run on this fleet: capacity: on-demand capacity requested; no node is "
       "on-demand"},
      {"spot wanted, node spot", spot,
       with(Job("j", 1), [](auto& r) { r.capacity = CapacityType::kSpot; }), true, ""},
      {"any capacity takes spot", spot, Job("j", 1), true, ""},
      {"cordoned node", cordoned, Job("j", 1), false,
       "no schedulable node: every node is draining, lost or cordoned"},
      {"CPU-only job on a GPU node", a100, with(Job("j", 0), [](auto& r) { r.cpus_per_node = 4; }),
       true, ""},
  };
  for (const Row& row : rows) {
    ScheduleResult result = Schedule({row.node}, {row.request}, kNow);
    if (row.placed) {
      ASSERT_EQ(result.placements.size(), 1u) << row.name << ": " << ReasonFor(result, "j");
      EXPECT_EQ(result.placements[0].ranks[0].node_id, row.node.id) << row.name;
      EXPECT_TRUE(result.waiting.empty()) << row.name;
    } else {
      EXPECT_TRUE(result.placements.empty()) << row.name;
      EXPECT_EQ(ReasonFor(result, "j"), row.reason) << row.name;
    }
  }
}

TEST(FleetScheduleFit, ReasonsNameTheShortResourceAndTheSelector) {
  NodeState n = Node("n1", 8, 16, 64, {{"zone", "b"}});
  n.free_cpus = 2;
  WorkRequest cpus = Job("cpus", 1);
  cpus.cpus_per_node = 4;
  cpus.node_selector = {{"zone", "b"}};
  WorkRequest all = Job("all", 1);  // each resource alone is free somewhere, never together
  all.cpus_per_node = 4;
  NodeState m = Node("n2", 0, 16, 64);
  ScheduleResult result = Schedule({n, m}, {cpus, all}, kNow);
  EXPECT_EQ(ReasonFor(result, "cpus"),
            "needs 4 CPUs on one node labelled zone=b; the most free is 2");
  EXPECT_EQ(ReasonFor(result, "all"),
            "needs 1 GPU and 4 CPUs on one node; no node has all of them free; node n1 is "
            "reserved for it as it drains");
}

// --- Best fit --------------------------------------------------------------------------------

TEST(FleetScheduleBestFit, FewestFreeGpusThenCpusThenPriceThenId) {
  struct Row {
    const char* name;
    std::vector<NodeState> nodes;
    WorkRequest request;
    std::string chosen;
  };
  auto priced = [](NodeState n, double price) {
    n.price_per_hour = price;
    return n;
  };
  auto cpus_free = [](NodeState n, int cpus) {
    n.free_cpus = cpus;
    return n;
  };
  const Row rows[] = {
      {"fewest GPUs left",
       {Node("big", 8), Busy(Node("half", 8), 4), Node("small", 4)},
       Job("j", 2),
       "half"},
      {"a too-small node is no fit",
       {Node("big", 8), Busy(Node("tight", 8), 1)},
       Job("j", 2),
       "big"},
      {"then fewest CPUs left",
       {cpus_free(Node("a", 4), 60), cpus_free(Node("b", 4), 10)},
       Job("j", 4),
       "b"},
      {"then the cheaper",
       {priced(Node("a", 4), 9.5), priced(Node("b", 4), 2.0)},
       Job("j", 4),
       "b"},
      {"then the smaller id", {Node("b", 4), Node("a", 4)}, Job("j", 4), "a"},
      {"CPU-only work goes to the node without GPUs",
       {Node("gpu", 8), Node("cpu", 0)},
       Job("j", 0),
       "cpu"},
  };
  for (const Row& row : rows) {
    auto placed = NodesOf(Schedule(row.nodes, {row.request}, kNow));
    ASSERT_EQ(placed.count("j"), 1u) << row.name;
    EXPECT_EQ(placed["j"], std::vector<std::string>{row.chosen}) << row.name;
  }
}

TEST(FleetScheduleBestFit, LowestFreeGpuIndicesFirst) {
  NodeState n = Node("n1", 8);
  n.free_gpus = {7, 5, 1, 3, 3};  // unsorted, with a repeat: each GPU is given once
  ScheduleResult result = Schedule({n}, {Job("a", 2), Job("b", 2), Job("c", 1)}, kNow);
  ASSERT_EQ(result.placements.size(), 2u);
  EXPECT_EQ(result.placements[0].ranks[0].gpus, (std::vector<int>{1, 3}));
  EXPECT_EQ(result.placements[1].ranks[0].gpus, (std::vector<int>{5, 7}));
  EXPECT_EQ(ReasonFor(result, "c"),
            "needs 1 GPU on one node; the largest free is 0; node n1 is reserved for it as it "
            "drains");
}

TEST(FleetScheduleBestFit, PlacingConsumesWithinTheCall) {
  NodeState n = Node("n1", 8, 10, 100);
  std::vector<WorkRequest> pending;
  for (int i = 0; i < 5; ++i) {
    WorkRequest r = Job("j" + std::to_string(i), 2);
    r.cpus_per_node = 2;
    r.memory_per_node = 20 * kGiB;
    r.queued_at = i;
    pending.push_back(r);
  }
  ScheduleResult result = Schedule({n}, pending, kNow);
  EXPECT_EQ(PlacedOrder(result), (std::vector<std::string>{"j0", "j1", "j2", "j3"}));
  EXPECT_EQ(ReasonFor(result, "j4"),
            "needs 2 GPUs on one node; the largest free is 0; node n1 is reserved for it as it "
            "drains");
}

TEST(FleetScheduleBestFit, SmallJobsLeaveWholeMachinesForBigOnes) {
  // Three 2-GPU jobs then an 8-GPU one over two idle 8-GPU machines: packing the small jobs
  // together keeps one machine whole, so all four start.
  std::vector<WorkRequest> pending = {Job("s1", 2), Job("s2", 2), Job("s3", 2), Job("big", 8)};
  for (int i = 0; i < 4; ++i) pending[i].queued_at = i;
  auto placed = NodesOf(Schedule({Node("m1", 8), Node("m2", 8)}, pending, kNow));
  EXPECT_EQ(placed["s1"], std::vector<std::string>{"m1"});
  EXPECT_EQ(placed["s2"], std::vector<std::string>{"m1"});
  EXPECT_EQ(placed["s3"], std::vector<std::string>{"m1"});
  EXPECT_EQ(placed["big"], std::vector<std::string>{"m2"});
}

// --- Gangs -----------------------------------------------------------------------------------

TEST(FleetScheduleGang, PlacementGroupThenZoneThenSplit) {
  struct Row {
    const char* name;
    std::vector<NodeState> nodes;
    WorkRequest request;
    std::vector<std::string> ranks;  // empty: waits
    std::string reason;
  };
  auto split = [](WorkRequest r) {
    r.allow_zone_split = true;
    return r;
  };
  const Row rows[] = {
      {"one placement group over loose nodes of the same zone",
       {Zoned("a1", "a"), Zoned("a2", "a"), Zoned("g1", "a", "pg1"), Zoned("g2", "a", "pg1")},
       Job("gang", 8, 2),
       {"g1", "g2"},
       ""},
      {"a group too small: one zone instead",
       {Zoned("b1", "b"), Zoned("a1", "a", "pg1"), Zoned("a2", "a"), Zoned("a3", "a")},
       Job("gang", 8, 3),
       {"a1", "a2", "a3"},
       ""},
      {"the zone that leaves fewer GPUs spare",
       {Zoned("a1", "a"), Zoned("a2", "a"), Zoned("b1", "b", "", 4), Zoned("b2", "b", "", 4)},
       Job("gang", 4, 2),
       {"b1", "b2"},
       ""},
      {"the group with fewer nodes to spare",
       {Zoned("x1", "a", "big"), Zoned("x2", "a", "big"), Zoned("x3", "a", "big"),
        Zoned("y1", "a", "small"), Zoned("y2", "a", "small")},
       Job("gang", 8, 2),
       {"y1", "y2"},
       ""},
      {"no zone holds it now and splitting is off",
       {Zoned("a1", "a"), Zoned("a2", "a"), Busy(Zoned("a3", "a"), 0), Zoned("b1", "b")},
       Job("gang", 8, 3),
       {},
       "needs 3 nodes with 8 GPUs each in one zone; 3 have that free but at most 2 in any one "
       "zone (allow_zone_split is off); nodes a1, a2, a3 are reserved for it as they drain"},
      {"splitting allowed: as few zones as possible",
       {Zoned("c1", "c"), Zoned("a1", "a"), Zoned("a2", "a"), Zoned("b1", "b")},
       split(Job("gang", 8, 3)),
       {"a1", "a2", "b1"},
       ""},
      {"nodes without a zone label form one zone",
       {Node("n1", 8), Node("n2", 8)},
       Job("gang", 8, 2),
       {"n1", "n2"},
       ""},
      {"one node per rank, even with room for two slots",
       {Node("n1", 8)},
       Job("gang", 2, 2),
       {},
       "can never run on this fleet: nodes: 2 nodes requested; only 1 can hold 2 GPUs each"},
      {"too few nodes free now",
       {Zoned("a1", "a"), Busy(Zoned("a2", "a"), 2)},
       Job("gang", 4, 2),
       {},
       "needs 2 nodes with 4 GPUs each; only 1 has that free now; nodes a1, a2 are reserved "
       "for it as they drain"},
  };
  for (const Row& row : rows) {
    ScheduleResult result = Schedule(row.nodes, {row.request}, kNow);
    auto placed = NodesOf(result);
    if (row.ranks.empty()) {
      EXPECT_TRUE(result.placements.empty()) << row.name;
      EXPECT_EQ(ReasonFor(result, "gang"), row.reason) << row.name;
    } else {
      EXPECT_EQ(placed["gang"], row.ranks) << row.name << ": " << ReasonFor(result, "gang");
    }
  }
}

TEST(FleetScheduleGang, AllOrNothingConsumesNothing) {
  // The gang finds 2 of its 3 nodes; it must leave them to the job behind it, whole.
  std::vector<NodeState> nodes = {Zoned("a1", "a"), Zoned("a2", "a"), Busy(Zoned("a3", "a"), 4)};
  WorkRequest gang = Job("gang", 8, 3);
  gang.priority = 1;
  WorkRequest single = Job("single", 8);  // fits now on a1 or a2
  ScheduleResult result = Schedule(nodes, {gang, single}, kNow);
  // The gang is the head: a1, a2 and a3 are reserved for it, so the single job is held back
  // rather than given a machine the gang is waiting for.
  EXPECT_EQ(ReasonFor(result, "single"),
            "held back: it fits now only on capacity reserved for gang, which is ahead in the "
            "queue");
  // Without the gang's reservation (it asks for a zone that cannot hold it ever), the nodes
  // stay free for the single job: nothing of the failed gang is left behind.
  gang.node_selector = {{"zone", "b"}};
  result = Schedule(nodes, {gang, single}, kNow);
  EXPECT_EQ(NodesOf(result)["single"], std::vector<std::string>{"a1"});
  EXPECT_EQ(result.placements.size(), 1u);
}

TEST(FleetScheduleGang, RanksGetDistinctNodesAndLowestGpus) {
  std::vector<NodeState> nodes = {Zoned("a1", "a", "pg"), Zoned("a2", "a", "pg")};
  nodes[1].free_gpus = {2, 3, 4, 5, 6, 7};
  ScheduleResult result = Schedule(nodes, {Job("gang", 4, 2)}, kNow);
  ASSERT_EQ(result.placements.size(), 1u);
  const Placement& p = result.placements[0];
  ASSERT_EQ(p.ranks.size(), 2u);
  // Best fit first: a2 is left with fewer GPUs, so it is rank 0.
  EXPECT_EQ(p.ranks[0].node_id, "a2");
  EXPECT_EQ(p.ranks[0].gpus, (std::vector<int>{2, 3, 4, 5}));
  EXPECT_EQ(p.ranks[1].node_id, "a1");
  EXPECT_EQ(p.ranks[1].gpus, (std::vector<int>{0, 1, 2, 3}));
}

}  // namespace
}  // namespace tf::testing

namespace tf::testing {
namespace {

// prefer_spot: a spot node first, even where an on-demand one fits better; on-demand when no spot
// node has room; without it, best fit whatever the capacity.
TEST(FleetSchedulePreferSpot, SpotFirstThenOnDemand) {
  NodeState on_demand = Node("a-on-demand", 1);  // the better fit for a 1-GPU request
  NodeState spot = Node("b-spot", 4);
  spot.spot = true;
  WorkRequest prefer = Job("prefer", 1);
  prefer.prefer_spot = true;
  WorkRequest plain = Job("plain", 1);
  EXPECT_EQ(NodesOf(Schedule({on_demand, spot}, {prefer}, kNow))["prefer"],
            std::vector<std::string>{"b-spot"});
  EXPECT_EQ(NodesOf(Schedule({on_demand, spot}, {plain}, kNow))["plain"],
            std::vector<std::string>{"a-on-demand"});
  NodeState full_spot = Busy(spot, 0);
  EXPECT_EQ(NodesOf(Schedule({on_demand, full_spot}, {prefer}, kNow))["prefer"],
            std::vector<std::string>{"a-on-demand"})
      << "no spot node has room: on-demand";
}

// A gang that prefers spot takes the zone whose nodes are spot, even where an on-demand zone
// fits it better; without the preference, the better fit.
TEST(FleetSchedulePreferSpot, AGangTakesTheSpotZone) {
  std::vector<NodeState> nodes = {
      Node("a-1", 1, 64, 512, {{"zone", "a"}}), Node("a-2", 1, 64, 512, {{"zone", "a"}}),
      Node("b-1", 4, 64, 512, {{"zone", "b"}}), Node("b-2", 4, 64, 512, {{"zone", "b"}})};
  nodes[2].spot = nodes[3].spot = true;
  WorkRequest prefer = Job("prefer", 1, 2);
  prefer.prefer_spot = true;
  EXPECT_EQ(NodesOf(Schedule(nodes, {prefer}, kNow))["prefer"],
            (std::vector<std::string>{"b-1", "b-2"}));
  EXPECT_EQ(NodesOf(Schedule(nodes, {Job("plain", 1, 2)}, kNow))["plain"],
            (std::vector<std::string>{"a-1", "a-2"}));
}

}  // namespace
}  // namespace tf::testing

namespace tf::testing {
namespace {

NodeState WithGpuMemory(NodeState n, int64_t gib_each) {
  n.gpu_memory.assign(n.total_gpus, gib_each * kGiB);
  n.gpu_free_memory = n.gpu_memory;
  return n;
}

WorkRequest Share(std::string id, int64_t gib) {
  WorkRequest r = Job(std::move(id), 0);
  r.gpu_memory_per_node = gib * kGiB;
  return r;
}

// Shares of one GPU pack onto the GPU they fit most tightly, by declared memory: four 10 GiB
// servers take two 24 GiB GPUs (two each), not four, and leave the other GPUs free whole.
TEST(FleetScheduleGpuShares, SharesPackOntoFewGpusByMemory) {
  NodeState node = WithGpuMemory(Node("n1", 4), 24);
  ScheduleResult result = Schedule(
      {node}, {Share("a", 10), Share("b", 10), Share("c", 10), Share("d", 10), Job("whole", 2)},
      kNow);
  std::map<std::string, std::vector<int>> gpus;
  for (const Placement& p : result.placements) gpus[p.job_id] = p.ranks[0].gpus;
  EXPECT_EQ(gpus["a"], std::vector<int>{0});
  EXPECT_EQ(gpus["b"], std::vector<int>{0});
  EXPECT_EQ(gpus["c"], std::vector<int>{1});
  EXPECT_EQ(gpus["d"], std::vector<int>{1});
  EXPECT_EQ(gpus["whole"], (std::vector<int>{2, 3})) << "GPUs holding shares are not given whole";
}

TEST(FleetScheduleGpuShares, WhatDoesNotFitWaitsSayingWhy) {
  NodeState node = WithGpuMemory(Node("n1", 1), 24);
  ScheduleResult result = Schedule({node}, {Share("a", 16), Share("b", 16)}, kNow);
  EXPECT_EQ(PlacedOrder(result), std::vector<std::string>{"a"});
  EXPECT_EQ(ReasonFor(result, "b"),
            "needs 16 GiB free on one GPU on one node; the most free on any GPU is 8 GiB; node n1 "
            "is reserved for it as it drains");
  EXPECT_EQ(ReasonFor(Schedule({node}, {Share("big", 40)}, kNow), "big"),
            "can never run on this fleet: resources.gpu_memory: 40 GiB of one GPU requested; the "
            "largest GPU has 24 GiB");
  // A GPU given whole takes no share.
  NodeState busy = Busy(node, 0);
  busy.gpu_free_memory = {0};
  EXPECT_EQ(PlacedOrder(Schedule({busy}, {Share("c", 1)}, kNow)), std::vector<std::string>{});
}

}  // namespace
}  // namespace tf::testing
