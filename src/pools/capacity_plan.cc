#include "pools/capacity_plan.h"

#include <algorithm>
#include <set>
#include <tuple>

#include "jobs/spec_rules.h"

namespace tf::pools {
namespace {

// Ids of nodes that exist only in the plan: "pool/starting-0", "pool/new-1".
constexpr char kVirtualSeparator = '/';

std::string PoolOfVirtual(const std::string& node_id) {
  size_t at = node_id.find(kVirtualSeparator);
  return at == std::string::npos ? "" : node_id.substr(0, at);
}

bool Before(const fleet::WorkRequest& a, const fleet::WorkRequest& b) {
  return std::tuple(-a.priority, a.queued_at, a.job_id) <
         std::tuple(-b.priority, b.queued_at, b.job_id);
}

// Whether every request of `work` is placed on `nodes` at once.
bool AllFit(const std::vector<fleet::NodeState>& nodes,
            const std::vector<fleet::WorkRequest>& work) {
  return fleet::Schedule(nodes, work, 0).waiting.empty();
}

// The pools to try for `request`, best first: those of the capacity it allows, spot first when
// it prefers spot, then cheaper, then by name.
std::vector<const PoolCapacity*> Preference(const std::vector<PoolCapacity>& pools,
                                            const fleet::WorkRequest& request) {
  std::vector<const PoolCapacity*> out;
  for (const PoolCapacity& p : pools) {
    bool spot = p.spec.machine.spot;
    if (request.capacity == fleet::CapacityType::kSpot && !spot) continue;
    if (request.capacity == fleet::CapacityType::kOnDemand && spot) continue;
    out.push_back(&p);
  }
  auto key = [&](const PoolCapacity* p) {
    bool spot_first = request.prefer_spot && p->spec.machine.spot;
    return std::tuple(!spot_first, p->spec.machine.price_per_hour, p->spec.name);
  };
  std::sort(out.begin(), out.end(),
            [&](const PoolCapacity* a, const PoolCapacity* b) { return key(a) < key(b); });
  return out;
}

std::string Nodes(int n) { return std::to_string(n) + (n == 1 ? " node" : " nodes"); }

}  // namespace

fleet::NodeState ShapeNode(const PoolSpec& pool, const std::string& id) {
  const MachineShape& m = pool.machine;
  fleet::NodeState n;
  n.id = id;
  for (int g = 0; g < m.gpus; ++g) n.free_gpus.push_back(g);
  n.total_gpus = m.gpus;
  n.gpu_memory.assign(m.gpus, m.gpu_memory_bytes);
  n.gpu_free_memory = n.gpu_memory;
  n.free_cpus = n.total_cpus = m.cpus;
  // A machine whose memory the pool does not state offers what it has: nothing is refused
  // for memory before it registers.
  n.free_memory_bytes = n.total_memory_bytes =
      m.memory_bytes > 0 ? m.memory_bytes : jobs::kMaxMemoryBytes;
  n.labels = m.labels;
  n.labels["pool"] = pool.name;
  if (!m.zone.empty()) n.labels["zone"] = m.zone;
  if (!m.placement_group.empty()) n.labels["placement_group"] = m.placement_group;
  n.spot = m.spot;
  n.price_per_hour = m.price_per_hour;
  return n;
}

CapacityPlan PlanCapacity(const std::vector<fleet::NodeState>& fleet,
                          const std::vector<PoolCapacity>& pools,
                          const std::vector<fleet::WorkRequest>& pending) {
  CapacityPlan plan;
  std::vector<fleet::NodeState> nodes = fleet;
  std::map<std::string, int> planned;  // pool -> machines to start
  std::map<std::string, std::vector<std::string>> planned_for;
  auto add = [&](const PoolCapacity& p, const std::string& kind, int count) {
    for (int i = 0; i < count; ++i) {
      nodes.push_back(ShapeNode(p.spec, p.spec.name + kVirtualSeparator + kind + "-" +
                                            std::to_string(planned[p.spec.name] + i)));
    }
  };
  for (const PoolCapacity& p : pools) {
    add(p, "starting", p.starting);
    int below_min = std::max(0, p.spec.min - p.machines);
    if (below_min > 0) {
      add(p, "new", below_min);
      planned[p.spec.name] += below_min;
    }
  }

  std::vector<fleet::WorkRequest> order = pending;
  for (fleet::WorkRequest& r : order) r.not_before = 0;  // backing off now, waiting soon
  std::sort(order.begin(), order.end(), Before);
  std::vector<fleet::WorkRequest> covered;   // fit with what is coming
  std::vector<fleet::WorkRequest> on_fleet;  // fit the registered nodes alone: no reason to give
  std::set<std::string> fits_now;
  for (const fleet::WorkRequest& request : order) {
    covered.push_back(request);
    on_fleet.push_back(request);
    if (AllFit(fleet, on_fleet)) {
      fits_now.insert(request.job_id);
    } else {
      on_fleet.pop_back();
    }
    if (AllFit(nodes, covered)) continue;
    bool found = false;
    for (const PoolCapacity* p : Preference(pools, request)) {
      int room = p->spec.max - p->machines - planned[p->spec.name];
      for (int k = 1; k <= std::min(room, request.nodes) && !found; ++k) {
        std::vector<fleet::NodeState> trial = nodes;
        for (int i = 0; i < k; ++i) {
          trial.push_back(ShapeNode(p->spec, p->spec.name + kVirtualSeparator + "new-" +
                                                 std::to_string(planned[p->spec.name] + i)));
        }
        if (!AllFit(trial, covered)) continue;
        nodes = std::move(trial);
        planned[p->spec.name] += k;
        planned_for[p->spec.name].push_back(request.job_id);
        found = true;
      }
      if (found) break;
    }
    if (!found) covered.pop_back();  // no pool helps: it waits as the scheduler says
  }

  for (const PoolCapacity& p : pools) {
    int n = planned[p.spec.name];
    if (n > 0) plan.launches.push_back({p.spec.name, n, planned_for[p.spec.name]});
  }
  // Why each covered request waits: the nodes of its placement that are still to come.
  fleet::ScheduleResult placed = fleet::Schedule(nodes, covered, 0);
  for (const fleet::Placement& placement : placed.placements) {
    if (fits_now.count(placement.job_id)) continue;
    std::map<std::string, int> coming;  // pool -> ranks on machines not registered yet
    for (const fleet::RankPlacement& rank : placement.ranks) {
      std::string pool = PoolOfVirtual(rank.node_id);
      if (!pool.empty()) ++coming[pool];
    }
    std::string reason;
    for (const auto& [pool, count] : coming) {
      reason += (reason.empty() ? "pool " : " and pool ") + pool + " is starting " + Nodes(count);
    }
    if (!reason.empty()) plan.reasons[placement.job_id] = reason + " for it";
  }
  return plan;
}

}  // namespace tf::pools
