// `tensorfleet sweep suggest`: the sweeps' search core as ask and tell, without jobs
// (docs/sweeps.md). Finished trials come in as JSON lines on stdin, the next suggestion goes
// out as a JSON line on stdout, so that any loop (a script, a benchmark) can use it.
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>

#include "cli/commands.h"
#include "cli/cost_flags.h"
#include "sweeps/search_space.h"
#include "sweeps/strategy.h"
#include "sweeps/sweep_spec.h"

namespace tf::cli {
namespace {

struct SweepSuggestFlags {
  std::string space_path;
  std::string strategy = "random";
  std::string goal = "minimize";
  uint64_t seed = 0;
  int count = 1;
};

// One trial line: {"params": {...}, "value": 0.12, "state": "complete"}; value and state are
// optional (a trial with no value is taken as running).
Result<sweeps::Trial> ReadTrial(const std::string& line, int number) {
  const std::string where = "stdin:" + std::to_string(number) + ": ";
  Json j = Json::parse(line, nullptr, false);
  if (!j.is_object()) return InvalidArgument(where + "not a JSON object");
  sweeps::Trial t;
  auto params = j.find("params");
  if (params == j.end() || !params->is_object()) {
    return InvalidArgument(where + "'params' must be an object of the trial's hyperparameters");
  }
  t.params = *params;
  if (auto v = j.find("value"); v != j.end() && !v->is_null()) {
    if (!v->is_number()) return InvalidArgument(where + "'value' must be a number or null");
    t.value = v->get<double>();
  }
  t.state = t.value ? "complete" : "running";
  if (auto s = j.find("state"); s != j.end()) {
    if (!s->is_string() || (*s != "complete" && *s != "running" && *s != "failed")) {
      return InvalidArgument(where + "'state' must be complete, running or failed");
    }
    t.state = *s;
  }
  return t;
}

struct SweepJudgeFlags {
  std::string rules_path;
  std::string goal = "minimize";
};

// One trial line for `sweep judge`: {"reports": [[step, value], ...], "state": "running"}.
Result<sweeps::TrialProgress> ReadProgress(const std::string& line, int number) {
  const std::string where = "stdin:" + std::to_string(number) + ": ";
  Json j = Json::parse(line, nullptr, false);
  if (!j.is_object()) return InvalidArgument(where + "not a JSON object");
  sweeps::TrialProgress t;
  auto reports = j.find("reports");
  if (reports == j.end() || !reports->is_array()) {
    return InvalidArgument(where + "'reports' must be a list of [resource, value] pairs");
  }
  for (const Json& r : *reports) {
    if (!r.is_array() || r.size() != 2 || !r[0].is_number() || !r[1].is_number()) {
      return InvalidArgument(where + "each report must be [resource, value], got " + r.dump());
    }
    const double resource = r[0].get<double>();
    if (!t.reports.empty() && resource <= t.reports.back().resource) {
      return InvalidArgument(where + "reports must come in increasing resource, got " +
                             r[0].dump() + " after " + Json(t.reports.back().resource).dump());
    }
    t.reports.push_back({resource, r[1].get<double>()});
  }
  static const std::pair<std::string_view, sweeps::TrialPhase> kPhases[] = {
      {"running", sweeps::TrialPhase::kRunning},
      {"paused", sweeps::TrialPhase::kPaused},
      {"complete", sweeps::TrialPhase::kComplete},
      {"failed", sweeps::TrialPhase::kFailed}};
  if (auto s = j.find("state"); s != j.end()) {
    bool known = false;
    for (const auto& [name, phase] : kPhases) {
      if (s->is_string() && *s == name) {
        t.phase = phase;
        known = true;
      }
    }
    if (!known)
      return InvalidArgument(where + "'state' must be running, paused, complete or failed");
  }
  return t;
}

struct SweepCheckFlags {
  std::string path;
  int count = 5;
};

}  // namespace

Result<Json> SweepPlan(const std::string& path, int count) {
  const SweepCheckFlags f{path, count};
  TF_ASSIGN_OR_RETURN(std::string text, ReadTextFile(f.path));
  const std::filesystem::path folder = std::filesystem::path(f.path).parent_path();
  auto read_job = [&](const std::string& job_path) -> Result<std::string> {
    const std::filesystem::path p(job_path);
    return ReadTextFile((p.is_absolute() ? p : folder / p).string());
  };
  TF_ASSIGN_OR_RETURN(sweeps::SweepSpec spec, sweeps::ParseSweepSpec(text, f.path, read_job));
  TF_ASSIGN_OR_RETURN(auto strategy, sweeps::NewStrategy(spec.strategy, spec.space, spec.seed,
                                                         spec.objective.goal));
  Json plan = {
      {"name", spec.name},
      {"strategy", spec.strategy},
      {"seed", spec.seed},
      {"parameters", spec.space.params.size()},
      {"max_trials", spec.max_trials},
      {"max_parallel", spec.max_parallel},
      {"budget", spec.budget ? Json(*spec.budget) : Json(nullptr)},
      {"objective",
       {{"metric", spec.objective.metric},
        {"goal", spec.objective.goal == sweeps::Goal::kMinimize ? "minimize" : "maximize"},
        {"value", spec.objective.best ? "best" : "last"}}},
      {"early_stopping", nullptr},
  };
  if (const auto& es = spec.early_stopping) {
    Json rungs = Json::array();
    for (int b = 0; b < es->brackets; ++b) rungs.push_back(sweeps::Rungs(*es, b));
    plan["early_stopping"] = {{"type", sweeps::StopRuleName(es->rule)},
                              {"resource", es->resource},
                              {"min_resource", es->min_resource},
                              {"max_resource", es->max_resource},
                              {"reduction_factor", es->reduction_factor},
                              {"brackets", es->brackets},
                              {"rungs", rungs}};
  }
  std::vector<sweeps::Trial> trials;
  Json first = Json::array();
  for (int i = 1; i <= std::min(f.count, spec.max_trials); ++i) {
    TF_ASSIGN_OR_RETURN(Json params, strategy->Suggest(trials));
    TF_ASSIGN_OR_RETURN(jobs::JobSpec job, sweeps::TrialJob(spec, i, params));
    first.push_back({{"trial", i},
                     {"job", job.name},
                     {"params", params},
                     {"hyperparameters", job.hyperparameters}});
    trials.push_back(sweeps::Trial{params, std::nullopt, "running"});
  }
  plan["trials"] = first;
  return plan;
}

std::string Number(const Json& v) {
  if (!v.is_number_float()) return v.is_string() ? v.get<std::string>() : v.dump();
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v.get<double>());
  return buf;
}

void PrintSweepPlan(const Json& plan) {
  std::ostringstream out;
  out << plan["name"].get<std::string>() << ": " << plan["strategy"].get<std::string>()
      << " search of " << plan["parameters"] << " parameters, " << plan["max_trials"] << " trials, "
      << plan["max_parallel"] << " at a time";
  if (!plan["budget"].is_null()) out << ", until $" << Number(plan["budget"]) << " is spent";
  const Json& o = plan["objective"];
  out << "\nobjective: " << o["goal"].get<std::string>() << " " << o["metric"].get<std::string>()
      << " (each trial's " << o["value"].get<std::string>() << " report)\n";
  if (const Json& es = plan["early_stopping"]; !es.is_null()) {
    auto rungs = [](const Json& list) {
      if (list.empty()) return std::string("no rung (every trial in full)");
      std::string text = "rungs at";
      for (size_t i = 0; i < list.size(); ++i) text += (i ? ", " : " ") + Number(list[i]);
      return text;
    };
    const std::string on =
        " on " + es["resource"].get<std::string>() + " up to " + Number(es["max_resource"]);
    if (es["type"] == "median") {
      out << "early stopping: the median rule" << on << ", from " << Number(es["min_resource"])
          << "\n";
    } else if (es["rungs"].size() == 1) {
      out << "early stopping: asha" << on << ", " << rungs(es["rungs"][0]) << "; the best 1/"
          << Number(es["reduction_factor"]) << " at a rung go on\n";
    } else {
      out << "early stopping: Hyperband's " << es["rungs"].size() << " brackets of asha" << on
          << "; the best 1/" << Number(es["reduction_factor"]) << " at a rung go on\n";
      for (size_t b = 0; b < es["rungs"].size(); ++b) {
        out << "  bracket " << b + 1 << ": " << rungs(es["rungs"][b]) << "\n";
      }
    }
  }
  if (!plan["trials"].empty()) out << "first trials:\n";
  for (const Json& t : plan["trials"]) {
    out << "  " << t["job"].get<std::string>();
    for (const auto& [k, v] : t["params"].items()) out << "  " << k << "=" << Number(v);
    out << "\n";
  }
  std::cout << out.str();
}

void AddSweepCommands(CLI::App& app, client::Connection& conn, int& exit_code) {
  auto* sweep = app.add_subcommand("sweep", "Hyperparameter search (docs/sweeps.md)");
  sweep->require_subcommand(1);
  auto c = std::make_shared<SweepCheckFlags>();
  auto* check = sweep->add_subcommand(
      "check",
      "Read a sweep spec, say what is wrong with its line and field, or print its plan: the "
      "strategy, limits, early stopping rungs and the jobs of its first trials");
  check->add_option("file", c->path, "The sweep spec (YAML)")->required();
  check->add_option("--count", c->count, "First trials to show (default 5)")
      ->check(CLI::Range(0, 10000));
  AddJsonFlag(check, conn);
  RunStatus(check, exit_code, [c, &conn]() -> Status {
    TF_ASSIGN_OR_RETURN(Json plan, SweepPlan(c->path, c->count));
    if (conn.json) {
      std::cout << plan.dump(2) << "\n";
    } else {
      PrintSweepPlan(plan);
    }
    return OkStatus();
  });

  auto j = std::make_shared<SweepJudgeFlags>();
  auto* judge = sweep->add_subcommand(
      "judge",
      "Early stopping, ask-and-tell: every trial as a JSON line on stdin, in trial order "
      "({\"reports\": [[step, value], ...], \"state\": \"running\"}); out, a line per running "
      "trial whose last report was judged, {\"trial\": N, \"stop\": true, \"reason\": ...}, "
      "and for asha {\"promote\": [N, ...]}, the paused trials to resume");
  judge
      ->add_option("--rules", j->rules_path,
                   "YAML file with the `early_stopping:` to apply (and `strategy: hyperband` for "
                   "its brackets), as a sweep spec writes it")
      ->required();
  judge->add_option("--goal", j->goal, "minimize (default) or maximize the reported values");
  RunStatus(judge, exit_code, [j]() -> Status {
    TF_ASSIGN_OR_RETURN(std::string text, ReadTextFile(j->rules_path));
    TF_ASSIGN_OR_RETURN(sweeps::EarlyStopping rule,
                        sweeps::ParseEarlyStopping(text, j->rules_path));
    TF_ASSIGN_OR_RETURN(sweeps::Goal goal, sweeps::ParseGoal(j->goal));
    std::vector<sweeps::TrialProgress> trials;
    std::string line;
    for (int number = 1; std::getline(std::cin, line); ++number) {
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      TF_ASSIGN_OR_RETURN(sweeps::TrialProgress t, ReadProgress(line, number));
      trials.push_back(std::move(t));
    }
    for (size_t i = 0; i < trials.size(); ++i) {
      if (trials[i].phase != sweeps::TrialPhase::kRunning) continue;
      sweeps::Verdict v = sweeps::Judge(rule, goal, trials, i);
      if (v.reason.empty()) continue;
      std::cout << Json{{"trial", i + 1}, {"stop", v.stop}, {"reason", v.reason}}.dump() << "\n";
    }
    if (rule.rule == sweeps::StopRule::kAsha) {
      Json promote = Json::array();
      for (size_t i : sweeps::Promotable(rule, goal, trials)) promote.push_back(i + 1);
      std::cout << Json{{"promote", promote}}.dump() << "\n";
    }
    std::cout.flush();
    return OkStatus();
  });

  auto f = std::make_shared<SweepSuggestFlags>();
  auto* suggest = sweep->add_subcommand(
      "suggest",
      "The next trial's hyperparameters, ask-and-tell: finished trials as JSON lines on stdin "
      "({\"params\": {...}, \"value\": 0.12}), the suggestion as a JSON line on stdout");
  suggest->add_option("--space", f->space_path, "YAML file with the `parameters:` to search")
      ->required();
  suggest->add_option("--strategy", f->strategy,
                      "random (default), grid, or bayesian (TPE: random for the first 10 "
                      "completed trials, then modelled on them)");
  suggest->add_option("--goal", f->goal,
                      "minimize (default) or maximize the trials' values (bayesian)");
  suggest->add_option("--seed", f->seed, "Seed of the random draws (default 0)");
  suggest
      ->add_option("--count", f->count,
                   "Suggestions to make at once, each counted as running for the next "
                   "(default 1)")
      ->check(CLI::Range(1, 10000));
  RunStatus(suggest, exit_code, [f]() -> Status {
    TF_ASSIGN_OR_RETURN(std::string text, ReadTextFile(f->space_path));
    TF_ASSIGN_OR_RETURN(sweeps::SearchSpace space, sweeps::ParseSearchSpace(text, f->space_path));
    TF_ASSIGN_OR_RETURN(sweeps::Goal goal, sweeps::ParseGoal(f->goal));
    TF_ASSIGN_OR_RETURN(auto strategy, sweeps::NewStrategy(f->strategy, space, f->seed, goal));
    std::vector<sweeps::Trial> trials;
    std::string line;
    for (int number = 1; std::getline(std::cin, line); ++number) {
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      TF_ASSIGN_OR_RETURN(sweeps::Trial t, ReadTrial(line, number));
      trials.push_back(std::move(t));
    }
    for (int i = 0; i < f->count; ++i) {
      TF_ASSIGN_OR_RETURN(Json params, strategy->Suggest(trials));
      std::cout << Json{{"trial", trials.size() + 1}, {"params", params}}.dump() << "\n";
      trials.push_back(sweeps::Trial{params, std::nullopt, "running"});
    }
    std::cout.flush();
    return OkStatus();
  });

  AddSweepServerCommands(*sweep, conn, exit_code);
}

}  // namespace tf::cli
