// The scheduler's pure core as tables (see scheduler_test.cc): backfill with reservations, spot
// and on-demand pools, and bad input.
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

}  // namespace
}  // namespace tf::testing
