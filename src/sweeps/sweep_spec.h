// A sweep's spec (docs/sweeps.md): the job template whose hyperparameters it sets, the search
// space, the objective, the strategy and its limits, and early stopping. Read from YAML, every
// error naming the file, line and field:
//
//   name: lr-search
//   job: train.yaml                  # a job spec file (relative to this one), or a mapping
//   parameters:
//     lr: {type: loguniform, low: 1e-5, high: 1e-2}
//   objective: {metric: val_loss, goal: minimize, value: last}
//   strategy: bayesian               # random (default), grid, bayesian, hyperband
//   seed: 1
//   max_trials: 32
//   max_parallel: 2
//   budget: 20                       # dollars of metered spend, then no new trial
//   early_stopping: {type: asha, resource: step, min_resource: 3, max_resource: 81}
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "jobs/job_spec.h"
#include "sweeps/early_stopping.h"
#include "sweeps/search_space.h"
#include "sweeps/strategy.h"

namespace tf::sweeps {

struct Objective {
  std::string metric;  // a metric the trial's job reports (its metric stream, as describe shows)
  Goal goal = Goal::kMinimize;
  bool best = false;  // value: best (the best the trial reported) rather than last
};

struct SweepSpec {
  std::string name;
  jobs::JobSpec job;  // the template; each trial is this job with the trial's hyperparameters
  SearchSpace space;
  Objective objective;
  std::string strategy = "random";
  uint64_t seed = 0;
  int max_trials = 0;  // grid: the grid's points when not given
  int max_parallel = 1;
  std::optional<double> budget;  // dollars
  std::optional<EarlyStopping> early_stopping;
};

inline constexpr int kMaxSweepTrials = 10000;
inline constexpr int kMaxSweepParallel = 256;

// Reads a sweep spec. `read_file` reads the job spec that `job: PATH` names (a path relative
// to the sweep file's folder is resolved by the caller's function). kInvalidArgument
// "<source>:<line>: <field>: <what>" for a missing or unknown field, a bad value, a strategy
// that does not exist, hyperband without early_stopping's resources, early_stopping with
// another strategy's needs (see docs/sweeps.md), a job template the job spec refuses (its
// errors are the template file's, or this file's lines under "job.").
Result<SweepSpec> ParseSweepSpec(
    std::string_view yaml, std::string_view source,
    const std::function<Result<std::string>(const std::string& path)>& read_file);

// The `early_stopping` of a file (with hyperband's brackets when its `strategy` is hyperband),
// read as ParseSweepSpec reads it; the file's other keys are not looked at.
Result<EarlyStopping> ParseEarlyStopping(std::string_view yaml, std::string_view source);

// The job of one trial: the template with `params` as hyperparameters (over the template's
// own of the same name), named "<sweep>-<trial>" (the sweep's name cut to fit).
Result<jobs::JobSpec> TrialJob(const SweepSpec& sweep, int trial, const nlohmann::json& params);

}  // namespace tf::sweeps
