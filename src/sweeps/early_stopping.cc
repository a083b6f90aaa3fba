#include "sweeps/early_stopping.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <sstream>

namespace tf::sweeps {
namespace {

// A report counts as having reached a rung despite the rung's rounding (min * eta^k).
bool Reached(double resource, double rung) { return resource >= rung * (1 - 1e-9); }

// Whether `a` is a better objective value than `b`; a value that is not a number is the worst.
bool Better(Goal goal, double a, double b) {
  if (std::isnan(a)) return false;
  if (std::isnan(b)) return true;
  return goal == Goal::kMinimize ? a < b : a > b;
}

std::string Number(double v) {
  std::ostringstream out;
  out.precision(6);
  out << v;
  return out.str();
}

std::string Ordinal(size_t n) {
  const size_t tens = n % 100;
  const char* suffix = (tens >= 11 && tens <= 13) ? "th"
                       : n % 10 == 1              ? "st"
                       : n % 10 == 2              ? "nd"
                       : n % 10 == 3              ? "rd"
                                                  : "th";
  return std::to_string(n) + suffix;
}

// The value a trial had at a rung: that of its first report to reach it.
const Report* AtRung(const TrialProgress& t, double rung) {
  for (const Report& r : t.reports) {
    if (Reached(r.resource, rung)) return &r;
  }
  return nullptr;
}

// The brackets of the first `count` trials.
std::vector<int> Brackets(const EarlyStopping& rule, size_t count) {
  std::vector<int> out(count, 0);
  const int b = rule.brackets;
  if (b <= 1) return out;
  std::vector<double> weight(static_cast<size_t>(b)), current(static_cast<size_t>(b), 0);
  double total = 0;
  for (int i = 0; i < b; ++i) {
    const int halvings = b - 1 - i;
    weight[static_cast<size_t>(i)] = std::ceil(static_cast<double>(b) / (halvings + 1) *
                                               std::pow(rule.reduction_factor, halvings));
    total += weight[static_cast<size_t>(i)];
  }
  for (size_t t = 0; t < count; ++t) {
    size_t pick = 0;
    for (size_t i = 0; i < weight.size(); ++i) {
      current[i] += weight[i];
      if (current[i] > current[pick]) pick = i;
    }
    current[pick] -= total;
    out[t] = static_cast<int>(pick);
  }
  return out;
}

// Where one value stands among those of a bracket's trials at a rung.
struct Standing {
  size_t better = 0;  // values strictly better than it
  size_t count = 0;   // values there, its own included
};

Standing StandingAt(Goal goal, const std::vector<TrialProgress>& trials,
                    const std::vector<int>& brackets, int bracket, double rung, double value) {
  Standing s;
  for (size_t j = 0; j < trials.size(); ++j) {
    if (brackets[j] != bracket) continue;
    const Report* r = AtRung(trials[j], rung);
    if (!r) continue;
    ++s.count;
    if (Better(goal, r->value, value)) ++s.better;
  }
  return s;
}

// The highest rung a trial's reports have reached (-1: none).
int HighestRung(const std::vector<double>& rungs, double resource) {
  int k = -1;
  for (size_t j = 0; j < rungs.size(); ++j) {
    if (Reached(resource, rungs[j])) k = static_cast<int>(j);
  }
  return k;
}

Verdict JudgeAsha(const EarlyStopping& rule, Goal goal, const std::vector<TrialProgress>& trials,
                  size_t i) {
  const std::vector<int> brackets = Brackets(rule, trials.size());
  const int bracket = brackets[i];
  const std::vector<double> rungs = Rungs(rule, bracket);
  const auto& reports = trials[i].reports;
  const double last = reports.back().resource;
  const double before = reports.size() > 1 ? reports[reports.size() - 2].resource
                                           : -std::numeric_limits<double>::infinity();
  Verdict v;
  for (size_t k = 0; k < rungs.size(); ++k) {
    if (Reached(last, rungs[k]) && !Reached(before, rungs[k])) v.rung = static_cast<int>(k);
  }
  if (v.rung < 0) return v;
  const double rung = rungs[static_cast<size_t>(v.rung)];
  const double value = AtRung(trials[i], rung)->value;
  const Standing s = StandingAt(goal, trials, brackets, bracket, rung, value);
  const size_t go_on = std::max<size_t>(
      1, static_cast<size_t>(static_cast<double>(s.count) / rule.reduction_factor));
  v.stop = s.better >= go_on;
  std::string where = rule.resource + " " + Number(rung) + " (rung " + std::to_string(v.rung + 1) +
                      " of " + std::to_string(rungs.size());
  if (rule.brackets > 1) where += ", bracket " + std::to_string(bracket + 1);
  v.reason = where + "): " + Number(value) + " is " + Ordinal(s.better + 1) + " of " +
             std::to_string(s.count) + " there, the best " + std::to_string(go_on) +
             (v.stop ? " go on: paused" : " go on");
  return v;
}

// A trial's best value over its reports up to `at` (nullopt: none that early).
std::optional<double> BestUpTo(Goal goal, const TrialProgress& t, double at) {
  std::optional<double> best;
  for (const Report& r : t.reports) {
    if (r.resource > at * (1 + 1e-9)) break;
    if (!best || Better(goal, r.value, *best)) best = r.value;
  }
  return best;
}

Verdict JudgeMedian(const EarlyStopping& rule, Goal goal, const std::vector<TrialProgress>& trials,
                    size_t i) {
  Verdict v;
  const double at = trials[i].reports.back().resource;
  if (!Reached(at, rule.min_resource)) return v;
  const double best = *BestUpTo(goal, trials[i], at);
  std::vector<double> others;
  for (size_t j = 0; j < trials.size(); ++j) {
    if (j == i || trials[j].reports.empty() || !Reached(trials[j].reports.back().resource, at)) {
      continue;
    }
    if (auto b = BestUpTo(goal, trials[j], at)) others.push_back(*b);
  }
  if (others.size() < static_cast<size_t>(rule.min_trials)) return v;
  std::sort(others.begin(), others.end(),
            [goal](double a, double b) { return Better(goal, a, b); });
  const size_t m = others.size();
  const double median = m % 2 ? others[m / 2] : (others[m / 2 - 1] + others[m / 2]) / 2;
  v.stop = Better(goal, median, best);
  v.reason = rule.resource + " " + Number(at) + ": the best so far, " + Number(best) + ", is " +
             (v.stop ? "worse than" : "no worse than") + " the median " + Number(median) +
             " of the best that " + std::to_string(m) + " other trials had by then" +
             (v.stop ? ": stopped" : "");
  return v;
}

}  // namespace

Result<StopRule> ParseStopRule(std::string_view name) {
  if (name == "asha") return StopRule::kAsha;
  if (name == "median") return StopRule::kMedian;
  return InvalidArgument("unknown early stopping type '" + std::string(name) + "' (asha, median)");
}

std::string_view StopRuleName(StopRule rule) { return rule == StopRule::kAsha ? "asha" : "median"; }

int HyperbandBrackets(const EarlyStopping& rule) {
  if (rule.min_resource <= 0 || rule.max_resource <= rule.min_resource ||
      rule.reduction_factor < 2) {
    return 1;
  }
  const double halvings =
      std::log(rule.max_resource / rule.min_resource) / std::log(rule.reduction_factor);
  return static_cast<int>(std::floor(halvings + 1e-9)) + 1;
}

Status Validate(const EarlyStopping& rule) {
  if (!(rule.min_resource > 0)) {
    return InvalidArgument("min_resource must be above 0, got " + Number(rule.min_resource));
  }
  if (!(rule.max_resource > rule.min_resource)) {
    return InvalidArgument("max_resource must be above min_resource (" + Number(rule.min_resource) +
                           "), got " + Number(rule.max_resource));
  }
  if (!(rule.reduction_factor >= 2)) {
    return InvalidArgument("reduction_factor must be at least 2, got " +
                           Number(rule.reduction_factor));
  }
  const int most = HyperbandBrackets(rule);
  if (rule.brackets < 1 || rule.brackets > most) {
    return InvalidArgument("brackets must be from 1 to " + std::to_string(most) +
                           " for these resources, got " + std::to_string(rule.brackets));
  }
  if (rule.min_trials < 1) {
    return InvalidArgument("min_trials must be at least 1, got " + std::to_string(rule.min_trials));
  }
  return OkStatus();
}

std::vector<double> Rungs(const EarlyStopping& rule, int bracket) {
  std::vector<double> out;
  if (rule.min_resource <= 0 || rule.reduction_factor < 2) return out;
  double r = rule.min_resource * std::pow(rule.reduction_factor, bracket);
  for (; r < rule.max_resource * (1 - 1e-9); r *= rule.reduction_factor) out.push_back(r);
  return out;
}

int BracketOf(const EarlyStopping& rule, size_t trial) { return Brackets(rule, trial + 1)[trial]; }

Verdict Judge(const EarlyStopping& rule, Goal goal, const std::vector<TrialProgress>& trials,
              size_t i) {
  if (i >= trials.size() || trials[i].reports.empty()) return {};
  return rule.rule == StopRule::kAsha ? JudgeAsha(rule, goal, trials, i)
                                      : JudgeMedian(rule, goal, trials, i);
}

std::vector<size_t> Promotable(const EarlyStopping& rule, Goal goal,
                               const std::vector<TrialProgress>& trials) {
  if (rule.rule != StopRule::kAsha) return {};
  const std::vector<int> brackets = Brackets(rule, trials.size());
  std::vector<std::vector<double>> rungs;  // by bracket
  for (int b = 0; b < std::max(1, rule.brackets); ++b) rungs.push_back(Rungs(rule, b));
  // Every bracket's values at each of its rungs, best first: one pass, then a binary search
  // per paused trial, so that a sweep of thousands of trials is not quadratic per call.
  std::vector<std::vector<std::vector<double>>> values(rungs.size());
  for (size_t b = 0; b < rungs.size(); ++b) values[b].resize(rungs[b].size());
  for (size_t j = 0; j < trials.size(); ++j) {
    const auto b = static_cast<size_t>(brackets[j]);
    for (size_t k = 0; k < rungs[b].size(); ++k) {
      const Report* r = AtRung(trials[j], rungs[b][k]);
      if (!r) break;
      values[b][k].push_back(r->value);
    }
  }
  auto better = [goal](double a, double b) { return Better(goal, a, b); };
  for (auto& bracket : values) {
    for (auto& at : bracket) std::sort(at.begin(), at.end(), better);
  }
  struct Candidate {
    size_t trial;
    double rung;
    double value;
  };
  std::vector<Candidate> found;
  for (size_t j = 0; j < trials.size(); ++j) {
    if (trials[j].phase != TrialPhase::kPaused || trials[j].reports.empty()) continue;
    const auto b = static_cast<size_t>(brackets[j]);
    const int k = HighestRung(rungs[b], trials[j].reports.back().resource);
    if (k < 0) continue;
    const double rung = rungs[b][static_cast<size_t>(k)];
    const double value = AtRung(trials[j], rung)->value;
    const auto& at = values[b][static_cast<size_t>(k)];
    const auto better_count = static_cast<size_t>(
        std::partition_point(at.begin(), at.end(), [&](double x) { return better(x, value); }) -
        at.begin());
    const auto go_on = static_cast<size_t>(static_cast<double>(at.size()) / rule.reduction_factor);
    if (better_count < go_on) found.push_back({j, rung, value});
  }
  std::sort(found.begin(), found.end(), [&](const Candidate& a, const Candidate& b) {
    if (a.rung != b.rung) return a.rung > b.rung;
    if (better(a.value, b.value) != better(b.value, a.value)) return better(a.value, b.value);
    return a.trial < b.trial;
  });
  std::vector<size_t> out;
  out.reserve(found.size());
  for (const Candidate& c : found) out.push_back(c.trial);
  return out;
}

}  // namespace tf::sweeps
