// Sweeps end to end, on each store back end: `tensorfleet sweep start` against a server and a
// worker that run as child processes, trials as real jobs (a shell script that reports its
// objective per step and checkpoints), the server killed with SIGKILL mid-sweep and started
// again on its data. The sweep carries on: every trial runs once (plus one job per asha
// resumption), the suggestions are the ones the seed gives without a restart, and describe and
// best show the outcome. The dollar budget holds against the metered cost of real jobs.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "base/crypto.h"
#include "client/json_client.h"
#include "eventually.h"
#include "pg_test_schema.h"
#include "program_run.h"
#include "server_process.h"
#include "store_test_env.h"

namespace tf::testing {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

// The trial: val_loss falls by step toward a floor that the learning rate sets (best at 10^-2.5),
// one step a second; it resumes from its checkpointed step.
constexpr const char* kTrainScript = R"(#!/bin/sh
ck="$TENSORFLEET_CHECKPOINT_DIR/step"
start=1
if [ -f "$ck" ]; then start=$(( $(cat "$ck") + 1 )); echo "resumed at step $start"; fi
mkdir -p "$TENSORFLEET_CHECKPOINT_DIR"
for step in $(seq "$start" 9); do
  v=$(awk -v lr="$TENSORFLEET_HP_LR" -v s="$step" 'BEGIN { d = log(lr)/log(10) + 2.5; print d*d + 1/s }')
  echo "{\"name\": \"val_loss\", \"value\": $v, \"step\": $step}" >> "$TENSORFLEET_METRICS_FILE"
  echo "$step" > "$ck.tmp" && mv "$ck.tmp" "$ck"
  sleep 1
done
)";

class SweepsE2eTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    TF_SKIP_UNLESS_STORE_REACHABLE(GetParam());
    std::vector<std::string> flags = {"--heartbeat-timeout", "5s"};
    if (GetParam() == "postgresql") {
      schema_ = std::make_unique<PgTestSchema>(TestPostgresUrl(), "sweeps_");
      flags.insert(flags.end(), {"--store", schema_->url()});
    }
    server_ =
        std::make_unique<TensorfleetServer>((dir_.path() / "server").string(), FreePort(), flags);
    ASSERT_TRUE(server_->Start());
    api_ = std::move(client::JsonClient::Create(server_->url(), server_->token())).value();
    fs::create_directories(dir_.path() / "job");
    std::ofstream(dir_.path() / "job" / "train.sh") << kTrainScript;
    std::ofstream(dir_.path() / "job" / "job.yaml")
        << "name: toy\ncode: .\ncommand: [sh, train.sh]\nresources: {cpus: 1}\n"
           "hyperparameters: {lr: 0.01}\n";
  }

  void TearDown() override {
    worker_.Kill(SIGTERM);
    worker_.Wait();
    if (server_) server_->Crash();
  }

  // The worker, offering 2 CPUs at `price` dollars an hour.
  void StartWorker(const std::string& price) {
    ASSERT_TRUE(StartTensorfleetWorker(worker_, server_->url(), server_->token(),
                                       (dir_.path() / "w1").string(), 0,
                                       {"--cpus", "2", "--price", price}));
  }

  // Writes the sweep spec (its name, the toy job, lr searched, val_loss minimized, then
  // `rest`) and returns its path.
  fs::path WriteSweep(const std::string& rest) {
    fs::path spec = dir_.path() / "sweep.yaml";
    std::ofstream(spec) << "name: " << name_
                        << "\n"
                           "job: job/job.yaml\n"
                           "parameters:\n"
                           "  lr: {type: loguniform, low: 1e-4, high: 1e-1}\n"
                           "objective: {metric: val_loss, goal: minimize}\n"
                        << rest;
    return spec;
  }

  ProgramRun Cli(const std::vector<std::string>& args) {
    return RunTensorfleetOn(server_->url(), server_->token(), args);
  }

  // The sweep as describe's --json shows it, or null while the server cannot answer.
  Json Sweep() {
    auto s = api_->Call("GET", "/v1/sweeps/" + name_, nullptr, std::chrono::seconds(10));
    return s.ok() ? *s : Json();
  }

  TempDir dir_;
  std::unique_ptr<PgTestSchema> schema_;
  std::unique_ptr<TensorfleetServer> server_;
  std::unique_ptr<client::JsonClient> api_;
  ChildProcess worker_;
  const std::string name_ = "toy-" + RandomHex(3);
};

TEST_P(SweepsE2eTest, ASweepSurvivesAServerKillRunningEachTrialOnceWithTheSameSuggestions) {
  StartWorker("3.6");
  const fs::path spec = WriteSweep(
      "strategy: random\n"
      "seed: 5\n"
      "max_trials: 6\n"
      "max_parallel: 2\n"
      "early_stopping: {type: asha, resource: step, min_resource: 1, max_resource: 9,"
      " reduction_factor: 3}\n");
  ProgramRun plan = Cli({"sweep", "check", spec.string(), "--count", "6", "--json"});
  ASSERT_EQ(plan.exit_code, 0) << plan.output;
  Json planned = Json::parse(plan.output.substr(plan.output.find('{')));
  ProgramRun started = Cli({"sweep", "start", spec.string()});
  ASSERT_EQ(started.exit_code, 0) << started.output;
  EXPECT_NE(started.output.find("sweep " + name_ + " started"), std::string::npos)
      << started.output;

  // Mid-sweep: two trials have ended (or paused) and more run.
  PollJson([&] { return Sweep(); },
           [](const Json& s) {
             int ended = 0;
             for (const Json& t : s["trials"]) {
               std::string state = t.value("state", "");
               ended += state == "complete" || state == "paused" ? 1 : 0;
             }
             return ended >= 2;
           },
           std::chrono::seconds(120), "two trials ending");
  server_->Crash();
  ASSERT_TRUE(server_->Start());

  Json done = PollJson([&] { return Sweep(); },
                       [](const Json& s) { return s.value("state", "") != "running"; },
                       std::chrono::seconds(240), "the sweep's end");
  ASSERT_EQ(done["state"], "finished") << done.dump(2) << "\nworker:\n" << worker_.output();
  ASSERT_EQ(done["trials"].size(), 6u) << done.dump(2);

  // The suggestions are the seed's, as the plan made them without a server.
  std::map<int, Json> params;
  for (const Json& t : done["trials"]) params[t["number"].get<int>()] = t["params"];
  for (const Json& t : planned["trials"]) {
    int n = std::stoi(t["job"].get<std::string>().substr(name_.size() + 1));
    EXPECT_EQ(params[n], t["params"]) << "trial " << n;
  }

  // Each trial ran as its own jobs, none twice: the project's jobs of the sweep are exactly the
  // trials' jobs, and a trial with a second job was resumed from its checkpoint.
  std::set<std::string> trial_jobs;
  for (const Json& t : done["trials"]) {
    for (const Json& j : t["jobs"]) EXPECT_TRUE(trial_jobs.insert(j.get<std::string>()).second);
    std::string state = t.value("state", "");
    EXPECT_TRUE(state == "complete" || state == "paused") << t.dump(2);
    if (state == "complete") {
      EXPECT_TRUE(t["value"].is_number()) << t.dump(2);
    }
    if (t["jobs"].size() > 1) {
      ProgramRun log = Cli({"logs", t["jobs"][1].get<std::string>()});
      EXPECT_NE(log.output.find("resumed at step"), std::string::npos) << log.output;
    }
  }
  auto jobs = api_->Call("GET", "/v1/jobs?all=true");
  ASSERT_TRUE(jobs.ok()) << jobs.status().ToString();
  std::set<std::string> named;
  for (const Json& j : (*jobs)["jobs"]) {
    if (j.value("name", "").starts_with(name_ + "-")) named.insert(j.value("id", ""));
  }
  EXPECT_EQ(named, trial_jobs);

  // Metered: the worker's machine costs $3.60 an hour.
  EXPECT_GT(done["spent_usd"].get<double>(), 0) << done.dump(2);
  ProgramRun best = Cli({"sweep", "best", name_, "--json"});
  ASSERT_EQ(best.exit_code, 0) << best.output;
  Json b = Json::parse(best.output);
  EXPECT_EQ(b["trial"], done["trials"][0]["number"]) << "describe ranks the best first";
  ProgramRun described = Cli({"sweep", "describe", name_});
  ASSERT_EQ(described.exit_code, 0) << described.output;
  EXPECT_NE(described.output.find("best so far"), std::string::npos) << described.output;
  ProgramRun listed = Cli({"sweep", "ls"});
  EXPECT_NE(listed.output.find(name_), std::string::npos) << listed.output;
}

// The budget is held against what metering says the trials' jobs cost: on a node priced at
// $3,600 an hour, a trial (one of its two CPUs) costs half a dollar a second, and a $6 budget
// is spent within the first trials, after which none starts.
TEST_P(SweepsE2eTest, NoTrialStartsOnceTheMeteredSpendReachesTheBudget) {
  StartWorker("3600");
  const fs::path spec = WriteSweep("max_trials: 20\nmax_parallel: 2\nbudget: 6\n");
  ProgramRun started = Cli({"sweep", "start", spec.string()});
  ASSERT_EQ(started.exit_code, 0) << started.output;
  Json done = PollJson([&] { return Sweep(); },
                       [](const Json& s) { return s.value("state", "") != "running"; },
                       std::chrono::seconds(180), "the sweep's end");
  ASSERT_EQ(done["state"], "finished") << done.dump(2);
  EXPECT_NE(done.value("reason", "").find("reached the budget $6"), std::string::npos)
      << done.dump(2);
  EXPECT_GE(done["spent_usd"].get<double>(), 6.0);
  EXPECT_LT(done["trials"].size(), 20u) << done.dump(2);
  double trial_costs = 0;
  for (const Json& t : done["trials"]) trial_costs += t["cost_usd"].get<double>();
  EXPECT_NEAR(trial_costs, done["spent_usd"].get<double>(), 1e-6);
}

INSTANTIATE_TEST_SUITE_P(Backends, SweepsE2eTest, ::testing::ValuesIn(StoreBackends()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace tf::testing
