// The sweep controller: run by the leading server with the job controller, it carries each
// running sweep on (docs/sweeps.md, "How a sweep runs"). For each sweep, each tick:
//   1. Looks at every running trial's job: the objective's values by step (its metric stream,
//      every job of the trial merged), and its end: succeeded -> complete; stopped by the sweep
//      -> paused or stopped, as the reason the sweep gave says; otherwise failed (after the
//      job's own retries).
//   2. Early stopping (early_stopping.h): a running trial that reaches a rung (asha) or falls
//      behind the median is stopped; asha pauses it, keeping its checkpoint.
//   3. Costs: what each trial's jobs cost so far (metering); the sweep's spend.
//   4. asha's promotions first, then new trials from the strategy, while fewer than
//      max_parallel run, the sweep has trials left and its spend is under the budget.
//   5. Ends the sweep when nothing runs and nothing more may start, or fails it when the first
//      trials ended without ever reporting the objective's metric.
// Every decision is a pure function of the stored trials, so a controller restarted (kill -9)
// carries on as it would have. A new trial is written to the document before its job is
// submitted, and its job found again by its name if that write was lost, so that no trial runs
// twice and no job runs without its trial.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "jobs/job_spec.h"
#include "store/records.h"
#include "store/store.h"
#include "sweeps/sweep_doc.h"

namespace tf::sweeps {

// What the controller sees of a trial's job.
struct TrialJobView {
  bool ended = false;
  std::string state;   // the job's state
  std::string reason;  // why it is in it
};

// The jobs that run trials (NewJobTrialRunner: the job service and metering).
class TrialRunner {
 public:
  virtual ~TrialRunner() = default;
  // Submits the trial's job (restoring `checkpoint_of`'s checkpoints when not ""), or returns
  // the job of that name already submitted and not among `known`: a submission whose record
  // was lost.
  virtual Result<std::string> Start(const std::string& project_id, const jobs::JobSpec& spec,
                                    const std::string& code_key, const std::string& checkpoint_of,
                                    const std::vector<std::string>& known) = 0;
  virtual Result<TrialJobView> Inspect(const std::string& project_id,
                                       const std::string& job_id) = 0;
  // The job's points of metric `name`, in the order reported.
  virtual Result<std::vector<store::MetricPoint>> Metrics(const std::string& project_id,
                                                          const std::string& job_id,
                                                          const std::string& name) = 0;
  virtual Status Stop(const std::string& project_id, const std::string& job_id,
                      const std::string& reason) = 0;
  // What each of `job_ids` cost from `since` until now, in dollars (absent: nothing yet).
  virtual Result<std::map<std::string, double>> Costs(const std::string& project_id,
                                                      const std::vector<std::string>& job_ids,
                                                      TimeMs since) = 0;
};

// The reasons a sweep gives when it stops a trial's job; read back from the job after a lost
// write, they say what became of the trial.
inline constexpr std::string_view kPausedBy = "sweep paused it: ";
inline constexpr std::string_view kStoppedBy = "sweep stopped it: ";

// How many ended trials without one report of the objective's metric fail the sweep.
inline constexpr int kTrialsBeforeMetricCheck = 3;

class SweepController {
 public:
  SweepController(store::DocumentStore& documents, TrialRunner& runner, const Clock& clock)
      : documents_(documents), runner_(runner), clock_(clock) {}

  // One pass over every running or stopping sweep. A failure with one sweep is logged and the
  // others go on; the first is returned.
  Status Tick();

 private:
  Status TickSweep(const store::DocumentRecord& record);

  store::DocumentStore& documents_;
  TrialRunner& runner_;
  const Clock& clock_;
};

}  // namespace tf::sweeps
