// Why a request waits, in words for the person who submitted it. Each function looks at the
// nodes as the pass has left them (placements so far consumed).
#pragma once

#include <string>
#include <vector>

#include "fleet/gang.h"
#include "fleet/scheduler.h"

namespace tf::fleet {

// No set of schedulable nodes could hold the request even drained: what is missing, and
// whether it is missing from the whole fleet or only while some nodes are out of service.
std::string NeverFitsReason(const std::vector<NodeState>& nodes, const WorkRequest& request);

// The request could run on drained nodes but not on what is free now: the resource that runs
// short ("needs 8 GPUs on one node; the largest free is 4") or, for a gang, how many nodes fit
// and where. `admitted` are the nodes the request may use (fleet/fit.h, Admits); reservations
// are ignored.
std::string BlockedReason(const std::vector<NodeState>& nodes, const Topology& topology,
                          const std::vector<size_t>& admitted, const WorkRequest& request);

// "node a is reserved for it as it drains", "nodes a, b are reserved for it as they drain".
std::string ReservedReason(const std::vector<NodeState>& nodes,
                           const std::vector<size_t>& reserved);

// The request would fit now but only on what is reserved for `head`.
std::string HeldBackReason(const std::string& head);

}  // namespace tf::fleet
