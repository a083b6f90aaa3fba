#include "cost/metering/metering_service.h"

namespace tf::cost {
namespace {

// More jobs than this in one report is refused rather than cut short.
constexpr int kMaxJobs = 1'000'000;

Result<std::vector<store::JobRecord>> LoadJobs(store::Store& store, const std::string& project_id) {
  TF_ASSIGN_OR_RETURN(std::vector<store::JobRecord> jobs,
                      store.jobs().ListJobs(project_id, {}, kMaxJobs));
  if (jobs.size() >= static_cast<size_t>(kMaxJobs)) {
    return ResourceExhausted("metering reads at most " + std::to_string(kMaxJobs) +
                             " jobs at once; this store holds more");
  }
  return jobs;
}

}  // namespace

Result<Metering> MeterStore(store::Store& store, const std::string& project_id, TimeMs since,
                            TimeMs until, TimeMs now) {
  if (until < since) return InvalidArgument("until: is before since");
  TF_ASSIGN_OR_RETURN(std::vector<store::JobRecord> jobs, LoadJobs(store, project_id));
  std::vector<store::NodePeriod> periods;
  if (project_id.empty()) {
    TF_ASSIGN_OR_RETURN(periods, store.nodes().ListNodePeriods(since, until));
  }
  return Meter(jobs, periods, since, until, now);
}

Result<Metering> MeterJobs(store::Store& store, const std::string& project_id, TimeMs since,
                           TimeMs until, TimeMs now) {
  if (until < since) return InvalidArgument("until: is before since");
  TF_ASSIGN_OR_RETURN(std::vector<store::JobRecord> jobs, LoadJobs(store, project_id));
  return Meter(jobs, {}, since, until, now);
}

Result<double> ProjectSpend(store::Store& store, const std::string& project_id, TimeMs since,
                            TimeMs until, TimeMs now) {
  TF_ASSIGN_OR_RETURN(Metering m, MeterJobs(store, project_id, since, until, now));
  double spend = 0;
  for (const UsageLine& u : m.usage) spend += u.cost;
  return spend;
}

}  // namespace tf::cost
