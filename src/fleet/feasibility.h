// Whether a request could ever run on a fleet, ignoring what is in use: CheckFeasible
// (scheduler.h) over every node, and the scheduler's own question over the schedulable ones.
#pragma once

#include <vector>

#include "base/status.h"
#include "fleet/scheduler.h"

namespace tf::fleet {

// CheckFeasible, counting only schedulable nodes when `schedulable_only`. With no node counted
// it returns OK.
Status CheckFeasibleAmong(const std::vector<NodeState>& nodes, const WorkRequest& request,
                          bool schedulable_only);

}  // namespace tf::fleet
