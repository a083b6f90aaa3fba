// `tensorfleet sweep suggest`: the sweeps' search core as ask and tell, without jobs
// (docs/sweeps.md). Finished trials come in as JSON lines on stdin, the next suggestion goes
// out as a JSON line on stdout, so that any loop (a script, a benchmark) can use it.
#include <iostream>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "sweeps/search_space.h"
#include "sweeps/strategy.h"

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

}  // namespace

void AddSweepCommands(CLI::App& app, client::Connection& conn, int& exit_code) {
  auto* sweep = app.add_subcommand("sweep", "Hyperparameter search (docs/sweeps.md)");
  sweep->require_subcommand(1);
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
}

}  // namespace tf::cli
