// The pool autoscaler, run by the leader (api/app.cc): each Tick reads the pools, the fleet and
// the work that waits, starts machines where the capacity plan (capacity_plan.h) says so, stops
// machines whose node has been empty (ready or drained) for the pool's idle_timeout (never
// below min), deletes
// machines that stopped by themselves or never registered within start_timeout, and forgets
// the nodes of machines it deleted. What it did and why is kept in each pool's status (the
// last kKeptDecisions decisions), and why jobs wait goes to the job service
// (JobService::SetCapacityNotes).
//
// Idle times and when each machine was asked for are kept in memory: a new leader starts
// counting them afresh.
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "auth/auth_service.h"
#include "base/clock.h"
#include "base/mutex.h"
#include "jobs/job_service.h"
#include "pools/capacity_plan.h"
#include "pools/machine_provider.h"
#include "store/store.h"

namespace tf::pools {

using ProviderFactory = std::function<std::unique_ptr<MachineProvider>(const PoolSpec& spec)>;

struct PoolDecision {
  TimeMs at = 0;
  std::string what;  // "started gpu-3f9c1a, gpu-77ab02"
  std::string why;   // "for job_1 (2 nodes)"
};

class PoolController {
 public:
  static constexpr size_t kKeptDecisions = 20;

  // `auth` issues each machine's join token.
  PoolController(store::Store& store, jobs::JobService& jobs, auth::AuthService& auth,
                 const Clock& clock, ProviderFactory factory)
      : store_(store), jobs_(jobs), auth_(auth), clock_(clock), factory_(std::move(factory)) {}

  // Call from one thread only, which must outlive the local provider's processes.
  Status Tick();
  // Stops every machine this controller started (at shutdown, or on losing the lead).
  void StopAll();

 private:
  struct PoolState {
    std::unique_ptr<MachineProvider> provider;
    std::deque<PoolDecision> decisions;
    nlohmann::json machines = nlohmann::json::array();  // as `pool describe` shows them
    std::string last_status;  // what was last written, to write only changes
  };

  // Reads the pool's machines, deletes the ones that stopped, never registered or idled out,
  // and returns what is left for the plan.
  PoolCapacity Observe(const PoolSpec& spec, PoolState& state, const jobs::CapacityView& view,
                       TimeMs now);
  void Launch(const PoolSpec& spec, PoolState& state, const struct Launch& launch, TimeMs now);
  void DeleteMachine(PoolState& state, const std::string& id, const std::string& why);
  // When machine `id` of `pool` was asked for: as this controller remembers it, or, for one a
  // previous leader started, when its join token was made; `now` if neither knows.
  TimeMs AskedAt(const std::string& pool, const std::string& id, TimeMs now);
  void ForgetDeletedNodes(const jobs::CapacityView& view);
  void WriteStatus(const std::string& pool, PoolState& state);
  void Decide(PoolState& state, std::string what, std::string why);

  store::Store& store_;
  jobs::JobService& jobs_;
  auth::AuthService& auth_;
  const Clock& clock_;
  ProviderFactory factory_;
  std::map<std::string, PoolState> pools_;
  std::map<std::string, TimeMs> asked_at_;    // machine id -> when Create was called
  std::map<std::string, TimeMs> idle_since_;  // node id -> first seen with nothing running
  std::set<std::string> backdated_;           // machines whose node's first period was backdated
  std::map<std::string, std::string> deleted_nodes_;  // node id -> its pool, until lost
  TimeMs pruned_join_tokens_at_ = 0;
};

}  // namespace tf::pools
