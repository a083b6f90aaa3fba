#include "sweeps/job_trial_runner.h"

#include <algorithm>
#include <set>

#include "cost/metering/metering_service.h"
#include "jobs/job_doc.h"

namespace tf::sweeps {
namespace {

// Enough for a trial's whole metric stream at one report per step (the store keeps the
// latest points when there are more).
constexpr int kMetricPointsRead = 200'000;
constexpr int kJobsSearched = 10'000;

class JobTrialRunner final : public TrialRunner {
 public:
  JobTrialRunner(jobs::JobService& jobs, store::Store& store, const Clock& clock)
      : jobs_(jobs), store_(store), clock_(clock) {}

  Result<std::string> Start(const std::string& project_id, const jobs::JobSpec& spec,
                            const std::string& code_key, const std::string& checkpoint_of,
                            const std::vector<std::string>& known) override {
    // A submission whose record was lost (the next tick comes within seconds, while its job
    // is still active): a job of the trial's name not yet known.
    TF_ASSIGN_OR_RETURN(auto existing, jobs_.List(project_id, false, kJobsSearched));
    for (const jobs::Job& job : existing) {
      if (job.record.name == spec.name &&
          std::find(known.begin(), known.end(), job.id()) == known.end()) {
        return job.id();
      }
    }
    jobs::SubmitOptions options;
    options.checkpoint_of = checkpoint_of;
    TF_ASSIGN_OR_RETURN(
        jobs::Job job,
        jobs_.SubmitSpec(project_id, spec, "sweep trial " + spec.name, code_key, options));
    return job.id();
  }

  Result<TrialJobView> Inspect(const std::string& project_id, const std::string& job_id) override {
    TF_ASSIGN_OR_RETURN(jobs::Job job, jobs_.Get(project_id, job_id));
    return TrialJobView{jobs::IsTerminalJobState(job.state()), job.state(), job.doc.reason};
  }

  Result<std::vector<store::MetricPoint>> Metrics(const std::string& project_id,
                                                  const std::string& job_id,
                                                  const std::string& name) override {
    TF_ASSIGN_OR_RETURN(auto points, jobs_.Metrics(project_id, job_id, kMetricPointsRead));
    std::erase_if(points, [&](const store::MetricPoint& p) { return p.name != name; });
    return points;
  }

  Status Stop(const std::string& project_id, const std::string& job_id,
              const std::string& reason) override {
    auto job = jobs_.Cancel(project_id, job_id, reason);
    // A job that ended meanwhile needs no stopping.
    if (!job.ok() && job.status().code() != StatusCode::kFailedPrecondition) return job.status();
    return OkStatus();
  }

  Result<std::map<std::string, double>> Costs(const std::string& project_id,
                                              const std::vector<std::string>& job_ids,
                                              TimeMs since) override {
    const TimeMs now = clock_.Now();
    TF_ASSIGN_OR_RETURN(cost::Metering metered,
                        cost::MeterJobs(store_, project_id, since, now, now));
    std::set<std::string> wanted(job_ids.begin(), job_ids.end());
    std::map<std::string, double> out;
    for (const cost::UsageLine& u : metered.usage) {
      if (wanted.contains(u.job_id)) out[u.job_id] += u.cost;
    }
    return out;
  }

 private:
  jobs::JobService& jobs_;
  store::Store& store_;
  const Clock& clock_;
};

}  // namespace

std::unique_ptr<TrialRunner> NewJobTrialRunner(jobs::JobService& jobs, store::Store& store,
                                               const Clock& clock) {
  return std::make_unique<JobTrialRunner>(jobs, store, clock);
}

}  // namespace tf::sweeps
