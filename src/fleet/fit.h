// Whether a node can hold one slot of a request, and the words the scheduler uses for slots,
// selectors and sizes in its reasons and errors.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"
#include "fleet/scheduler.h"

namespace tf::fleet {

constexpr int64_t kGiB = int64_t{1} << 30;

// Every selector pair equals the node's label of that name.
bool MatchesLabels(const NodeState& node, const WorkRequest& request);
// kSpot needs a spot node, kOnDemand an on-demand one, kAny either.
bool MatchesCapacity(const NodeState& node, CapacityType capacity);
// Schedulable, of the asked capacity type and carrying every selector label: what does not
// change while jobs come and go.
bool Admits(const NodeState& node, const WorkRequest& request);
// The node has one slot's GPUs, CPUs and memory free now.
bool HasFree(const NodeState& node, const WorkRequest& request);
// The node could hold one slot once empty.
bool HasTotal(const NodeState& node, const WorkRequest& request);
// The GPU of `node` that a share (request.gpu_memory_per_node > 0) goes to: the one with the
// least memory left that holds it, then the lowest index; -1 when none holds it.
int GpuForShare(const NodeState& node, const WorkRequest& request);
// The most memory left for shares on any one GPU of the node, and the most any one GPU has.
int64_t LargestGpuMemoryFree(const NodeState& node);
int64_t LargestGpuMemory(const NodeState& node);

// OK, or kInvalidArgument naming the field: an empty job_id, nodes < 1, negative resources, an
// empty selector label name.
Status ValidateRequest(const WorkRequest& request);

// "8 GPUs, 32 CPUs and 64 GiB memory"; parts that are zero are left out ("no resources" when
// all are).
std::string DescribeSlot(const WorkRequest& request);
// The nodes a request may use, in words: "node", "spot nodes", "on-demand node labelled
// gpu=h100, zone=us-east-1a".
std::string DescribeNodes(const WorkRequest& request, bool plural);
// Whether the request narrows the fleet at all (a selector or a capacity type).
bool HasConstraints(const WorkRequest& request);
// "1 GPU", "8 GPUs".
std::string CountOf(int64_t n, const char* noun);
// "64 GiB", "1.5 GiB", "512 MiB", "100 bytes".
std::string FormatMemory(int64_t bytes);
// "250 ms", "12 s", "5 min 3 s", "2 h 5 min".
std::string FormatDuration(TimeMs ms);

}  // namespace tf::fleet
