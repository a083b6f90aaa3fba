// Node pools as the API changes them: create from YAML, list, get, scale, delete. Pools are
// the fleet's, so only admins reach these (api/pool_routes.cc). What the controller does with
// them is pool_controller.h.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "fleet/scheduler.h"
#include "pools/pool_spec.h"
#include "store/store.h"

namespace tf::pools {

struct PoolView {
  store::PoolRecord record;
  PoolSpec spec;
  nlohmann::json status;  // {"machines": [...], "decisions": [...]}, or {} before the first tick
};

class PoolService {
 public:
  PoolService(store::Store& store, const Clock& clock) : store_(store), clock_(clock) {}

  // kInvalidArgument for a bad spec (with its line); kAlreadyExists.
  Result<PoolView> Create(const std::string& spec_yaml, const std::string& source);
  Result<PoolView> Get(const std::string& name);  // kNotFound
  Result<std::vector<PoolView>> List();
  // Changes the bounds given; kInvalidArgument for bounds out of range or max < min.
  Result<PoolView> Scale(const std::string& name, std::optional<int> min, std::optional<int> max);
  // Its machines stop at the controller's next tick.
  Status Delete(const std::string& name);
  // A pool as a server's config file declares it: created if there is none of its name, its
  // spec replaced if it differs (machines already started keep running; the controller plans
  // with the new spec), else unchanged. Returns "created", "updated" or "unchanged".
  Result<std::string> Declare(const std::string& spec_yaml, const std::string& source);

  // One node per machine each pool may start, as the scheduler would see them: what a job
  // may wait for (jobs::JobService::SetPotentialNodes). At most 64 per pool, as many as a gang
  // may have.
  std::vector<fleet::NodeState> PotentialNodes();

 private:
  store::Store& store_;
  const Clock& clock_;
};

// The pool as `pool describe` shows it: its spec (a command pool's env values hidden), its
// machines and the controller's decisions.
nlohmann::json PoolViewToJson(const PoolView& view);

}  // namespace tf::pools
