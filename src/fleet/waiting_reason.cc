#include "fleet/waiting_reason.h"

#include <algorithm>

#include "fleet/feasibility.h"
#include "fleet/fit.h"

namespace tf::fleet {
namespace {

std::string SingleNodeReason(const std::vector<NodeState>& nodes,
                             const std::vector<size_t>& admitted, const WorkRequest& request) {
  bool any = false;
  int64_t gpus = 0, cpus = 0, memory = 0, gpu_memory = 0;
  for (size_t i : admitted) {
    const NodeState& node = nodes[i];
    any = true;
    gpus = std::max<int64_t>(gpus, node.free_gpus.size());
    gpu_memory = std::max(gpu_memory, LargestGpuMemoryFree(node));
    cpus = std::max<int64_t>(cpus, node.free_cpus);
    memory = std::max(memory, node.free_memory_bytes);
  }
  std::string where = " on one " + DescribeNodes(request, false);
  if (!any) return "no schedulable " + DescribeNodes(request, false);
  if (request.gpus_per_node > gpus) {
    return "needs " + CountOf(request.gpus_per_node, "GPU") + where + "; the largest free is " +
           std::to_string(gpus);
  }
  if (request.gpu_memory_per_node > gpu_memory) {
    return "needs " + FormatMemory(request.gpu_memory_per_node) + " free on one GPU" + where +
           "; the most free on any GPU is " + FormatMemory(gpu_memory);
  }
  if (request.cpus_per_node > cpus) {
    return "needs " + CountOf(request.cpus_per_node, "CPU") + where + "; the most free is " +
           std::to_string(cpus);
  }
  if (request.memory_per_node > memory) {
    return "needs " + FormatMemory(request.memory_per_node) + " memory" + where +
           "; the most free is " + FormatMemory(memory);
  }
  return "needs " + DescribeSlot(request) + where + "; no node has all of them free";
}

}  // namespace

std::string NeverFitsReason(const std::vector<NodeState>& nodes, const WorkRequest& request) {
  if (nodes.empty()) return "the fleet has no nodes yet";
  if (Status all = CheckFeasibleAmong(nodes, request, false); !all.ok()) {
    return "can never run on this fleet: " + all.message();
  }
  bool any_schedulable =
      std::any_of(nodes.begin(), nodes.end(), [](const NodeState& n) { return n.schedulable; });
  if (!any_schedulable) return "no schedulable node: every node is draining, lost or cordoned";
  if (Status now = CheckFeasibleAmong(nodes, request, true); !now.ok()) {
    return "cannot run until draining, lost or cordoned nodes return: " + now.message();
  }
  return "no set of schedulable nodes can hold it";  // not reached: the checks above agree
}

std::string BlockedReason(const std::vector<NodeState>& nodes, const Topology& topology,
                          const std::vector<size_t>& admitted, const WorkRequest& request) {
  if (request.nodes == 1) return SingleNodeReason(nodes, admitted, request);
  std::vector<Candidate> free;
  for (size_t i : admitted) {
    if (HasFree(nodes[i], request)) free.push_back({i});
  }
  std::string needs = "needs " + std::to_string(request.nodes) + " " +
                      DescribeNodes(request, true) + " with " + DescribeSlot(request) + " each";
  int have = static_cast<int>(free.size());
  if (have == 0) return needs + "; none has that free now";
  if (have == 1) return needs + "; only 1 has that free now";
  if (have < request.nodes) return needs + "; only " + std::to_string(have) + " have that free now";
  return needs + " in one zone; " + std::to_string(have) + " have that free but at most " +
         std::to_string(MostInOneZone(topology, free)) +
         " in any one zone (allow_zone_split is off)";
}

std::string ReservedReason(const std::vector<NodeState>& nodes,
                           const std::vector<size_t>& reserved) {
  constexpr size_t kNamed = 8;
  std::string names;
  for (size_t i = 0; i < reserved.size() && i < kNamed; ++i) {
    names += (i ? ", " : "") + nodes[reserved[i]].id;
  }
  if (reserved.size() > kNamed)
    names += " and " + std::to_string(reserved.size() - kNamed) + " more";
  if (reserved.size() == 1) return "node " + names + " is reserved for it as it drains";
  return "nodes " + names + " are reserved for it as they drain";
}

std::string HeldBackReason(const std::string& head) {
  return "held back: it fits now only on capacity reserved for " + head +
         ", which is ahead in the queue";
}

}  // namespace tf::fleet
