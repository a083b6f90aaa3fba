// The scheduler's pure core: (nodes, pending work, now) -> placements.
//
// Nothing here reads a clock, a store or the network: the caller passes the fleet as it is now
// and the requests waiting to run, and gets back where each one that can start now should
// start, and why each other one waits. The same input always gives the same output.
//
// How decisions are made (docs/scheduler.md has the whole story):
//   - Requests are taken in order: priority (higher first), then queued_at (older first), then
//     job_id. A request with not_before > now is skipped ("backing off").
//   - A node slot fits a node that is schedulable, carries every node_selector label with the
//     same value, is of the asked capacity type (spot or on-demand), and has the GPUs, CPUs and
//     memory free. A share of one GPU (gpu_memory_per_node) fits a GPU that is not given whole
//     and has that much memory left: the one with the least left that holds it. Among nodes that
//     fit, the one left with the fewest free GPUs wins (then the fewest free CPUs, then the
//     cheaper, then the smaller id), so whole machines stay free for big jobs; GPUs are taken
//     lowest index first.
//   - A gang of N nodes is placed whole or not at all: in one placement group if one can hold
//     it, else in one zone, and across zones only if the request allows it.
//   - Backfill: the first request that cannot start (the head) has nodes reserved for it, chosen
//     by total capacity as if they were drained; later requests may still start, but never on
//     the part of a reserved node the head will need.
//   - Each placement consumes the node's resources for the rest of the call.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/status.h"

namespace tf::fleet {

// A node as the scheduler sees it right now.
struct NodeState {
  std::string id;
  std::vector<int> free_gpus;  // GPU indices not assigned to anything
  int total_gpus = 0;
  // Per GPU index: its memory, and what is left of it for shares (requests of
  // gpu_memory_per_node). A GPU in free_gpus has all of it left; one given whole has none left;
  // one holding shares is not in free_gpus. Empty (or 0) where the node did not say.
  std::vector<int64_t> gpu_memory;
  std::vector<int64_t> gpu_free_memory;
  int free_cpus = 0;
  int total_cpus = 0;
  int64_t free_memory_bytes = 0;
  int64_t total_memory_bytes = 0;
  // "zone", "placement_group", "interconnect" and user labels. Nodes with no "zone" label count
  // as one unnamed zone; nodes with no "placement_group" label belong to no group.
  std::map<std::string, std::string> labels;
  bool spot = false;          // the machine is spot/preemptible capacity
  bool schedulable = true;    // false: draining, lost or cordoned: place nothing new
  double price_per_hour = 0;  // tie-break: cheaper first among equal fits
};

enum class CapacityType { kAny, kSpot, kOnDemand };

// One pending job: a gang of `nodes` identical node slots.
struct WorkRequest {
  std::string job_id;
  int priority = 0;      // higher first
  TimeMs queued_at = 0;  // FIFO within a priority (then job_id for a total order)
  int nodes = 1;
  int gpus_per_node = 0;
  // A share of one GPU instead of whole ones (gpus_per_node 0): placed on the GPU whose free
  // memory fits it most tightly, so that small servers pack onto few GPUs.
  int64_t gpu_memory_per_node = 0;
  int cpus_per_node = 0;
  int64_t memory_per_node = 0;
  std::map<std::string, std::string> node_selector;  // every pair must equal the node's label
  CapacityType capacity = CapacityType::kAny;
  // With kAny: spot nodes first, on-demand ones when no spot node has room (a single-node
  // request; a gang's choice among groups and zones goes by its own rules).
  bool prefer_spot = false;
  bool allow_zone_split = false;  // may a multi-node gang span zones?
  TimeMs not_before = 0;          // retry backoff: not eligible before this time
};

struct RankPlacement {
  std::string node_id;
  std::vector<int> gpus;  // ascending
};

struct Placement {
  std::string job_id;
  std::vector<RankPlacement> ranks;  // ranks[0] is node rank 0
};

// Why a request did not start, in words for a person, e.g.
// "needs 8 GPUs on one node; the largest free is 4".
struct Waiting {
  std::string job_id;
  std::string reason;
};

// Both lists are in scheduling order. Every pending request appears in exactly one of them.
struct ScheduleResult {
  std::vector<Placement> placements;
  std::vector<Waiting> waiting;
};

// Places what can start now. `nodes` is taken by value: it is the scratch state that placements
// consume. Bad input never crashes: an invalid request (nodes < 1, negative resources, empty
// job_id) and a repeated job_id wait with a reason that says what is wrong.
ScheduleResult Schedule(std::vector<NodeState> nodes, const std::vector<WorkRequest>& pending,
                        TimeMs now);

// At submit: could this request ever run on this fleet (totals, labels, zones), ignoring what is
// in use? Nodes that are not schedulable still count (a drained node may come back). An empty
// fleet accepts everything, since workers may not have registered yet.
// Returns OK or kInvalidArgument naming the field, e.g.
// "resources.gpus: 16 GPUs per node requested; the largest node has 8".
Status CheckFeasible(const std::vector<NodeState>& nodes, const WorkRequest& request);

// "kAny" -> "any", "kSpot" -> "spot", "kOnDemand" -> "on-demand".
const char* CapacityTypeName(CapacityType capacity);

}  // namespace tf::fleet
