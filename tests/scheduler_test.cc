// The scheduler's pure core as tables: each row is a fleet, the pending work and what must come
// out (where each job lands, or the words of why it waits).
#include "fleet/scheduler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace tf::testing {
namespace {

using fleet::CapacityType;
using fleet::CheckFeasible;
using fleet::NodeState;
using fleet::Placement;
using fleet::Schedule;
using fleet::ScheduleResult;
using fleet::WorkRequest;

constexpr TimeMs kNow = 1'700'000'000'000;
constexpr int64_t kGiB = int64_t{1} << 30;

// An idle node: every GPU, CPU and byte free.
NodeState Node(std::string id, int gpus, int cpus = 64, int64_t memory_gib = 512,
               std::map<std::string, std::string> labels = {}) {
  NodeState n;
  n.id = std::move(id);
  n.total_gpus = gpus;
  for (int i = 0; i < gpus; ++i) n.free_gpus.push_back(i);
  n.total_cpus = n.free_cpus = cpus;
  n.total_memory_bytes = n.free_memory_bytes = memory_gib * kGiB;
  n.labels = std::move(labels);
  return n;
}

// A node with only `free_gpus` of its GPUs free (the highest indices in use).
NodeState Busy(NodeState n, int free_gpus) {
  n.free_gpus.resize(free_gpus);
  return n;
}

WorkRequest Job(std::string id, int gpus, int nodes = 1) {
  WorkRequest r;
  r.job_id = std::move(id);
  r.gpus_per_node = gpus;
  r.nodes = nodes;
  return r;
}

// job id -> the node ids of its ranks, in rank order.
std::map<std::string, std::vector<std::string>> NodesOf(const ScheduleResult& result) {
  std::map<std::string, std::vector<std::string>> out;
  for (const Placement& p : result.placements) {
    for (const auto& rank : p.ranks) out[p.job_id].push_back(rank.node_id);
  }
  return out;
}

std::string ReasonFor(const ScheduleResult& result, const std::string& job_id) {
  for (const auto& w : result.waiting) {
    if (w.job_id == job_id) return w.reason;
  }
  return "(not waiting)";
}

std::vector<std::string> PlacedOrder(const ScheduleResult& result) {
  std::vector<std::string> out;
  for (const Placement& p : result.placements) out.push_back(p.job_id);
  return out;
}

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

NodeState Zoned(std::string id, const std::string& zone, const std::string& group = "",
                int gpus = 8) {
  std::map<std::string, std::string> labels = {{"zone", zone}};
  if (!group.empty()) labels["placement_group"] = group;
  return Node(std::move(id), gpus, 64, 512, labels);
}

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

// --- Backfill --------------------------------------------------------------------------------

TEST(FleetScheduleBackfill, SmallJobsDoNotStarveTheHead) {
  // The 8-GPU head waits for n1 to drain; a stream of 1-GPU jobs behind it must not take the
  // GPUs n1 frees, but may use n2.
  std::vector<NodeState> nodes = {Busy(Node("n1", 8), 4), Busy(Node("n2", 4), 2)};
  std::vector<WorkRequest> pending = {Job("head", 8)};
  for (int i = 0; i < 4; ++i) {
    pending.push_back(Job("small" + std::to_string(i), 1));
    pending.back().queued_at = i + 1;
  }
  ScheduleResult result = Schedule(nodes, pending, kNow);
  auto placed = NodesOf(result);
  EXPECT_EQ(placed["small0"], std::vector<std::string>{"n2"});
  EXPECT_EQ(placed["small1"], std::vector<std::string>{"n2"});
  EXPECT_EQ(placed.count("small2"), 0u);
  EXPECT_EQ(ReasonFor(result, "head"),
            "needs 8 GPUs on one node; the largest free is 4; node n1 is reserved for it as it "
            "drains");
  EXPECT_EQ(ReasonFor(result, "small2"),
            "held back: it fits now only on capacity reserved for head, which is ahead in the "
            "queue");
}

TEST(FleetScheduleBackfill, ReservationTable) {
  struct Row {
    const char* name;
    std::vector<NodeState> nodes;
    std::vector<WorkRequest> pending;  // in queue order
    std::map<std::string, std::vector<std::string>> placed;
    std::string reserved;  // the end of the head's reason, when there is a head
  };
  auto queued = [](std::vector<WorkRequest> rs) {
    for (size_t i = 0; i < rs.size(); ++i) rs[i].queued_at = static_cast<TimeMs>(i);
    return rs;
  };
  auto backing_off = [](WorkRequest r) {
    r.not_before = kNow + kMinuteMs;
    return r;
  };
  auto cpu_only = [](WorkRequest r) {
    r.cpus_per_node = 8;
    return r;
  };
  const Row rows[] = {
      // The head needs 6 of n1's 8 GPUs: the other 2 may be backfilled, never more, though 4
      // are free now.
      {"room beyond the head's slot is backfilled, no more",
       {Busy(Node("n1", 8), 4)},
       queued({Job("head", 6), Job("b1", 2), Job("b2", 2)}),
       {{"b1", {"n1"}}},
       "node n1 is reserved for it as it drains"},
      // Among machines that could hold the head: the smallest, then the least in use.
      {"reserve the smallest, least used machine",
       {Busy(Node("big", 16), 2), Busy(Node("busy", 8), 0), Busy(Node("quiet", 8), 6)},
       queued({Job("head", 8), Job("s1", 2), Job("s2", 2)}),
       {{"s1", {"big"}}},
       "node quiet is reserved for it as it drains"},
      // CPU-only work may use a reserved node: the head needs its GPUs, not its CPUs.
      {"other resources of a reserved node stay usable",
       {Busy(Node("n1", 8), 4)},
       queued({Job("head", 8), cpu_only(Job("cpu", 0))}),
       {{"cpu", {"n1"}}},
       "node n1 is reserved for it as it drains"},
      // A request that can never fit reserves nothing; the next blocked one becomes the head.
      {"an impossible request reserves nothing",
       {Busy(Node("n1", 8), 4), Busy(Node("n2", 8), 6)},
       queued({Job("huge", 16), Job("head", 8), Job("s1", 2), Job("s2", 2), Job("s3", 2)}),
       {{"s1", {"n1"}}, {"s2", {"n1"}}},
       "node n2 is reserved for it as it drains"},
      // A backing-off request is not the head: it reserves nothing.
      {"a backing-off request reserves nothing",
       {Busy(Node("n1", 8), 4)},
       queued({backing_off(Job("later", 8)), Job("s1", 4)}),
       {{"s1", {"n1"}}},
       ""},
      // Only one reservation: the second blocked big job does not hold n1 back.
      {"one reservation only",
       {Busy(Node("n1", 8), 4), Busy(Node("n2", 8), 6)},
       queued({Job("head", 8), Job("second", 8), Job("s1", 4)}),
       {{"s1", {"n1"}}},
       "node n2 is reserved for it as it drains"},
      // Work ahead of the head is placed first and may use any node.
      {"work ahead of the head is placed first",
       {Busy(Node("n1", 8), 4)},
       queued({Job("first", 4), Job("head", 8), Job("s1", 1)}),
       {{"first", {"n1"}}},
       "node n1 is reserved for it as it drains"},
  };
  for (const Row& row : rows) {
    ScheduleResult result = Schedule(row.nodes, row.pending, kNow);
    EXPECT_EQ(NodesOf(result), row.placed) << row.name;
    EXPECT_EQ(result.placements.size() + result.waiting.size(), row.pending.size()) << row.name;
    if (!row.reserved.empty()) {
      std::string reason = ReasonFor(result, "head");
      EXPECT_TRUE(reason.ends_with("; " + row.reserved)) << row.name << ": " << reason;
    }
  }
}

TEST(FleetScheduleBackfill, GangHeadReservesAWholeGroup) {
  // The 2-node gang waits for pg1 (two 8-GPU nodes, half busy); small jobs go to the loose node.
  std::vector<NodeState> nodes = {Busy(Zoned("g1", "a", "pg1"), 4),
                                  Busy(Zoned("g2", "a", "pg1"), 4), Zoned("loose", "b")};
  nodes[2].total_gpus = 2;
  nodes[2].free_gpus = {0, 1};
  std::vector<WorkRequest> pending = {Job("gang", 8, 2), Job("s1", 1), Job("s2", 1), Job("s3", 1)};
  for (size_t i = 0; i < pending.size(); ++i) pending[i].queued_at = static_cast<TimeMs>(i);
  ScheduleResult result = Schedule(nodes, pending, kNow);
  auto placed = NodesOf(result);
  EXPECT_EQ(placed["s1"], std::vector<std::string>{"loose"});
  EXPECT_EQ(placed["s2"], std::vector<std::string>{"loose"});
  EXPECT_EQ(placed.count("s3"), 0u);
  EXPECT_EQ(ReasonFor(result, "gang"),
            "needs 2 nodes with 8 GPUs each; none has that free now; nodes g1, g2 are reserved "
            "for it as they drain");
}

// --- Spot and on-demand ----------------------------------------------------------------------

TEST(FleetScheduleCapacity, SpotAndOnDemandPools) {
  NodeState od = Node("od", 8);
  od.price_per_hour = 30;
  NodeState spot = Node("spot", 8);
  spot.spot = true;
  spot.price_per_hour = 10;
  WorkRequest want_spot = Job("want-spot", 8);
  want_spot.capacity = CapacityType::kSpot;
  WorkRequest want_od = Job("want-od", 8);
  want_od.capacity = CapacityType::kOnDemand;
  WorkRequest any = Job("any", 4);
  // Each pool serves its own kind; an equal fit on either goes to the cheaper.
  auto placed = NodesOf(Schedule({od, spot}, {want_spot, want_od}, kNow));
  EXPECT_EQ(placed["want-spot"], std::vector<std::string>{"spot"});
  EXPECT_EQ(placed["want-od"], std::vector<std::string>{"od"});
  placed = NodesOf(Schedule({od, spot}, {any}, kNow));
  EXPECT_EQ(placed["any"], std::vector<std::string>{"spot"});
  // A spot-only job waits while the spot pool is full even with on-demand idle.
  ScheduleResult result = Schedule({od, Busy(spot, 0)}, {want_spot}, kNow);
  EXPECT_TRUE(result.placements.empty());
  EXPECT_EQ(ReasonFor(result, "want-spot"),
            "needs 8 GPUs on one spot node; the largest free is 0; node spot is reserved for it "
            "as it drains");
}

// --- Bad input -------------------------------------------------------------------------------

TEST(FleetScheduleInput, BadRequestsWaitWithAReason) {
  struct Row {
    const char* name;
    WorkRequest request;
    std::string reason;
  };
  auto with = [](WorkRequest r, auto change) {
    change(r);
    return r;
  };
  const Row rows[] = {
      {"no job id", Job("", 1), "invalid request: job_id: must not be empty"},
      {"zero nodes", Job("j", 1, 0), "invalid request: nodes: must be at least 1, got 0"},
      {"negative GPUs", Job("j", -1),
       "invalid request: resources.gpus: must not be negative, got -1"},
      {"negative CPUs", with(Job("j", 1), [](auto& r) { r.cpus_per_node = -2; }),
       "invalid request: resources.cpus: must not be negative, got -2"},
      {"negative memory", with(Job("j", 1), [](auto& r) { r.memory_per_node = -5; }),
       "invalid request: resources.memory: must not be negative, got -5 bytes"},
      {"empty label name",
       with(Job("j", 1),
            [](auto& r) {
              r.node_selector = {{"", "x"}};
            }),
       "invalid request: node_selector: a label name must not be empty"},
  };
  for (const Row& row : rows) {
    ScheduleResult result = Schedule({Node("n1", 8)}, {row.request}, kNow);
    EXPECT_TRUE(result.placements.empty()) << row.name;
    ASSERT_EQ(result.waiting.size(), 1u) << row.name;
    EXPECT_EQ(result.waiting[0].reason, row.reason) << row.name;
  }
}

TEST(FleetScheduleInput, DuplicateJobIdsAndEmptyFleets) {
  WorkRequest first = Job("same", 1);
  WorkRequest again = Job("same", 1);
  again.queued_at = 5;
  ScheduleResult result = Schedule({Node("n1", 8)}, {again, first}, kNow);
  ASSERT_EQ(result.placements.size(), 1u);
  ASSERT_EQ(result.waiting.size(), 1u);
  EXPECT_EQ(result.waiting[0].reason,
            "duplicate job_id: an earlier request in this pass has the same id");

  result = Schedule({}, {Job("j", 1)}, kNow);
  EXPECT_EQ(ReasonFor(result, "j"), "the fleet has no nodes yet");
  EXPECT_TRUE(Schedule({Node("n1", 8)}, {}, kNow).placements.empty());
}

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
