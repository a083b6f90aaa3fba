// The pool autoscaler's plan (pools/capacity_plan.h): which machines start, from which pool,
// and why the work they are for waits.
#include <gtest/gtest.h>

#include "pools/capacity_plan.h"

namespace tf::pools {
namespace {

PoolCapacity Pool(const std::string& name, int gpus, double price, bool spot, int max) {
  PoolCapacity p;
  p.spec.name = name;
  p.spec.machine.gpus = gpus;
  p.spec.machine.cpus = 8;
  p.spec.machine.memory_bytes = int64_t{64} << 30;
  p.spec.machine.price_per_hour = price;
  p.spec.machine.spot = spot;
  p.spec.max = max;
  return p;
}

fleet::WorkRequest Gang(const std::string& id, int nodes, int gpus) {
  fleet::WorkRequest r;
  r.job_id = id;
  r.nodes = nodes;
  r.gpus_per_node = gpus;
  r.cpus_per_node = 1;
  r.queued_at = 100;
  return r;
}

TEST(CapacityPlanTest, AGangStartsAsManyMachinesOfTheCheapestPoolThatHoldsIt) {
  std::vector<PoolCapacity> pools = {Pool("a100", 8, 30.0, false, 4), Pool("a10", 1, 1.0, false, 4),
                                     Pool("t4", 1, 0.5, false, 1)};
  CapacityPlan plan = PlanCapacity({}, pools, {Gang("job_1", 2, 1)});
  // t4 is cheaper but may hold only one machine; a gang of two cannot span two pools' zones
  // unless it may, and a100 is dearer.
  ASSERT_EQ(plan.launches.size(), 1u);
  EXPECT_EQ(plan.launches[0].pool, "a10");
  EXPECT_EQ(plan.launches[0].machines, 2);
  EXPECT_EQ(plan.launches[0].job_ids, std::vector<std::string>{"job_1"});
  EXPECT_EQ(plan.reasons["job_1"], "pool a10 is starting 2 nodes for it");
}

TEST(CapacityPlanTest, MachinesAlreadyComingAreCountedAndWorkThatFitsNowAsksForNothing) {
  PoolCapacity a10 = Pool("a10", 1, 1.0, false, 4);
  a10.machines = a10.starting = 1;
  fleet::NodeState free_node = ShapeNode(Pool("cpu", 0, 0.1, false, 1).spec, "node_cpu");
  fleet::WorkRequest cpu_job = Gang("job_cpu", 1, 0);
  CapacityPlan plan = PlanCapacity({free_node}, {a10}, {Gang("job_1", 1, 1), cpu_job});
  EXPECT_TRUE(plan.launches.empty());
  EXPECT_EQ(plan.reasons["job_1"], "pool a10 is starting 1 node for it");
  EXPECT_FALSE(plan.reasons.count("job_cpu"));

  // A second GPU job needs one more machine than the one coming.
  plan = PlanCapacity({free_node}, {a10}, {Gang("job_1", 1, 1), Gang("job_2", 1, 1)});
  ASSERT_EQ(plan.launches.size(), 1u);
  EXPECT_EQ(plan.launches[0].machines, 1);
  EXPECT_EQ(plan.launches[0].job_ids, std::vector<std::string>{"job_2"});
}

TEST(CapacityPlanTest, SpotPoolsServeWorkThatAllowsOrPrefersSpot) {
  std::vector<PoolCapacity> pools = {Pool("od", 1, 1.0, false, 2), Pool("spot", 1, 1.5, true, 2)};
  fleet::WorkRequest any = Gang("job_any", 1, 1);
  fleet::WorkRequest prefers = Gang("job_prefers", 1, 1);
  prefers.prefer_spot = true;
  fleet::WorkRequest on_demand = Gang("job_od", 1, 1);
  on_demand.capacity = fleet::CapacityType::kOnDemand;

  EXPECT_EQ(PlanCapacity({}, pools, {any}).launches.at(0).pool, "od");  // cheaper
  EXPECT_EQ(PlanCapacity({}, pools, {prefers}).launches.at(0).pool, "spot");
  pools[1].spec.machine.price_per_hour = 0.3;
  EXPECT_EQ(PlanCapacity({}, pools, {on_demand}).launches.at(0).pool, "od");
  EXPECT_EQ(PlanCapacity({}, pools, {any}).launches.at(0).pool, "spot");
}

TEST(CapacityPlanTest, NothingStartsForWorkNoPoolCanHoldOrBeyondMax) {
  std::vector<PoolCapacity> pools = {Pool("a10", 1, 1.0, false, 1)};
  CapacityPlan plan = PlanCapacity({}, pools, {Gang("job_big", 1, 8)});
  EXPECT_TRUE(plan.launches.empty());
  EXPECT_TRUE(plan.reasons.empty());

  pools[0].machines = 1;  // at max, and registered (busy)
  plan = PlanCapacity({}, pools, {Gang("job_1", 1, 1)});
  EXPECT_TRUE(plan.launches.empty());

  // A label no pool's machines carry.
  fleet::WorkRequest labelled = Gang("job_l", 1, 1);
  labelled.node_selector["gpu"] = "h100";
  pools[0].machines = 0;
  EXPECT_TRUE(PlanCapacity({}, pools, {labelled}).launches.empty());
  labelled.node_selector = {{"pool", "a10"}};
  EXPECT_EQ(PlanCapacity({}, pools, {labelled}).launches.size(), 1u);
}

TEST(CapacityPlanTest, APoolBelowItsMinimumStartsMachinesForNoJob) {
  PoolCapacity warm = Pool("warm", 1, 1.0, false, 3);
  warm.spec.min = 2;
  warm.machines = 1;
  CapacityPlan plan = PlanCapacity({}, {warm}, {Gang("job_1", 1, 1)});
  ASSERT_EQ(plan.launches.size(), 1u);
  EXPECT_EQ(plan.launches[0].machines, 1);  // to reach min; the job takes one of them
  EXPECT_TRUE(plan.launches[0].job_ids.empty());
}

TEST(CapacityPlanTest, HigherPriorityWorkIsProvidedForFirst) {
  std::vector<PoolCapacity> pools = {Pool("a10", 1, 1.0, false, 1)};
  fleet::WorkRequest low = Gang("job_low", 1, 1);
  fleet::WorkRequest high = Gang("job_high", 1, 1);
  high.priority = 5;
  high.queued_at = 200;
  CapacityPlan plan = PlanCapacity({}, pools, {low, high});
  ASSERT_EQ(plan.launches.size(), 1u);
  EXPECT_EQ(plan.launches[0].job_ids, std::vector<std::string>{"job_high"});
  EXPECT_FALSE(plan.reasons.count("job_low"));
}

}  // namespace
}  // namespace tf::pools
