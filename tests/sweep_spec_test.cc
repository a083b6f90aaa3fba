// A sweep's spec (sweeps/sweep_spec.h): every field read, the job template from a file or
// inline, each mistake named with its file, line and field, and a trial's job made from the
// template; `sweep check` as a process.
#include "sweeps/sweep_spec.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "file_test_util.h"
#include "program_run.h"
#include "store_test_env.h"

namespace tf::sweeps {
namespace {

using Json = nlohmann::json;

constexpr const char* kTrainYaml =
    "name: train\n"
    "command: [python3, train.py]\n"
    "resources: {cpus: 1}\n"
    "hyperparameters: {lr: 0.1, epochs: 3}\n";

constexpr const char* kSweep =
    "name: lr-search\n"
    "job: train.yaml\n"
    "parameters:\n"
    "  lr: {type: loguniform, low: 1e-5, high: 1e-2}\n"
    "  width: {type: int_log, low: 16, high: 256}\n"
    "objective: {metric: val_loss, goal: minimize, value: best}\n"
    "strategy: bayesian\n"
    "seed: 7\n"
    "max_trials: 32\n"
    "max_parallel: 2\n"
    "budget: 12.5\n"
    "early_stopping: {type: asha, resource: epoch, min_resource: 1, max_resource: 27}\n";

// Files the specs name, by path.
Result<std::string> Files(const std::string& path) {
  static const std::map<std::string, std::string> kFiles = {
      {"train.yaml", kTrainYaml},
      {"bad-train.yaml", "name: train\ncommand: []\n"},
  };
  auto it = kFiles.find(path);
  if (it == kFiles.end()) return NotFound(path + ": no such file");
  return it->second;
}

Result<SweepSpec> Parse(const std::string& yaml) {
  return ParseSweepSpec(yaml, "sweep.yaml", Files);
}

std::string ErrorOf(const std::string& yaml) {
  auto spec = Parse(yaml);
  return spec.ok() ? "(accepted)" : spec.status().message();
}

TEST(SweepSpecTest, ReadsEveryField) {
  auto spec = Parse(kSweep);
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_EQ(spec->name, "lr-search");
  EXPECT_EQ(spec->job.command, (std::vector<std::string>{"python3", "train.py"}));
  ASSERT_EQ(spec->space.params.size(), 2u);
  EXPECT_EQ(spec->objective.metric, "val_loss");
  EXPECT_EQ(spec->objective.goal, Goal::kMinimize);
  EXPECT_TRUE(spec->objective.best);
  EXPECT_EQ(spec->strategy, "bayesian");
  EXPECT_EQ(spec->seed, 7u);
  EXPECT_EQ(spec->max_trials, 32);
  EXPECT_EQ(spec->max_parallel, 2);
  EXPECT_EQ(spec->budget, 12.5);
  ASSERT_TRUE(spec->early_stopping.has_value());
  EXPECT_EQ(spec->early_stopping->rule, StopRule::kAsha);
  EXPECT_EQ(spec->early_stopping->resource, "epoch");
  EXPECT_EQ(spec->early_stopping->max_resource, 27);
  EXPECT_EQ(spec->early_stopping->brackets, 1);
}

TEST(SweepSpecTest, DefaultsAndAnInlineJob) {
  auto spec = Parse(
      "name: grid\n"
      "job:\n"
      "  name: inline\n"
      "  command: [echo, hi]\n"
      "parameters:\n"
      "  layers: {type: int, low: 2, high: 4}\n"
      "  opt: {type: categorical, choices: [sgd, adamw]}\n"
      "objective: {metric: accuracy, goal: maximize}\n"
      "strategy: grid\n");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_EQ(spec->job.command, (std::vector<std::string>{"echo", "hi"}));
  EXPECT_EQ(spec->objective.goal, Goal::kMaximize);
  EXPECT_FALSE(spec->objective.best);
  EXPECT_EQ(spec->max_trials, 6) << "a grid's trials are its points";
  EXPECT_EQ(spec->max_parallel, 1);
  EXPECT_FALSE(spec->budget.has_value());
  EXPECT_FALSE(spec->early_stopping.has_value());
}

TEST(SweepSpecTest, HyperbandTakesItsBracketsFromTheResources) {
  auto spec = Parse(
      "name: hb\njob: train.yaml\nparameters: {lr: {type: uniform, low: 0, high: 1}}\n"
      "objective: {metric: loss}\nstrategy: hyperband\nmax_trials: 50\n"
      "early_stopping: {min_resource: 1, max_resource: 81}\n");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_EQ(spec->early_stopping->rule, StopRule::kAsha);
  EXPECT_EQ(spec->early_stopping->brackets, 5);
  EXPECT_EQ(spec->early_stopping->resource, "step");
}

TEST(SweepSpecTest, MistakesAreNamedWithFileLineAndField) {
  const std::string head =
      "name: s\njob: train.yaml\nparameters: {lr: {type: uniform, low: 0, high: 1}}\n";
  EXPECT_EQ(ErrorOf(head + "objective: {metric: loss}\n"),
            "sweep.yaml:1: 'max_trials' is missing (only a grid has a number of its own)");
  EXPECT_EQ(ErrorOf(head + "objective: {goal: minimize}\nmax_trials: 3\n"),
            "sweep.yaml:4: objective: needs the 'metric' that the trials report");
  EXPECT_EQ(ErrorOf(head + "objective: {metric: loss, goal: lowest}\nmax_trials: 3\n"),
            "sweep.yaml:4: objective.goal: unknown goal 'lowest' (minimize, maximize)");
  EXPECT_EQ(ErrorOf(head + "objective: {metric: loss}\nmax_trials: 3\nstrategy: tpe\n"),
            "sweep.yaml:6: strategy: unknown strategy 'tpe' (random, grid, bayesian, hyperband)");
  EXPECT_EQ(ErrorOf(head + "objective: {metric: loss}\nmax_trials: 0\n"),
            "sweep.yaml:5: max_trials: must be an integer from 1 to 10000, got 0");
  EXPECT_EQ(ErrorOf(head + "objective: {metric: loss}\nmax_trials: 3\nbudget: -1\n"),
            "sweep.yaml:6: budget: must be a number of dollars above 0, got \"-1\"");
  EXPECT_EQ(ErrorOf(head + "objective: {metric: loss}\nmax_trials: 3\nmax_paralel: 2\n"),
            "sweep.yaml:6: unknown field \"max_paralel\" (did you mean \"max_parallel\"?)");
  EXPECT_EQ(ErrorOf(head + "objective: {metric: loss}\nmax_trials: 3\nstrategy: hyperband\n"),
            "sweep.yaml:1: strategy hyperband needs early_stopping's resources: "
            "early_stopping: {resource: step, min_resource: 1, max_resource: 81}");
  EXPECT_EQ(ErrorOf(head + "objective: {metric: loss}\nmax_trials: 3\n"
                           "early_stopping: {type: asha, max_resource: 10, min_resource: 20}\n"),
            "sweep.yaml:6: early_stopping.max_resource: must be above min_resource (20), got 10");
  EXPECT_EQ(ErrorOf(head + "objective: {metric: loss}\nmax_trials: 3\n"
                           "early_stopping: {type: asha, max_resource: 10, min_trials: 2}\n"),
            "sweep.yaml:6: early_stopping.min_trials: is the median rule's");
  EXPECT_EQ(ErrorOf(head + "objective: {metric: loss}\nmax_trials: 3\n"
                           "early_stopping: {type: median}\n"),
            "sweep.yaml:6: early_stopping: needs max_resource: a trial's full budget in step");
  EXPECT_EQ(ErrorOf("name: Bad_Name\njob: train.yaml\n"),
            "sweep.yaml:1: name: must be 1-56 lowercase letters, digits and -, starting with a "
            "letter or digit (its trials' jobs are named after it), got 'Bad_Name'");
}

TEST(SweepSpecTest, TheJobTemplatesErrorsSayWhereTheyAre) {
  const std::string tail =
      "parameters: {lr: {type: uniform, low: 0, high: 1}}\n"
      "objective: {metric: loss}\nmax_trials: 3\n";
  EXPECT_EQ(ErrorOf("name: s\njob: missing.yaml\n" + tail),
            "sweep.yaml:2: job: cannot read the job spec: missing.yaml: no such file");
  EXPECT_NE(ErrorOf("name: s\njob: bad-train.yaml\n" + tail).find("bad-train.yaml:2: command"),
            std::string::npos)
      << ErrorOf("name: s\njob: bad-train.yaml\n" + tail);
  EXPECT_EQ(
      ErrorOf("name: s\njob:\n  name: x\n  command: [echo]\n  resources: {gpus: -1}\n" + tail),
      "sweep.yaml:5: job.resources.gpus: must be an integer from 0 to 64, got -1");
  EXPECT_EQ(ErrorOf("name: s\njob: [echo]\n" + tail),
            "sweep.yaml:2: job: must be a job spec file's path or a job spec (a mapping), got a "
            "list");
}

TEST(SweepSpecTest, ATrialsJobIsTheTemplateWithItsHyperparameters) {
  auto spec = Parse(kSweep);
  ASSERT_TRUE(spec.ok());
  auto job = TrialJob(*spec, 12, Json{{"lr", 3e-4}, {"width", 64}});
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  EXPECT_EQ(job->name, "lr-search-12");
  EXPECT_EQ(job->hyperparameters, (Json{{"lr", 3e-4}, {"width", 64}, {"epochs", 3}}));
  EXPECT_EQ(job->command, spec->job.command);
  auto bad = TrialJob(*spec, 1, Json{{"bad name", 1}});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("trial 1's job: hyperparameters."), std::string::npos)
      << bad.status().message();
}

TEST(SweepCheckCli, PrintsThePlanAndTheFirstTrials) {
  testing::TempDir dir;
  testing::WriteFile(dir.path() / "train.yaml", kTrainYaml);
  const std::string sweep = testing::WriteFile(dir.path() / "sweep.yaml", kSweep);
  auto check = [&](const std::string& flags) {
    return testing::RunProgram(
        {"/bin/sh", "-c", std::string(TENSORFLEET_BINARY) + " sweep check " + sweep + " " + flags});
  };
  auto json = check("--count 3 --json");
  ASSERT_EQ(json.exit_code, 0) << json.output;
  Json plan = Json::parse(json.output);
  EXPECT_EQ(plan["name"], "lr-search");
  EXPECT_EQ(plan["strategy"], "bayesian");
  EXPECT_EQ(plan["max_trials"], 32);
  EXPECT_EQ(plan["early_stopping"]["rungs"], Json::array({Json::array({1, 3, 9})}));
  ASSERT_EQ(plan["trials"].size(), 3u);
  EXPECT_EQ(plan["trials"][0]["job"], "lr-search-1");
  EXPECT_EQ(plan["trials"][2]["job"], "lr-search-3");
  EXPECT_EQ(plan["trials"][0]["hyperparameters"]["epochs"], 3) << "the template's own stay";
  EXPECT_NE(plan["trials"][0]["hyperparameters"]["lr"], plan["trials"][1]["hyperparameters"]["lr"]);
  EXPECT_EQ(check("--count 3 --json").output, json.output) << "the same plan again";

  auto text = check("");
  ASSERT_EQ(text.exit_code, 0) << text.output;
  EXPECT_NE(text.output.find("lr-search: bayesian"), std::string::npos) << text.output;
  EXPECT_NE(text.output.find("lr-search-1"), std::string::npos) << text.output;

  // The example sweep of the training job stays valid.
  auto example = testing::RunProgram(
      {std::string(TENSORFLEET_BINARY), "sweep", "check",
       std::string(TENSORFLEET_SOURCE_DIR) + "/examples/llama-train/sweep.yaml"});
  EXPECT_EQ(example.exit_code, 0) << example.output;
  EXPECT_NE(example.output.find("llama-lr-1  batch_size="), std::string::npos) << example.output;

  const std::string bad = testing::WriteFile(dir.path() / "bad.yaml", "name: s\njob: nope.yaml\n");
  auto refused = testing::RunProgram(
      {"/bin/sh", "-c", std::string(TENSORFLEET_BINARY) + " sweep check " + bad});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.output.find(bad + ":2: job: cannot read the job spec"), std::string::npos)
      << refused.output;
}

}  // namespace
}  // namespace tf::sweeps
