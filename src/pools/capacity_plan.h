// The pool autoscaler's pure core: given the fleet as the scheduler sees it, the work that
// waits, and each pool's machines, which machines to start and for what. No clock, store or
// process here (pool_controller.h does those).
//
// How it decides (docs/pools.md):
//   - Machines that were asked for but have not registered yet count as nodes of their pool's
//     shape, so work they will take asks for nothing more.
//   - Requests are taken in the scheduler's order. One that fits the fleet (with the machines
//     already coming, and after what earlier requests took) needs nothing. Otherwise the
//     pools are tried in order of preference: of the capacity the request allows, spot pools
//     first when it allows spot and on-demand otherwise or when spot is only preferred, then
//     the cheaper machine, then the name. From the first pool where 1, 2, ... up to the
//     request's node count of new machines make it fit (a gang's new machines share the
//     pool's zone and placement group), that many are started, within the pool's max.
//   - A pool below its min starts machines to reach it.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "fleet/scheduler.h"
#include "pools/pool_spec.h"

namespace tf::pools {

struct PoolCapacity {
  PoolSpec spec;
  int machines = 0;  // asked for and not stopped: starting, registered or stopping
  int starting = 0;  // of those, the ones not registered yet
};

struct Launch {
  std::string pool;
  int machines = 0;
  std::vector<std::string> job_ids;  // the work they are for; empty: the pool's min
};

struct CapacityPlan {
  std::vector<Launch> launches;  // at most one per pool
  // Why each request that a launch (this one or an earlier one) is for still waits:
  // "pool gpu is starting 2 nodes for it".
  std::map<std::string, std::string> reasons;
};

// A node of the pool's shape, as the scheduler would see it registered and empty.
fleet::NodeState ShapeNode(const PoolSpec& pool, const std::string& id);

// `fleet`: registered nodes with what is in use taken off (JobService::CapacityView).
// `pending`: the requests that want placement.
CapacityPlan PlanCapacity(const std::vector<fleet::NodeState>& fleet,
                          const std::vector<PoolCapacity>& pools,
                          const std::vector<fleet::WorkRequest>& pending);

}  // namespace tf::pools
