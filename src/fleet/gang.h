// Choosing the nodes of a gang: N distinct nodes or none, kept together in one placement group
// or one zone when the fleet allows it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "fleet/scheduler.h"

namespace tf::fleet {

// Where each node sits, as small numbers that sort like the names they stand for, so that a
// pass compares integers rather than labels.
struct Topology {
  std::vector<int> zone;   // per node; nodes without a "zone" label share one unnamed zone
  std::vector<int> group;  // per node: its (zone, "placement_group") pair; -1 for none
  int zones = 0;
  int groups = 0;

  static Topology Of(const std::vector<NodeState>& nodes);
};

// A node that could hold one slot, with what would be left on it. Callers pass candidates
// sorted best first (their own best-fit order); the chooser never reorders nodes of one group.
struct Candidate {
  size_t node = 0;           // index into the node list
  bool unpreferred = false;  // on-demand, for a request that prefers spot
  int64_t spare_gpus = 0;    // left on the node after the slot (best fit: least)
  int64_t spare_cpus = 0;
  double price = 0;
};

// Chooses `count` distinct nodes out of `candidates` for one gang and returns their indices in
// rank order, or nothing when no choice keeps the rules:
//   1. all in one placement group, if any group has `count` candidates;
//   2. else all in one zone, if any zone has;
//   3. else, if allow_zone_split, across as few zones as possible (zones with the most
//      candidates first, then by name).
// Within a group or zone the first `count` candidates are taken. Among groups (or zones) that
// can hold the gang, the one wins whose chosen nodes are the fewest unpreferred (on-demand,
// for a gang that prefers spot), then the one whose chosen nodes leave the fewest GPUs spare,
// then the one
// with the fewest candidates to spare (so a larger group stays whole for a larger gang), then
// the fewest CPUs spare, then the cheaper, then the smaller name.
std::vector<size_t> ChooseGang(const Topology& topology, const std::vector<Candidate>& candidates,
                               int count, bool allow_zone_split);

// The largest number of candidates in any one zone.
int MostInOneZone(const Topology& topology, const std::vector<Candidate>& candidates);

}  // namespace tf::fleet
