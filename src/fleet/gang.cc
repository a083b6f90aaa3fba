#include "fleet/gang.h"

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <utility>

namespace tf::fleet {
namespace {

const std::string kNone;

const std::string& LabelOr(const NodeState& node, const char* name) {
  auto it = node.labels.find(name);
  return it == node.labels.end() ? kNone : it->second;
}

// Numbers names in sorted order: the first name gets 0.
template <typename Key>
int Number(std::map<Key, int>& names) {
  int next = 0;
  for (auto& [name, number] : names) number = next++;
  return next;
}

using Bucket = std::vector<const Candidate*>;

// The best bucket that can hold `count`, or nullptr. Buckets are numbered in name order, so the
// first of equal scores has the smaller name.
const Bucket* BestBucket(const std::vector<Bucket>& buckets, size_t count) {
  const Bucket* best = nullptr;
  std::tuple<int, int64_t, size_t, int64_t, double> best_score;
  for (const Bucket& members : buckets) {
    if (members.size() < count) continue;
    int unpreferred = 0;
    int64_t gpus = 0, cpus = 0;
    double price = 0;
    for (size_t i = 0; i < count; ++i) {
      unpreferred += members[i]->unpreferred ? 1 : 0;
      gpus += members[i]->spare_gpus;
      cpus += members[i]->spare_cpus;
      price += members[i]->price;
    }
    auto score = std::make_tuple(unpreferred, gpus, members.size() - count, cpus, price);
    if (best == nullptr || score < best_score) {
      best = &members;
      best_score = score;
    }
  }
  return best;
}

std::vector<size_t> FirstOf(const Bucket& members, size_t count) {
  std::vector<size_t> out;
  out.reserve(count);
  for (size_t i = 0; i < count; ++i) out.push_back(members[i]->node);
  return out;
}

}  // namespace

Topology Topology::Of(const std::vector<NodeState>& nodes) {
  std::map<std::string, int> zones;
  std::map<std::pair<std::string, std::string>, int> groups;
  for (const NodeState& node : nodes) {
    zones[LabelOr(node, "zone")];
    const std::string& group = LabelOr(node, "placement_group");
    // A placement group lives in one zone; keying by both keeps a mislabelled fleet honest.
    if (!group.empty()) groups[{LabelOr(node, "zone"), group}];
  }
  Topology t;
  t.zones = Number(zones);
  t.groups = Number(groups);
  for (const NodeState& node : nodes) {
    const std::string& zone = LabelOr(node, "zone");
    const std::string& group = LabelOr(node, "placement_group");
    t.zone.push_back(zones.at(zone));
    t.group.push_back(group.empty() ? -1 : groups.at({zone, group}));
  }
  return t;
}

std::vector<size_t> ChooseGang(const Topology& topology, const std::vector<Candidate>& candidates,
                               int count, bool allow_zone_split) {
  if (count < 1 || candidates.size() < static_cast<size_t>(count)) return {};
  size_t n = static_cast<size_t>(count);
  if (n == 1) return {candidates.front().node};

  std::vector<Bucket> groups(topology.groups), zones(topology.zones);
  for (const Candidate& c : candidates) {
    if (int g = topology.group[c.node]; g >= 0) groups[g].push_back(&c);
    zones[topology.zone[c.node]].push_back(&c);
  }
  if (const Bucket* best = BestBucket(groups, n)) return FirstOf(*best, n);
  if (const Bucket* best = BestBucket(zones, n)) return FirstOf(*best, n);
  if (!allow_zone_split) return {};

  // Fewest zones: take whole zones, largest first (then by name), best nodes first in each.
  std::vector<const Bucket*> order;
  for (const Bucket& members : zones) order.push_back(&members);
  std::stable_sort(order.begin(), order.end(),
                   [](const Bucket* a, const Bucket* b) { return a->size() > b->size(); });
  std::vector<size_t> out;
  for (const Bucket* members : order) {
    for (const Candidate* c : *members) {
      out.push_back(c->node);
      if (out.size() == n) return out;
    }
  }
  return {};  // not reached: there are at least n candidates
}

int MostInOneZone(const Topology& topology, const std::vector<Candidate>& candidates) {
  std::vector<int> per_zone(topology.zones);
  int most = 0;
  for (const Candidate& c : candidates) most = std::max(most, ++per_zone[topology.zone[c.node]]);
  return most;
}

}  // namespace tf::fleet
