// Helpers for the scheduler's table tests: fleets of nodes, requests, and what to read back from
// a ScheduleResult.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "fleet/scheduler.h"

namespace tf::testing {

using fleet::CapacityType;
using fleet::CheckFeasible;
using fleet::NodeState;
using fleet::Placement;
using fleet::Schedule;
using fleet::ScheduleResult;
using fleet::WorkRequest;

inline constexpr TimeMs kNow = 1'700'000'000'000;
inline constexpr int64_t kGiB = int64_t{1} << 30;

// An idle node: every GPU, CPU and byte free.
inline NodeState Node(std::string id, int gpus, int cpus = 64, int64_t memory_gib = 512,
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
inline NodeState Busy(NodeState n, int free_gpus) {
  n.free_gpus.resize(free_gpus);
  return n;
}

inline WorkRequest Job(std::string id, int gpus, int nodes = 1) {
  WorkRequest r;
  r.job_id = std::move(id);
  r.gpus_per_node = gpus;
  r.nodes = nodes;
  return r;
}

// job id -> the node ids of its ranks, in rank order.
inline std::map<std::string, std::vector<std::string>> NodesOf(const ScheduleResult& result) {
  std::map<std::string, std::vector<std::string>> out;
  for (const Placement& p : result.placements) {
    for (const auto& rank : p.ranks) out[p.job_id].push_back(rank.node_id);
  }
  return out;
}

inline std::string ReasonFor(const ScheduleResult& result, const std::string& job_id) {
  for (const auto& w : result.waiting) {
    if (w.job_id == job_id) return w.reason;
  }
  return "(not waiting)";
}

inline std::vector<std::string> PlacedOrder(const ScheduleResult& result) {
  std::vector<std::string> out;
  for (const Placement& p : result.placements) out.push_back(p.job_id);
  return out;
}

// A node in `zone`, in placement group `group` if given.
inline NodeState Zoned(std::string id, const std::string& zone, const std::string& group = "",
                       int gpus = 8) {
  std::map<std::string, std::string> labels = {{"zone", zone}};
  if (!group.empty()) labels["placement_group"] = group;
  return Node(std::move(id), gpus, 64, 512, labels);
}

}  // namespace tf::testing
