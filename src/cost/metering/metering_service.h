// Metering over the store: loads job records and node periods and runs the pure core
// (cost/metering.h). Blocking; call from a blocking pool. Thread-safe as the store is.
#pragma once

#include <string>

#include "base/clock.h"
#include "base/status.h"
#include "cost/metering/metering.h"
#include "store/store.h"

namespace tf::cost {

// Meters the jobs of `project_id` ("" = every project) over [since, until) as seen at `now`.
// Idle capacity is included only for every project (project_id ""): it belongs to none.
// kInvalidArgument if until < since; the store's errors otherwise.
Result<Metering> MeterStore(store::Store& store, const std::string& project_id, TimeMs since,
                            TimeMs until, TimeMs now);

// As MeterStore without idle capacity (no node periods read): the ranks of `project_id`
// ("" = every project) only.
Result<Metering> MeterJobs(store::Store& store, const std::string& project_id, TimeMs since,
                           TimeMs until, TimeMs now);

// What the project's ranks cost over [since, until) as seen at `now`, in dollars (idle capacity
// not included; ranks still running counted until now). For budgets.
Result<double> ProjectSpend(store::Store& store, const std::string& project_id, TimeMs since,
                            TimeMs until, TimeMs now);

}  // namespace tf::cost
