#include "fleet/feasibility.h"

#include <algorithm>
#include <set>
#include <string>

#include "fleet/fit.h"
#include "fleet/gang.h"

namespace tf::fleet {
namespace {

std::string Join(const std::set<std::string>& values) {
  std::string out;
  for (const auto& v : values) out += (out.empty() ? "" : ", ") + v;
  return out;
}

// The selector pair no node carries, or the pairs no node carries together.
Status CheckLabels(const std::vector<const NodeState*>& nodes, const WorkRequest& request) {
  for (const auto& [key, value] : request.node_selector) {
    std::set<std::string> seen;
    for (const NodeState* node : nodes) {
      auto it = node->labels.find(key);
      if (it != node->labels.end()) seen.insert(it->second);
    }
    if (seen.count(value)) continue;
    if (seen.empty()) {
      return InvalidArgument("node_selector: no node has a label '" + key + "' (wanted " + key +
                             "=" + value + ")");
    }
    return InvalidArgument("node_selector: no node has " + key + "=" + value + " (" + key +
                           " values in the fleet: " + Join(seen) + ")");
  }
  bool any = std::any_of(nodes.begin(), nodes.end(),
                         [&](const NodeState* n) { return MatchesLabels(*n, request); });
  if (!any) {
    std::string pairs;
    for (const auto& [key, value] : request.node_selector) {
      pairs += (pairs.empty() ? "" : ", ") + key + "=" + value;
    }
    return InvalidArgument("node_selector: no node has all of " + pairs + " together");
  }
  return OkStatus();
}

// " (of the spot nodes labelled zone=a)" when the request narrows the fleet, else "".
std::string OfThoseWith(const WorkRequest& request) {
  return HasConstraints(request) ? " (of the " + DescribeNodes(request, true) + ")" : "";
}

Status CheckResources(const std::vector<const NodeState*>& admitted, const WorkRequest& request) {
  int64_t gpus = 0, cpus = 0, memory = 0, gpu_memory = 0;
  for (const NodeState* node : admitted) {
    gpus = std::max<int64_t>(gpus, node->total_gpus);
    gpu_memory = std::max(gpu_memory, LargestGpuMemory(*node));
    cpus = std::max<int64_t>(cpus, node->total_cpus);
    memory = std::max(memory, node->total_memory_bytes);
  }
  std::string among = OfThoseWith(request);
  if (request.gpus_per_node > gpus) {
    return InvalidArgument("resources.gpus: " + CountOf(request.gpus_per_node, "GPU") +
                           " per node requested; the largest node" + among + " has " +
                           std::to_string(gpus));
  }
  if (request.gpu_memory_per_node > gpu_memory) {
    return InvalidArgument("resources.gpu_memory: " + FormatMemory(request.gpu_memory_per_node) +
                           " of one GPU requested; the largest GPU" + among + " has " +
                           FormatMemory(gpu_memory));
  }
  if (request.cpus_per_node > cpus) {
    return InvalidArgument("resources.cpus: " + CountOf(request.cpus_per_node, "CPU") +
                           " per node requested; the largest node" + among + " has " +
                           std::to_string(cpus));
  }
  if (request.memory_per_node > memory) {
    return InvalidArgument("resources.memory: " + FormatMemory(request.memory_per_node) +
                           " per node requested; the largest node" + among + " has " +
                           FormatMemory(memory));
  }
  bool any = std::any_of(admitted.begin(), admitted.end(),
                         [&](const NodeState* n) { return HasTotal(*n, request); });
  if (!any) {
    return InvalidArgument("resources: no node" + among + " has " + DescribeSlot(request) +
                           " together");
  }
  return OkStatus();
}

}  // namespace

Status CheckFeasibleAmong(const std::vector<NodeState>& nodes, const WorkRequest& request,
                          bool schedulable_only) {
  TF_RETURN_IF_ERROR(ValidateRequest(request));
  std::vector<const NodeState*> counted;
  for (const NodeState& node : nodes) {
    if (node.schedulable || !schedulable_only) counted.push_back(&node);
  }
  if (counted.empty()) return OkStatus();

  TF_RETURN_IF_ERROR(CheckLabels(counted, request));
  std::vector<const NodeState*> admitted;
  for (const NodeState* node : counted) {
    if (MatchesLabels(*node, request) && MatchesCapacity(*node, request.capacity)) {
      admitted.push_back(node);
    }
  }
  if (admitted.empty()) {
    std::string where = request.node_selector.empty() ? "" : " with the requested labels";
    return InvalidArgument(std::string("capacity: ") + CapacityTypeName(request.capacity) +
                           " capacity requested; no node" + where + " is " +
                           CapacityTypeName(request.capacity));
  }
  TF_RETURN_IF_ERROR(CheckResources(admitted, request));

  // Indices into `nodes`, as the gang helpers count them.
  std::vector<Candidate> fitting;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const NodeState& node = nodes[i];
    if ((node.schedulable || !schedulable_only) && MatchesLabels(node, request) &&
        MatchesCapacity(node, request.capacity) && HasTotal(node, request)) {
      fitting.push_back({i});
    }
  }
  std::string slot = DescribeSlot(request);
  if (static_cast<int64_t>(fitting.size()) < request.nodes) {
    return InvalidArgument("nodes: " + CountOf(request.nodes, "node") + " requested; only " +
                           std::to_string(fitting.size()) + " can hold " + slot + " each");
  }
  if (request.nodes > 1 && !request.allow_zone_split) {
    int most = MostInOneZone(Topology::Of(nodes), fitting);
    if (most < request.nodes) {
      return InvalidArgument("allow_zone_split: " + CountOf(request.nodes, "node") +
                             " requested in one zone; at most " + std::to_string(most) +
                             " in any one zone can hold " + slot +
                             " each (allow_zone_split lets a gang span zones)");
    }
  }
  return OkStatus();
}

Status CheckFeasible(const std::vector<NodeState>& nodes, const WorkRequest& request) {
  return CheckFeasibleAmong(nodes, request, /*schedulable_only=*/false);
}

}  // namespace tf::fleet
