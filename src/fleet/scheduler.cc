#include "fleet/scheduler.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "fleet/fit.h"
#include "fleet/gang.h"
#include "fleet/waiting_reason.h"

namespace tf::fleet {
namespace {

constexpr size_t kNoNode = static_cast<size_t>(-1);

// What later requests may still take on a node reserved for the head request: its totals less
// the head's slot, less what was backfilled onto it since. Once everything else on the node
// finishes, the head's slot is free.
struct Room {
  bool limited = false;  // false: the node is not reserved
  int64_t gpus = 0;
  int64_t cpus = 0;
  int64_t memory = 0;
};

// Whether a share of one GPU would take a GPU that is free whole (rather than one that holds
// shares already).
bool ShareTakesWholeGpu(const NodeState& node, const WorkRequest& r) {
  if (r.gpu_memory_per_node == 0) return false;
  int g = GpuForShare(node, r);
  return g >= 0 && std::binary_search(node.free_gpus.begin(), node.free_gpus.end(), g);
}

bool RoomFits(const Room& room, const NodeState& node, const WorkRequest& r) {
  const int64_t gpus = r.gpus_per_node + (ShareTakesWholeGpu(node, r) ? 1 : 0);
  return !room.limited ||
         (room.gpus >= gpus && room.cpus >= r.cpus_per_node && room.memory >= r.memory_per_node);
}

// One call of Schedule: the nodes as placements leave them, and the one reservation.
class Pass {
 public:
  Pass(std::vector<NodeState> nodes, TimeMs now)
      : nodes_(std::move(nodes)), now_(now), room_(nodes_.size()) {
    for (NodeState& node : nodes_) {
      // Lowest free index first, and never the same GPU twice.
      std::sort(node.free_gpus.begin(), node.free_gpus.end());
      node.free_gpus.erase(std::unique(node.free_gpus.begin(), node.free_gpus.end()),
                           node.free_gpus.end());
    }
    topology_ = Topology::Of(nodes_);
    // Ties between equal fits go to the smaller id: rank the ids once, compare numbers after.
    std::vector<size_t> by_id(nodes_.size());
    for (size_t i = 0; i < by_id.size(); ++i) by_id[i] = i;
    std::stable_sort(by_id.begin(), by_id.end(),
                     [&](size_t a, size_t b) { return nodes_[a].id < nodes_[b].id; });
    id_rank_.resize(nodes_.size());
    for (size_t rank = 0; rank < by_id.size(); ++rank) id_rank_[by_id[rank]] = rank;
  }

  void Consider(const WorkRequest& r) {
    if (!seen_.insert(r.job_id).second) {
      return Wait(r, "duplicate job_id: an earlier request in this pass has the same id");
    }
    if (Status valid = ValidateRequest(r); !valid.ok()) {
      return Wait(r, "invalid request: " + valid.message());
    }
    if (r.not_before > now_) {
      return Wait(r, "backing off: eligible again in " + FormatDuration(r.not_before - now_));
    }
    const std::vector<size_t>& admitted = Admitted(r);
    bool fits_unreserved = false;  // would it start if nothing were reserved?
    if (r.nodes == 1) {
      size_t best = BestFreeNode(r, admitted, &fits_unreserved);
      if (best != kNoNode) return Place(r, {best});
    } else {
      std::vector<size_t> chosen =
          ChooseGang(topology_, FreeCandidates(r, admitted, true), r.nodes, r.allow_zone_split);
      if (!chosen.empty()) return Place(r, chosen);
      fits_unreserved = head_.empty() ? false
                                      : !ChooseGang(topology_, FreeCandidates(r, admitted, false),
                                                    r.nodes, r.allow_zone_split)
                                             .empty();
    }

    // It waits. Why, and whether it becomes the head that nodes are reserved for.
    if (!FitsWhenDrained(r, admitted)) return Wait(r, NeverFitsReason(nodes_, r));
    if (head_.empty()) {
      std::vector<size_t> reserve =
          ChooseGang(topology_, DrainedCandidates(r, admitted), r.nodes, r.allow_zone_split);
      if (reserve.empty()) return Wait(r, NeverFitsReason(nodes_, r));  // not reached
      Reserve(r, reserve);
      return Wait(r, BlockedReason(nodes_, topology_, admitted, r) + "; " +
                         ReservedReason(nodes_, reserve));
    }
    if (fits_unreserved) return Wait(r, HeldBackReason(head_));
    Wait(r, BlockedReason(nodes_, topology_, admitted, r));
  }

  ScheduleResult Take() { return std::move(result_); }

 private:
  // The nodes a request may use at all (Admits), computed once per selector and capacity type.
  const std::vector<size_t>& Admitted(const WorkRequest& r) {
    auto [it, added] = admitted_.try_emplace({r.capacity, r.node_selector});
    if (added) {
      for (size_t i = 0; i < nodes_.size(); ++i) {
        if (Admits(nodes_[i], r)) it->second.push_back(i);
      }
    }
    return it->second;
  }

  // Best fit: a spot node first if the request prefers one, then the fewest GPUs left, then the
  // fewest CPUs, then the cheaper, then the smaller id.
  auto FreeKey(size_t i, const WorkRequest& r) const {
    const NodeState& n = nodes_[i];
    return std::make_tuple(r.prefer_spot && !n.spot, n.free_gpus.size(), n.free_cpus,
                           n.price_per_hour, id_rank_[i]);
  }

  // The best node with one slot free now outside any reservation, or kNoNode. Sets
  // *fits_unreserved when some node has the slot free, reserved or not.
  size_t BestFreeNode(const WorkRequest& r, const std::vector<size_t>& admitted,
                      bool* fits_unreserved) const {
    size_t best = kNoNode;
    for (size_t i : admitted) {
      if (!HasFree(nodes_[i], r)) continue;
      *fits_unreserved = true;
      if (!RoomFits(room_[i], nodes_[i], r)) continue;
      if (best == kNoNode || FreeKey(i, r) < FreeKey(best, r)) best = i;
    }
    return best;
  }

  // Nodes with one slot free now, best fit first. With `honour_reservation`, a reserved node
  // counts only while the slot fits in its room.
  std::vector<Candidate> FreeCandidates(const WorkRequest& r, const std::vector<size_t>& admitted,
                                        bool honour_reservation) const {
    std::vector<Candidate> out;
    for (size_t i : admitted) {
      const NodeState& node = nodes_[i];
      if (!HasFree(node, r) || (honour_reservation && !RoomFits(room_[i], node, r))) continue;
      out.push_back({.node = i,
                     .unpreferred = r.prefer_spot && !node.spot,
                     .spare_gpus = static_cast<int64_t>(node.free_gpus.size()) - r.gpus_per_node,
                     .spare_cpus = int64_t{node.free_cpus} - r.cpus_per_node,
                     .price = node.price_per_hour});
    }
    std::sort(out.begin(), out.end(), [&](const Candidate& a, const Candidate& b) {
      return FreeKey(a.node, r) < FreeKey(b.node, r);
    });
    return out;
  }

  // Nodes that could hold one slot once drained, for the head's reservation: the smallest
  // machines that fit first (best fit on totals), then the ones with the least in use (the
  // likeliest to drain first), then the cheaper, then the smaller id.
  std::vector<Candidate> DrainedCandidates(const WorkRequest& r,
                                           const std::vector<size_t>& admitted) const {
    std::vector<Candidate> out;
    for (size_t i : admitted) {
      const NodeState& node = nodes_[i];
      if (!HasTotal(node, r)) continue;
      out.push_back({.node = i,
                     .spare_gpus = int64_t{node.total_gpus} - r.gpus_per_node,
                     .spare_cpus = int64_t{node.total_cpus} - r.cpus_per_node,
                     .price = node.price_per_hour});
    }
    auto key = [&](const Candidate& c) {
      const NodeState& node = nodes_[c.node];
      int64_t used_gpus = node.total_gpus - static_cast<int64_t>(node.free_gpus.size());
      int64_t used_cpus = int64_t{node.total_cpus} - node.free_cpus;
      return std::make_tuple(c.spare_gpus, c.spare_cpus, used_gpus, used_cpus, c.price,
                             id_rank_[c.node]);
    };
    std::sort(out.begin(), out.end(),
              [&](const Candidate& a, const Candidate& b) { return key(a) < key(b); });
    return out;
  }

  // Whether some schedulable nodes could hold the request once drained: the same rule as
  // ChooseGang over DrainedCandidates, counted without choosing.
  bool FitsWhenDrained(const WorkRequest& r, const std::vector<size_t>& admitted) const {
    std::vector<int> per_zone(topology_.zones);
    int total = 0;
    for (size_t i : admitted) {
      if (!HasTotal(nodes_[i], r)) continue;
      ++total;
      if (++per_zone[topology_.zone[i]] >= r.nodes) return true;
    }
    return r.allow_zone_split && total >= r.nodes;
  }

  void Place(const WorkRequest& r, const std::vector<size_t>& chosen) {
    Placement placement;
    placement.job_id = r.job_id;
    for (size_t i : chosen) {
      NodeState& node = nodes_[i];
      RankPlacement rank;
      rank.node_id = node.id;
      const bool whole_gpu_shared = ShareTakesWholeGpu(node, r);
      if (r.gpu_memory_per_node > 0) {
        int g = GpuForShare(node, r);
        rank.gpus = {g};
        node.gpu_free_memory[g] -= r.gpu_memory_per_node;
        std::erase(node.free_gpus, g);  // no longer free whole
      } else {
        rank.gpus.assign(node.free_gpus.begin(), node.free_gpus.begin() + r.gpus_per_node);
        node.free_gpus.erase(node.free_gpus.begin(), node.free_gpus.begin() + r.gpus_per_node);
        for (int g : rank.gpus) {
          if (g >= 0 && static_cast<size_t>(g) < node.gpu_free_memory.size()) {
            node.gpu_free_memory[g] = 0;  // given whole: no room for shares
          }
        }
      }
      node.free_cpus -= r.cpus_per_node;
      node.free_memory_bytes -= r.memory_per_node;
      if (room_[i].limited) {
        room_[i].gpus -= r.gpus_per_node + (whole_gpu_shared ? 1 : 0);
        room_[i].cpus -= r.cpus_per_node;
        room_[i].memory -= r.memory_per_node;
      }
      placement.ranks.push_back(std::move(rank));
    }
    result_.placements.push_back(std::move(placement));
  }

  void Reserve(const WorkRequest& r, const std::vector<size_t>& chosen) {
    head_ = r.job_id;
    for (size_t i : chosen) {
      const NodeState& node = nodes_[i];
      room_[i] = {true, int64_t{node.total_gpus} - r.gpus_per_node,
                  int64_t{node.total_cpus} - r.cpus_per_node,
                  node.total_memory_bytes - r.memory_per_node};
    }
  }

  void Wait(const WorkRequest& r, std::string reason) {
    result_.waiting.push_back({r.job_id, std::move(reason)});
  }

  std::vector<NodeState> nodes_;
  TimeMs now_;
  Topology topology_;
  std::vector<size_t> id_rank_;  // per node: its place in id order
  std::vector<Room> room_;       // per node
  std::map<std::pair<CapacityType, std::map<std::string, std::string>>, std::vector<size_t>>
      admitted_;
  std::string head_;  // the request nodes are reserved for; empty until one is blocked
  std::set<std::string> seen_;
  ScheduleResult result_;
};

}  // namespace

ScheduleResult Schedule(std::vector<NodeState> nodes, const std::vector<WorkRequest>& pending,
                        TimeMs now) {
  std::vector<const WorkRequest*> order(pending.size());
  std::transform(pending.begin(), pending.end(), order.begin(),
                 [](const WorkRequest& r) { return &r; });
  std::stable_sort(order.begin(), order.end(), [](const WorkRequest* a, const WorkRequest* b) {
    return std::tie(b->priority, a->queued_at, a->job_id) <
           std::tie(a->priority, b->queued_at, b->job_id);
  });
  Pass pass(std::move(nodes), now);
  for (const WorkRequest* r : order) pass.Consider(*r);
  return pass.Take();
}

}  // namespace tf::fleet
