#include "sweeps/sweep_controller.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "jobs/job_doc.h"
#include "sweeps/strategy.h"

namespace tf::sweeps {
namespace {

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

// The objective's reports of a trial: the points of `metric` of each of its jobs by step, a
// later job's value replacing an earlier one's at the same step (a resumed trial may repeat
// steps since its last checkpoint). A point without a step counts as the next step, unless the
// job's stream has steps. With a
// resource other than "step", a point's resource is the latest value of that metric reported
// at or before its step (points before the first are left out).
Result<std::vector<Report>> ReportsOf(TrialRunner& runner, const std::string& project_id,
                                      const SweepTrial& trial, const std::string& metric,
                                      const std::string& resource) {
  auto by_step = [&](const std::string& name) -> Result<std::map<double, double>> {
    std::map<double, double> out;
    for (const std::string& job : trial.jobs) {
      TF_ASSIGN_OR_RETURN(std::vector<store::MetricPoint> points,
                          runner.Metrics(project_id, job, name));
      // A stream with steps (the metrics file's) leaves out the points of the same name without
      // one (a stdout regex's, when a job reports both ways).
      const bool stepped = std::any_of(points.begin(), points.end(),
                                       [](const store::MetricPoint& p) { return p.step >= 0; });
      double next = out.empty() ? 0 : out.rbegin()->first + 1;
      for (const store::MetricPoint& p : points) {
        if (!std::isfinite(p.value) || (stepped && p.step < 0)) continue;
        double step = p.step >= 0 ? static_cast<double>(p.step) : next;
        out[step] = p.value;
        next = step + 1;
      }
    }
    return out;
  };
  TF_ASSIGN_OR_RETURN(auto values, by_step(metric));
  std::map<double, double> amounts;
  if (resource != "step") {
    TF_ASSIGN_OR_RETURN(amounts, by_step(resource));
  }
  std::vector<Report> out;
  out.reserve(values.size());
  for (const auto& [step, value] : values) {
    if (resource == "step") {
      out.push_back(Report{step, value});
      continue;
    }
    auto at = amounts.upper_bound(step);
    if (at == amounts.begin()) continue;
    double amount = std::prev(at)->second;
    // One report per amount: the latest value at it.
    if (!out.empty() && out.back().resource >= amount) {
      out.back().value = value;
    } else {
      out.push_back(Report{amount, value});
    }
  }
  return out;
}

TrialPhase PhaseOf(const SweepTrial& t) {
  if (t.state == kTrialPaused) return TrialPhase::kPaused;
  if (t.state == kTrialFailed) return TrialPhase::kFailed;
  if (t.state == kTrialComplete || t.state == kTrialStopped) return TrialPhase::kComplete;
  return TrialPhase::kRunning;
}

std::vector<TrialProgress> ProgressOf(const std::vector<SweepTrial>& trials) {
  std::vector<TrialProgress> out;
  out.reserve(trials.size());
  for (const SweepTrial& t : trials) out.push_back(TrialProgress{t.reports, PhaseOf(t)});
  return out;
}

// The trials as the strategy sees them: an ended or paused trial with its objective value
// (a trial stopped early with the value it had: worse, on a falling curve, than it would have
// ended with); a failed one, or one that never reported, as failed; the others as running.
std::vector<Trial> StrategyTrials(const std::vector<SweepTrial>& trials, const Objective& o) {
  std::vector<Trial> out;
  out.reserve(trials.size());
  for (const SweepTrial& t : trials) {
    Trial s;
    s.params = t.params;
    if (TrialActive(t)) {
      s.state = "running";
    } else if (t.state == kTrialFailed) {
      s.state = "failed";
    } else {
      s.value = ObjectiveValue(t, o);
      s.state = s.value ? "complete" : "failed";
    }
    out.push_back(std::move(s));
  }
  return out;
}

void Note(SweepDoc& doc, TimeMs now, std::string text) {
  spdlog::info("sweep: {}", text);
  doc.events.push_back(SweepEvent{now, std::move(text)});
  if (doc.events.size() > kMaxSweepEvents) {
    doc.events.erase(doc.events.begin(),
                     doc.events.begin() + static_cast<long>(doc.events.size() - kMaxSweepEvents));
  }
}

std::string TrialName(const SweepTrial& t) { return "trial " + std::to_string(t.number); }

// The verdict on trials[i] (the document's `t`) for what it reported since the last tick. asha
// judges each rung it reached since it was last judged, in order, as if at the moment it
// reached it (metrics arrive in batches: a tick may see several steps at once), and stops at
// the first that pauses it; a resumed trial is not judged again at the rung it was promoted
// from. median judges the latest report.
Verdict JudgeNewRungs(const EarlyStopping& es, Goal goal, std::vector<TrialProgress>& progress,
                      size_t i, SweepTrial& t) {
  if (es.rule != StopRule::kAsha) return Judge(es, goal, progress, i);
  const std::vector<double> rungs = Rungs(es, t.bracket);
  const std::vector<Report> all = progress[i].reports;
  Verdict v;
  for (size_t k = t.rung < 0 ? 0 : static_cast<size_t>(t.rung) + 1; k < rungs.size(); ++k) {
    auto reached = std::find_if(all.begin(), all.end(), [&](const Report& r) {
      return r.resource >= rungs[k] * (1 - 1e-9);
    });
    if (reached == all.end()) break;
    progress[i].reports.assign(all.begin(), reached + 1);
    v = Judge(es, goal, progress, i);
    t.rung = static_cast<int>(k);
    if (v.stop) break;
  }
  progress[i].reports = all;
  return v;
}

// Stops every trial still going (a running one's job with kStoppedBy and `why`).
Status StopActiveTrials(TrialRunner& runner, const std::string& project, SweepDoc& doc,
                        const std::string& why, TimeMs now) {
  for (SweepTrial& t : doc.trials) {
    if (!TrialActive(t)) continue;
    if (t.state == kTrialRunning) {
      TF_RETURN_IF_ERROR(runner.Stop(project, t.jobs.back(), std::string(kStoppedBy) + why));
    }
    t.state = kTrialStopped;
    t.reason = why;
    t.ended_at = now;
  }
  return OkStatus();
}

// The end of a trial whose job ended.
void Ended(SweepTrial& t, const TrialJobView& job, const Objective& objective, TimeMs now) {
  t.ended_at = now;
  if (job.state == jobs::kSucceeded) {
    t.state = kTrialComplete;
    std::optional<double> value = ObjectiveValue(t, objective);
    t.reason = value ? "finished: " + objective.metric + " " + Num(*value)
                     : "finished without reporting " + objective.metric;
  } else if (job.reason.starts_with(kPausedBy)) {
    t.state = kTrialPaused;
    t.reason = job.reason.substr(kPausedBy.size());
  } else if (job.reason.starts_with(kStoppedBy)) {
    t.state = kTrialStopped;
    t.reason = job.reason.substr(kStoppedBy.size());
  } else {
    t.state = kTrialFailed;
    t.reason =
        "job " + t.jobs.back() + " " + job.state + (job.reason.empty() ? "" : ": ") + job.reason;
  }
}

}  // namespace

Status SweepController::Tick() {
  TF_ASSIGN_OR_RETURN(std::vector<store::DocumentRecord> sweeps,
                      documents_.ListDocuments(kSweepKind, "", {kSweepRunning, kSweepStopping}));
  Status first;
  for (const store::DocumentRecord& record : sweeps) {
    Status s = TickSweep(record);
    if (!s.ok() && s.code() != StatusCode::kAborted) {
      spdlog::warn("sweep {} ({}): {}", record.name, record.id, s.ToString());
      if (first.ok()) first = s;
    }
  }
  return first;
}

Status SweepController::TickSweep(const store::DocumentRecord& read) {
  const TimeMs now = clock_.Now();
  const std::string& project = read.project_id;
  store::DocumentRecord record = read;
  TF_ASSIGN_OR_RETURN(SweepDoc doc, SweepDocFromJson(read.doc_json));
  int64_t version = read.version;
  auto write = [&]() -> Status {
    record.doc_json = SweepDocToJson(doc).dump();
    record.updated_at = now;
    TF_RETURN_IF_ERROR(documents_.UpdateDocument(record, version));
    ++version;
    return OkStatus();
  };

  auto spec = SpecOf(doc);
  if (!spec.ok()) {
    record.state = kSweepFailed;
    doc.reason = "its spec no longer reads: " + spec.status().message();
    Note(doc, now, read.name + ": failed: " + doc.reason);
    return write();
  }
  const Objective& objective = spec->objective;
  const std::optional<EarlyStopping>& es = spec->early_stopping;

  // 1. The running trials' jobs.
  for (SweepTrial& t : doc.trials) {
    if (t.state != kTrialRunning) continue;
    TF_ASSIGN_OR_RETURN(TrialJobView job, runner_.Inspect(project, t.jobs.back()));
    TF_ASSIGN_OR_RETURN(t.reports, ReportsOf(runner_, project, t, objective.metric,
                                             es ? es->resource : std::string("step")));
    if (job.ended) {
      Ended(t, job, objective, now);
      Note(doc, now, TrialName(t) + " " + t.state + ": " + t.reason);
    }
  }

  // 2. Early stopping, at each rung (asha) or report (median) a running trial reaches.
  if (es && record.state == kSweepRunning) {
    std::vector<TrialProgress> progress = ProgressOf(doc.trials);
    for (size_t i = 0; i < doc.trials.size(); ++i) {
      SweepTrial& t = doc.trials[i];
      if (t.state != kTrialRunning || t.reports.empty()) continue;
      Verdict v = JudgeNewRungs(*es, objective.goal, progress, i, t);
      if (!v.stop) continue;
      const bool pause = es->rule == StopRule::kAsha;
      std::string why = std::string(pause ? kPausedBy : kStoppedBy) + v.reason;
      TF_RETURN_IF_ERROR(runner_.Stop(project, t.jobs.back(), why));
      t.state = pause ? kTrialPaused : kTrialStopped;
      t.reason = v.reason;
      t.ended_at = now;
      progress[i].phase = pause ? TrialPhase::kPaused : TrialPhase::kComplete;
      Note(doc, now, TrialName(t) + (pause ? " paused: " : " stopped: ") + v.reason);
    }
  }

  // The objective's metric: said clearly once the first trials ended without it.
  if (record.state == kSweepRunning) {
    int complete = 0;
    bool reported = false;
    for (const SweepTrial& t : doc.trials) {
      reported = reported || !t.reports.empty();
      if (t.state == kTrialComplete) ++complete;
    }
    const int enough = std::min(kTrialsBeforeMetricCheck, spec->max_trials);
    if (!reported && complete >= enough) {
      record.state = kSweepFailed;
      doc.reason = "no trial reported the metric '" + objective.metric + "' (" +
                   std::to_string(complete) +
                   " finished): check the objective's metric against what the job writes to "
                   "$TENSORFLEET_METRICS_FILE (`tensorfleet describe JOB` shows its metrics)";
      Note(doc, now, read.name + " failed: " + doc.reason);
    }
  }

  // The sweep asked to stop, or failed: every trial still going stops.
  if (record.state == kSweepStopping || record.state == kSweepFailed) {
    const std::string why =
        record.state == kSweepFailed ? "the sweep failed" : "the sweep was stopped";
    TF_RETURN_IF_ERROR(StopActiveTrials(runner_, project, doc, why, now));
    if (record.state == kSweepStopping) {
      record.state = kSweepStopped;
      Note(doc, now, read.name + " stopped: " + doc.reason);
    }
  }

  // 3. What the trials cost so far.
  std::vector<std::string> all_jobs;
  for (const SweepTrial& t : doc.trials)
    all_jobs.insert(all_jobs.end(), t.jobs.begin(), t.jobs.end());
  if (!all_jobs.empty()) {
    TF_ASSIGN_OR_RETURN(auto costs, runner_.Costs(project, all_jobs, read.created_at));
    doc.spent = 0;
    for (SweepTrial& t : doc.trials) {
      t.cost = 0;
      for (const std::string& j : t.jobs) {
        if (auto it = costs.find(j); it != costs.end()) t.cost += it->second;
      }
      doc.spent += t.cost;
    }
  }
  const bool over_budget = spec->budget && doc.spent >= *spec->budget;

  // 4. Promotions, then new trials.
  if (record.state == kSweepRunning && !over_budget) {
    int active = static_cast<int>(std::count_if(doc.trials.begin(), doc.trials.end(), TrialActive));
    if (es && es->rule == StopRule::kAsha) {
      for (size_t i : Promotable(*es, objective.goal, ProgressOf(doc.trials))) {
        if (active >= spec->max_parallel) break;
        SweepTrial& t = doc.trials[i];
        // Its last job must have ended (and synced its last checkpoint) first.
        TF_ASSIGN_OR_RETURN(TrialJobView last, runner_.Inspect(project, t.jobs.back()));
        if (!last.ended) continue;
        t.state = kTrialStarting;
        const std::vector<double> rungs = Rungs(*es, t.bracket);
        const double at = t.rung >= 0 && t.rung < static_cast<int>(rungs.size())
                              ? rungs[static_cast<size_t>(t.rung)]
                              : t.reports.back().resource;
        t.reason = "promoted at " + es->resource + " " + Num(at) + ": now among the best 1/" +
                   Num(es->reduction_factor) + " there";
        t.ended_at = 0;
        ++active;
        Note(doc, now, TrialName(t) + " " + t.reason);
      }
    }
    TF_ASSIGN_OR_RETURN(auto strategy,
                        NewStrategy(spec->strategy, spec->space, spec->seed, objective.goal));
    while (active < spec->max_parallel && static_cast<int>(doc.trials.size()) < spec->max_trials) {
      auto params = strategy->Suggest(StrategyTrials(doc.trials, objective));
      if (params.status().code() == StatusCode::kFailedPrecondition) break;  // grid done
      TF_RETURN_IF_ERROR(params.status());
      SweepTrial t;
      t.number = static_cast<int>(doc.trials.size()) + 1;
      t.params = *params;
      t.bracket = es ? BracketOf(*es, doc.trials.size()) : 0;
      t.reason = "suggested by " + spec->strategy;
      doc.trials.push_back(std::move(t));
      ++active;
    }
  }

  // 5. The end: nothing runs and nothing more may start.
  if (record.state == kSweepRunning &&
      std::none_of(doc.trials.begin(), doc.trials.end(), TrialActive)) {
    const bool all_tried = static_cast<int>(doc.trials.size()) >= spec->max_trials;
    record.state = kSweepFinished;
    doc.reason = over_budget
                     ? "its spend $" + Num(doc.spent) + " reached the budget $" + Num(*spec->budget)
                 : all_tried ? "all " + std::to_string(doc.trials.size()) + " trials ended"
                             : "the strategy has nothing left to try";
    Note(doc, now, read.name + " finished: " + doc.reason);
  }
  TF_RETURN_IF_ERROR(write());

  // Jobs for the trials that start, once they are recorded.
  bool started = false;
  for (SweepTrial& t : doc.trials) {
    if (t.state != kTrialStarting) continue;
    auto job = TrialJob(*spec, t.number, t.params);
    Result<std::string> id = job.ok() ? runner_.Start(project, *job, doc.code_key,
                                                      t.jobs.empty() ? "" : t.jobs.front(), t.jobs)
                                      : Result<std::string>(job.status());
    if (!id.ok()) {
      StatusCode code = id.status().code();
      if (code != StatusCode::kInvalidArgument && code != StatusCode::kFailedPrecondition &&
          code != StatusCode::kResourceExhausted) {
        return id.status();  // tried again at the next tick
      }
      // Every trial's job is the same template: what refuses one (a template no node could
      // run, a project budget that refuses submissions) would refuse the next.
      t.state = kTrialFailed;
      t.reason = "its job was refused: " + id.status().message();
      t.ended_at = now;
      record.state = kSweepFailed;
      doc.reason =
          TrialName(t) + "'s job was refused (every trial's would be): " + id.status().message();
      Note(doc, now, read.name + " failed: " + doc.reason);
      TF_RETURN_IF_ERROR(StopActiveTrials(runner_, project, doc, "the sweep failed", now));
      started = true;
      break;
    } else {
      bool resumed = !t.jobs.empty();
      t.jobs.push_back(*id);
      t.state = kTrialRunning;
      if (!resumed) t.started_at = now;
      Note(
          doc, now,
          TrialName(t) + (resumed ? " resumed as " : " started as ") + *id + " " + t.params.dump());
    }
    started = true;
  }
  if (started) return write();
  return OkStatus();
}

}  // namespace tf::sweeps
