// Early stopping: which running trials of a sweep to stop before their full budget, and which
// stopped ones to resume, from the objective values they report along the way (docs/sweeps.md).
// Pure functions of the rule and the trials' reports, so a sweep restarted from its stored
// reports judges as it would have.
//
//   asha    Asynchronous successive halving (Li et al. 2018). Rungs at min_resource * eta^k
//           below max_resource. A trial that reaches a rung goes on only if its value there is
//           among the best 1/eta of the values every trial of its bracket had there (the first
//           to arrive goes on if it is the best so far); otherwise it pauses, keeping its
//           checkpoint, and is promoted (resumed) later if enough worse values arrive after it.
//   median  The median stopping rule: from min_resource on, a trial whose best value so far is
//           worse than the median of the best values that the other trials had reached by the
//           same point stops for good (when at least min_trials others got that far). This is
//           Optuna's MedianPruner with best-so-far values, which smooth out noise; Vizier's
//           original held the trial against the others' running means, which on falling
//           curves almost never stops anything.
//
// Hyperband (Li et al. 2017) is asha over several brackets: bracket b's first rung is
// min_resource * eta^b, trials are dealt to brackets in Hyperband's proportions, and a trial
// is compared only with those of its bracket.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "sweeps/strategy.h"

namespace tf::sweeps {

enum class StopRule { kAsha, kMedian };

struct EarlyStopping {
  StopRule rule = StopRule::kAsha;
  std::string resource = "step";  // the metric stream's counter that measures a trial's budget
  double min_resource = 1;        // asha: the first rung; median: no stop before it
  double max_resource = 0;        // a trial's full budget
  double reduction_factor = 3;    // asha: eta, the rungs' ratio and 1/fraction that goes on
  int brackets = 1;               // asha: Hyperband's brackets (1: plain ASHA)
  int min_trials = 3;             // median: the others that must have reached the point
};

// "asha" or "median"; kInvalidArgument naming them.
Result<StopRule> ParseStopRule(std::string_view name);
std::string_view StopRuleName(StopRule rule);

// kInvalidArgument naming the field for min_resource <= 0, max_resource <= min_resource, a
// reduction factor below 2, brackets outside [1, HyperbandBrackets], min_trials below 1.
Status Validate(const EarlyStopping& rule);

// How many brackets Hyperband has for these resources: one per rung of plain ASHA.
int HyperbandBrackets(const EarlyStopping& rule);

// The rungs of a bracket: min_resource * eta^(bracket + k), each below max_resource.
std::vector<double> Rungs(const EarlyStopping& rule, int bracket);

// The bracket of the trial-th trial (0-based) of a sweep: Hyperband's shares (bracket b gets
// ceil(B / (s + 1) * eta^s) of every round, s = B - 1 - b its halvings) dealt out by a smooth
// weighted round robin, so that a short sweep also spreads over the brackets. 0 with one.
int BracketOf(const EarlyStopping& rule, size_t trial);

// One value of the objective, reported at an amount of the resource.
struct Report {
  double resource = 0;
  double value = 0;
};

enum class TrialPhase { kRunning, kPaused, kComplete, kFailed };

// A trial as early stopping sees it. Its index in the sweep's list is its trial number - 1.
struct TrialProgress {
  std::vector<Report> reports;  // in increasing resource
  TrialPhase phase = TrialPhase::kRunning;
};

struct Verdict {
  bool stop = false;
  int rung = -1;       // asha: the rung that was judged (-1: none was reached by the last report)
  std::string reason;  // for describe: where, the value, what it was held against
};

// Whether trials[i] should stop after its last report. asha judges only the highest rung that
// the last report reached and the one before it did not; stopping there means pausing.
// median stops for good.
Verdict Judge(const EarlyStopping& rule, Goal goal, const std::vector<TrialProgress>& trials,
              size_t i);

// asha: the paused trials that are now among the best 1/eta at the rung where they paused,
// the highest rung first and the best value first within it; the sweep resumes them from their
// checkpoints before it starts new trials. Empty for median.
std::vector<size_t> Promotable(const EarlyStopping& rule, Goal goal,
                               const std::vector<TrialProgress>& trials);

}  // namespace tf::sweeps
