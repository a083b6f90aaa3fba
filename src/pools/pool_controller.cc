#include "pools/pool_controller.h"

#include <algorithm>
#include <set>

#include "base/crypto.h"
#include "base/log.h"
#include "jobs/quantities.h"

namespace tf::pools {
namespace {

std::string Joined(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

// The name of the join token a pool's machine starts with: it also records when the machine
// was asked for, for a leader that did not ask (AskedAt).
std::string JoinTokenName(const std::string& pool, const std::string& machine) {
  return "pool " + pool + ", machine " + machine;
}

const store::NodeRecord* NodeNamed(const jobs::CapacityView& view, const std::string& name) {
  for (const store::NodeRecord& r : view.records) {
    if (r.name == name) return &r;
  }
  return nullptr;
}

}  // namespace

void PoolController::Decide(PoolState& state, std::string what, std::string why) {
  spdlog::info("pools: {} ({})", what, why);
  state.decisions.push_front({clock_.Now(), std::move(what), std::move(why)});
  if (state.decisions.size() > kKeptDecisions) state.decisions.pop_back();
}

void PoolController::DeleteMachine(PoolState& state, const std::string& id,
                                   const std::string& why) {
  Status deleted = state.provider->Delete(id);
  if (!deleted.ok()) {
    Decide(state, "could not stop " + id, deleted.ToString());
    return;
  }
  asked_at_.erase(id);
  backdated_.erase(id);
  Decide(state, "stopped " + id, why);
}

TimeMs PoolController::AskedAt(const std::string& pool, const std::string& id, TimeMs now) {
  if (auto known = asked_at_.find(id); known != asked_at_.end()) return known->second;
  TimeMs asked = now;
  if (auto tokens = auth_.ListJoinTokens(); tokens.ok()) {
    for (const store::JoinToken& t : *tokens) {
      if (t.name == JoinTokenName(pool, id)) asked = std::min(asked, t.created_at);
    }
  } else {
    spdlog::warn("pool {}: when {} was asked for: {}", pool, id, tokens.status().ToString());
  }
  asked_at_[id] = asked;
  return asked;
}

PoolCapacity PoolController::Observe(const PoolSpec& spec, PoolState& state,
                                     const jobs::CapacityView& view, TimeMs now) {
  PoolCapacity capacity{spec};
  state.machines = nlohmann::json::array();
  auto listed = state.provider->List();
  if (!listed.ok()) {
    Decide(state, "could not list machines", listed.status().ToString());
    capacity.machines = spec.max;  // start nothing while the provider cannot be read
    return capacity;
  }
  struct Idle {
    std::string machine;
    std::string node;
    TimeMs since;
  };
  std::vector<Idle> idle;
  for (const Machine& m : *listed) {
    const store::NodeRecord* node = NodeNamed(view, m.id);
    if (!m.running) {
      DeleteMachine(state, m.id, "it stopped by itself: " + m.detail);
      if (node != nullptr) deleted_nodes_[node->id] = spec.name;
      continue;
    }
    if (node != nullptr && node->state == "lost") {
      DeleteMachine(state, m.id, "its node stopped sending heartbeats");
      deleted_nodes_[node->id] = spec.name;
      continue;
    }
    if (node == nullptr) {
      TimeMs asked = AskedAt(spec.name, m.id, now);
      if (now - asked > spec.start_timeout_ms) {
        DeleteMachine(state, m.id,
                      "it did not register within " + jobs::FormatDuration(spec.start_timeout_ms));
        continue;
      }
      ++capacity.machines;
      ++capacity.starting;
      state.machines.push_back({{"id", m.id}, {"state", "starting"}, {"since", asked}});
      continue;
    }
    ++capacity.machines;
    if (node->epoch == 1 && backdated_.insert(m.id).second) {
      // Paid for from when it was asked for: its node's first period starts then, so that
      // metering counts the machine's boot as idle capacity. (A later registration of the node
      // is a period of its own, metered from then.)
      Status backdated =
          store_.nodes().BackdateNodePeriod(node->id, node->epoch, AskedAt(spec.name, m.id, now));
      if (!backdated.ok()) {
        spdlog::warn("pool {}: metering {}'s start: {}", spec.name, m.id, backdated.ToString());
      }
    }
    asked_at_.erase(m.id);
    if (view.busy.count(node->id)) {
      idle_since_.erase(node->id);
      state.machines.push_back({{"id", m.id}, {"node_id", node->id}, {"state", "busy"}});
      continue;
    }
    // Empty, whether ready or drained (a drained node takes no work until it is undrained).
    TimeMs since = idle_since_.try_emplace(node->id, now).first->second;
    state.machines.push_back({{"id", m.id},
                              {"node_id", node->id},
                              {"state", node->state == "ready" ? "idle" : "idle, " + node->state},
                              {"since", since}});
    idle.push_back({m.id, node->id, since});
  }

  // Idle nodes past their timeout stop, longest idle first, down to the pool's min.
  std::sort(idle.begin(), idle.end(),
            [](const Idle& a, const Idle& b) { return a.since < b.since; });
  for (const Idle& i : idle) {
    if (capacity.machines <= spec.min) break;
    if (now - i.since < spec.idle_timeout_ms) continue;
    std::string why = "idle for " + jobs::FormatDuration(spec.idle_timeout_ms);
    // Nothing new is placed on it from here; a rank placed since the fleet was read is
    // interrupted and retried elsewhere.
    Status drained = jobs_.Drain(i.node, 0, "pool " + spec.name + ": " + why);
    if (!drained.ok() && drained.code() != StatusCode::kNotFound &&
        drained.code() != StatusCode::kFailedPrecondition) {
      Decide(state, "could not drain " + i.machine, drained.ToString());
      continue;
    }
    DeleteMachine(state, i.machine, why);
    idle_since_.erase(i.node);
    // Forgotten now; or, if a rank reached it meanwhile, once it is lost.
    if (!jobs_.RetireNode(i.node).ok()) deleted_nodes_[i.node] = spec.name;
    --capacity.machines;
    nlohmann::json kept = nlohmann::json::array();
    for (const nlohmann::json& m : state.machines) {
      if (m["id"] != i.machine) kept.push_back(m);
    }
    state.machines = std::move(kept);
  }
  return capacity;
}

void PoolController::Launch(const PoolSpec& spec, PoolState& state, const struct Launch& launch,
                            TimeMs now) {
  std::vector<std::string> started;
  for (int i = 0; i < launch.machines; ++i) {
    std::string id = spec.name + "-" + RandomHex(3);
    // One registration, within the machine's start timeout: a token read from the machine
    // afterwards registers nothing.
    auto join = auth_.CreateJoinToken(JoinTokenName(spec.name, id),
                                      std::max(kMinuteMs, spec.start_timeout_ms + kMinuteMs), 1);
    if (!join.ok()) {
      Decide(state, "could not start a machine", "its join token: " + join.status().ToString());
      break;
    }
    Status created = state.provider->Create(spec, id, join->secret);
    if (!created.ok()) {
      (void)auth_.RevokeJoinToken(join->token.id);
      Decide(state, "could not start a machine", created.ToString());
      break;
    }
    asked_at_[id] = now;
    started.push_back(id);
    state.machines.push_back({{"id", id}, {"state", "starting"}, {"since", now}});
  }
  if (started.empty()) return;
  std::string why = launch.job_ids.empty() ? "the pool's min is " + std::to_string(spec.min)
                                           : "for " + Joined(launch.job_ids);
  Decide(state, "started " + Joined(started), why);
}

void PoolController::ForgetDeletedNodes(const jobs::CapacityView& view) {
  for (auto it = deleted_nodes_.begin(); it != deleted_nodes_.end();) {
    const store::NodeRecord* node = nullptr;
    for (const store::NodeRecord& r : view.records) {
      if (r.id == it->first) node = &r;
    }
    if (node == nullptr) {
      it = deleted_nodes_.erase(it);
      continue;
    }
    if (node->state != "lost") {
      ++it;
      continue;
    }
    Status removed = jobs_.RemoveNode(node->id);
    if (!removed.ok()) spdlog::warn("pools: forgetting node {}: {}", node->id, removed.ToString());
    it = deleted_nodes_.erase(it);
  }
}

void PoolController::WriteStatus(const std::string& pool, PoolState& state) {
  nlohmann::json decisions = nlohmann::json::array();
  for (const PoolDecision& d : state.decisions) {
    decisions.push_back({{"at", d.at}, {"what", d.what}, {"why", d.why}});
  }
  std::string status =
      nlohmann::json{{"machines", state.machines}, {"decisions", decisions}}.dump();
  if (status == state.last_status) return;
  Status written = store_.pools().SetPoolStatus(pool, status);
  if (written.ok()) {
    state.last_status = std::move(status);
  } else if (written.code() != StatusCode::kNotFound) {
    spdlog::warn("pools: writing the status of {}: {}", pool, written.ToString());
  }
}

Status PoolController::Tick() {
  const TimeMs now = clock_.Now();
  TF_ASSIGN_OR_RETURN(std::vector<store::PoolRecord> records, store_.pools().ListPools());
  TF_ASSIGN_OR_RETURN(jobs::CapacityView view, jobs_.Capacity());
  ForgetDeletedNodes(view);
  // The machines' join tokens, spent or expired, are forgotten a day after they expire (any
  // other expired join token too), once an hour.
  if (now - pruned_join_tokens_at_ >= kHourMs) {
    auto forgotten = auth_.ForgetExpiredJoinTokens();
    if (forgotten.ok()) {
      pruned_join_tokens_at_ = now;
      if (*forgotten > 0) spdlog::info("pools: forgot {} expired join tokens", *forgotten);
    } else {
      spdlog::warn("pools: forgetting expired join tokens: {}", forgotten.status().ToString());
    }
  }

  // Pools deleted since the last tick: their machines stop.
  std::set<std::string> names;
  for (const store::PoolRecord& r : records) names.insert(r.name);
  for (auto it = pools_.begin(); it != pools_.end();) {
    if (names.count(it->first)) {
      ++it;
      continue;
    }
    if (it->second.provider) {
      auto listed = it->second.provider->List();
      for (const Machine& m : listed.ok() ? *listed : std::vector<Machine>{}) {
        DeleteMachine(it->second, m.id, "its pool was deleted");
        if (const store::NodeRecord* node = NodeNamed(view, m.id)) {
          deleted_nodes_[node->id] = it->first;
        }
      }
    }
    it = pools_.erase(it);
  }

  std::vector<PoolSpec> specs;
  std::vector<PoolCapacity> capacity;
  for (const store::PoolRecord& r : records) {
    auto spec = PoolSpecFromJson(nlohmann::json::parse(r.spec_json, nullptr, false));
    if (!spec.ok()) {
      spdlog::warn("pools: {}: {}", r.name, spec.status().ToString());
      continue;
    }
    PoolState& state = pools_[spec->name];
    if (!state.provider) state.provider = factory_(*spec);
    capacity.push_back(Observe(*spec, state, view, now));
    specs.push_back(*std::move(spec));
  }

  CapacityPlan plan = PlanCapacity(view.nodes, capacity, view.pending);
  for (const struct Launch& launch : plan.launches) {
    auto spec = std::find_if(specs.begin(), specs.end(),
                             [&](const PoolSpec& s) { return s.name == launch.pool; });
    if (spec != specs.end()) Launch(*spec, pools_[launch.pool], launch, now);
  }
  jobs_.SetCapacityNotes(std::move(plan.reasons));
  for (const PoolSpec& spec : specs) WriteStatus(spec.name, pools_[spec.name]);
  return OkStatus();
}

void PoolController::StopAll() {
  for (auto& [name, state] : pools_) {
    if (!state.provider) continue;
    auto listed = state.provider->List();
    if (!listed.ok()) continue;
    for (const Machine& m : *listed) DeleteMachine(state, m.id, "the server is stopping");
  }
}

}  // namespace tf::pools
