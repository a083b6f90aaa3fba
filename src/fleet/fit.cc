#include "fleet/fit.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

namespace tf::fleet {

bool MatchesLabels(const NodeState& node, const WorkRequest& request) {
  for (const auto& [key, value] : request.node_selector) {
    auto it = node.labels.find(key);
    if (it == node.labels.end() || it->second != value) return false;
  }
  return true;
}

bool MatchesCapacity(const NodeState& node, CapacityType capacity) {
  switch (capacity) {
    case CapacityType::kSpot:
      return node.spot;
    case CapacityType::kOnDemand:
      return !node.spot;
    case CapacityType::kAny:
      return true;
  }
  return false;
}

bool Admits(const NodeState& node, const WorkRequest& request) {
  return node.schedulable && MatchesCapacity(node, request.capacity) &&
         MatchesLabels(node, request);
}

bool HasFree(const NodeState& node, const WorkRequest& request) {
  return static_cast<int64_t>(node.free_gpus.size()) >= request.gpus_per_node &&
         node.free_cpus >= request.cpus_per_node &&
         node.free_memory_bytes >= request.memory_per_node &&
         (request.gpu_memory_per_node == 0 || GpuForShare(node, request) >= 0);
}

bool HasTotal(const NodeState& node, const WorkRequest& request) {
  return node.total_gpus >= request.gpus_per_node && node.total_cpus >= request.cpus_per_node &&
         node.total_memory_bytes >= request.memory_per_node &&
         LargestGpuMemory(node) >= request.gpu_memory_per_node;
}

int GpuForShare(const NodeState& node, const WorkRequest& request) {
  int best = -1;
  for (size_t g = 0; g < node.gpu_free_memory.size(); ++g) {
    int64_t left = node.gpu_free_memory[g];
    if (left < request.gpu_memory_per_node) continue;
    if (best < 0 || left < node.gpu_free_memory[best]) best = static_cast<int>(g);
  }
  return best;
}

int64_t LargestGpuMemoryFree(const NodeState& node) {
  int64_t most = 0;
  for (int64_t left : node.gpu_free_memory) most = std::max(most, left);
  return most;
}

int64_t LargestGpuMemory(const NodeState& node) {
  int64_t most = 0;
  for (int64_t total : node.gpu_memory) most = std::max(most, total);
  return most;
}

Status ValidateRequest(const WorkRequest& request) {
  if (request.job_id.empty()) return InvalidArgument("job_id: must not be empty");
  if (request.nodes < 1) {
    return InvalidArgument("nodes: must be at least 1, got " + std::to_string(request.nodes));
  }
  if (request.gpus_per_node < 0) {
    return InvalidArgument("resources.gpus: must not be negative, got " +
                           std::to_string(request.gpus_per_node));
  }
  if (request.gpu_memory_per_node < 0) {
    return InvalidArgument("resources.gpu_memory: must not be negative, got " +
                           std::to_string(request.gpu_memory_per_node) + " bytes");
  }
  if (request.gpu_memory_per_node > 0 && request.gpus_per_node > 0) {
    return InvalidArgument("resources.gpu_memory: a share of one GPU, so resources.gpus must be 0");
  }
  if (request.cpus_per_node < 0) {
    return InvalidArgument("resources.cpus: must not be negative, got " +
                           std::to_string(request.cpus_per_node));
  }
  if (request.memory_per_node < 0) {
    return InvalidArgument("resources.memory: must not be negative, got " +
                           std::to_string(request.memory_per_node) + " bytes");
  }
  for (const auto& [key, value] : request.node_selector) {
    if (key.empty()) return InvalidArgument("node_selector: a label name must not be empty");
  }
  return OkStatus();
}

std::string CountOf(int64_t n, const char* noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

std::string FormatMemory(int64_t bytes) {
  constexpr int64_t kMiB = int64_t{1} << 20;
  char text[64];
  if (bytes >= kGiB) {
    if (bytes % kGiB == 0) {
      std::snprintf(text, sizeof text, "%lld GiB", static_cast<long long>(bytes / kGiB));
    } else {
      std::snprintf(text, sizeof text, "%.1f GiB", static_cast<double>(bytes) / kGiB);
    }
  } else if (bytes >= kMiB) {
    std::snprintf(text, sizeof text, "%lld MiB", static_cast<long long>(bytes / kMiB));
  } else {
    std::snprintf(text, sizeof text, "%lld bytes", static_cast<long long>(bytes));
  }
  return text;
}

std::string FormatDuration(TimeMs ms) {
  if (ms < kSecondMs) return std::to_string(ms) + " ms";
  TimeMs s = (ms + kSecondMs - 1) / kSecondMs;  // round up: never promise too early
  if (s < 60) return std::to_string(s) + " s";
  if (s < 3600) {
    std::string out = std::to_string(s / 60) + " min";
    return s % 60 ? out + " " + std::to_string(s % 60) + " s" : out;
  }
  std::string out = std::to_string(s / 3600) + " h";
  return (s % 3600) / 60 ? out + " " + std::to_string((s % 3600) / 60) + " min" : out;
}

std::string DescribeSlot(const WorkRequest& request) {
  std::vector<std::string> parts;
  if (request.gpus_per_node > 0) parts.push_back(CountOf(request.gpus_per_node, "GPU"));
  if (request.gpu_memory_per_node > 0) {
    parts.push_back(FormatMemory(request.gpu_memory_per_node) + " of one GPU's memory");
  }
  if (request.cpus_per_node > 0) parts.push_back(CountOf(request.cpus_per_node, "CPU"));
  if (request.memory_per_node > 0)
    parts.push_back(FormatMemory(request.memory_per_node) + " memory");
  if (parts.empty()) return "no resources";
  std::string out = parts[0];
  for (size_t i = 1; i < parts.size(); ++i)
    out += (i + 1 == parts.size() ? " and " : ", ") + parts[i];
  return out;
}

bool HasConstraints(const WorkRequest& request) {
  return !request.node_selector.empty() || request.capacity != CapacityType::kAny;
}

std::string DescribeNodes(const WorkRequest& request, bool plural) {
  std::string out;
  if (request.capacity != CapacityType::kAny)
    out = CapacityTypeName(request.capacity) + std::string(" ");
  out += plural ? "nodes" : "node";
  std::string sep = " labelled ";
  for (const auto& [key, value] : request.node_selector) {
    out += sep + key + "=" + value;
    sep = ", ";
  }
  return out;
}

const char* CapacityTypeName(CapacityType capacity) {
  switch (capacity) {
    case CapacityType::kSpot:
      return "spot";
    case CapacityType::kOnDemand:
      return "on-demand";
    case CapacityType::kAny:
      return "any";
  }
  return "unknown";
}

}  // namespace tf::fleet
