// The sweep controller (sweeps/sweep_controller.h) on a real SQLite store, a fake clock and
// fake trial jobs: trials started up to max_parallel and recorded before their jobs, ended by
// their jobs, paused and promoted by asha (resuming from the first job's checkpoints), stopped
// by the median rule, held to the budget, stopped on request; a lost write finds its job again
// instead of running a trial twice; a metric no trial reports fails the sweep.
#include "sweeps/sweep_controller.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "jobs/job_doc.h"
#include "store_test_env.h"
#include "sweeps/sweep_service.h"

namespace tf::sweeps {
namespace {

using testing::TempDir;
using Json = nlohmann::json;

constexpr const char* kProject = "prj_a";

struct FakeJob {
  std::string name;
  std::string checkpoint_of;
  Json hyperparameters;
  std::string state = jobs::kRunning;
  std::string reason;
  std::map<std::string, std::vector<store::MetricPoint>> metrics;
  double cost = 0;
};

class FakeTrialRunner final : public TrialRunner {
 public:
  Result<std::string> Start(const std::string&, const jobs::JobSpec& spec, const std::string&,
                            const std::string& checkpoint_of,
                            const std::vector<std::string>& known) override {
    if (!refuse.empty()) return InvalidArgument(refuse);
    for (const auto& [id, job] : jobs) {
      if (job.name == spec.name && !jobs::IsTerminalJobState(job.state) &&
          std::find(known.begin(), known.end(), id) == known.end()) {
        return id;
      }
    }
    std::string id = "job_" + std::to_string(jobs.size() + 1);
    jobs[id] = FakeJob{spec.name, checkpoint_of, spec.hyperparameters};
    ++submissions;
    return id;
  }
  Result<TrialJobView> Inspect(const std::string&, const std::string& id) override {
    const FakeJob& j = jobs.at(id);
    return TrialJobView{jobs::IsTerminalJobState(j.state), j.state, j.reason};
  }
  Result<std::vector<store::MetricPoint>> Metrics(const std::string&, const std::string& id,
                                                  const std::string& name) override {
    return jobs.at(id).metrics[name];
  }
  Status Stop(const std::string&, const std::string& id, const std::string& reason) override {
    FakeJob& j = jobs.at(id);
    if (jobs::IsTerminalJobState(j.state)) return OkStatus();
    j.state = jobs::kCancelled;
    j.reason = reason;
    return OkStatus();
  }
  Result<std::map<std::string, double>> Costs(const std::string&,
                                              const std::vector<std::string>& ids,
                                              TimeMs) override {
    std::map<std::string, double> out;
    for (const std::string& id : ids) out[id] = jobs.at(id).cost;
    return out;
  }

  void Report(const std::string& id, int64_t step, double value,
              const std::string& name = "val_loss") {
    jobs.at(id).metrics[name].push_back(store::MetricPoint{id, 1, name, step, value, 0});
  }
  void End(const std::string& id, const std::string& state = jobs::kSucceeded) {
    jobs.at(id).state = state;
    jobs.at(id).reason = state == jobs::kFailed ? "exit code 1" : "";
  }

  std::map<std::string, FakeJob> jobs;
  int submissions = 0;
  std::string refuse;  // non-empty: Start refuses with it
};

class SweepControllerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = store::OpenStore((dir_.path() / "store.db").string());
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    store_ = std::move(opened).value();
    service_ = std::make_unique<SweepService>(store_->documents(), clock_, nullptr);
    controller_ = std::make_unique<SweepController>(store_->documents(), runner_, clock_);
  }

  void Start(const std::string& yaml) {
    auto started = service_->Start(kProject, yaml, "sweep.yaml", Json::object(), "");
    ASSERT_TRUE(started.ok()) << started.status().ToString();
  }

  void Tick() {
    clock_.Advance(kSecondMs);
    Status s = controller_->Tick();
    EXPECT_TRUE(s.ok()) << s.ToString();
  }

  SweepView View() {
    auto v = service_->Get(kProject, "lr");
    EXPECT_TRUE(v.ok()) << v.status().ToString();
    return v.ok() ? *v : SweepView{};
  }
  std::vector<std::string> States() {
    std::vector<std::string> out;
    for (const SweepTrial& t : View().doc.trials) out.push_back(t.state);
    return out;
  }
  const std::string& JobOf(int trial) {
    return jobs_of_[trial] = View().doc.trials[trial - 1].jobs.back();
  }

  TempDir dir_;
  FakeClock clock_{1'700'000'000'000};
  std::unique_ptr<store::Store> store_;
  FakeTrialRunner runner_;
  std::unique_ptr<SweepService> service_;
  std::unique_ptr<SweepController> controller_;
  std::map<int, std::string> jobs_of_;
};

std::string Sweep(const std::string& extra, int max_trials = 4, int max_parallel = 2) {
  return "name: lr\n"
         "job: {name: train, command: [python3, train.py], resources: {cpus: 1}}\n"
         "parameters:\n"
         "  lr: {type: loguniform, low: 1e-4, high: 1e-1}\n"
         "objective: {metric: val_loss, goal: minimize}\n"
         "seed: 3\n"
         "max_trials: " +
         std::to_string(max_trials) + "\nmax_parallel: " + std::to_string(max_parallel) + "\n" +
         extra;
}

TEST_F(SweepControllerTest, RunsTrialsAsJobsUpToMaxParallelUntilEveryTrialEnded) {
  Start(Sweep("strategy: random\n"));
  Tick();
  ASSERT_EQ(States(), (std::vector<std::string>{"running", "running"}));
  SweepView v = View();
  EXPECT_EQ(v.record.state, kSweepRunning);
  // Each trial's job is the template named after the sweep with the trial's hyperparameters.
  const FakeJob& first = runner_.jobs.at(JobOf(1));
  EXPECT_EQ(first.name, "lr-1");
  EXPECT_EQ(first.hyperparameters["lr"], v.doc.trials[0].params["lr"]);
  EXPECT_EQ(runner_.jobs.at(JobOf(2)).name, "lr-2");

  runner_.Report(JobOf(1), 1, 0.9);
  runner_.Report(JobOf(1), 2, 0.5);
  // The same metric from a stdout regex has no step: a stream with steps leaves it out.
  runner_.Report(JobOf(1), -1, 9.9);
  runner_.End(JobOf(1));
  Tick();
  v = View();
  EXPECT_EQ(States(), (std::vector<std::string>{"complete", "running", "running"}));
  EXPECT_EQ(v.doc.trials[0].reason, "finished: val_loss 0.5");
  ASSERT_EQ(v.doc.trials[0].reports.size(), 2u);
  EXPECT_EQ(v.doc.trials[0].reports[1].resource, 2);

  runner_.Report(JobOf(2), 1, 0.7);
  runner_.End(JobOf(2), jobs::kFailed);
  runner_.Report(JobOf(3), 1, 0.4);
  runner_.End(JobOf(3));
  Tick();
  EXPECT_EQ(States(), (std::vector<std::string>{"complete", "failed", "complete", "running"}));
  EXPECT_EQ(View().doc.trials[1].reason, "job " + JobOf(2) + " failed: exit code 1");
  runner_.Report(JobOf(4), 1, 0.6);
  runner_.End(JobOf(4));
  Tick();
  v = View();
  EXPECT_EQ(v.record.state, kSweepFinished);
  EXPECT_EQ(v.doc.reason, "all 4 trials ended");
  EXPECT_EQ(runner_.submissions, 4);
  Tick();  // an ended sweep is left alone
  EXPECT_EQ(runner_.submissions, 4);
}

TEST_F(SweepControllerTest, AJobWhoseRecordWasLostIsFoundAgainNotSubmittedTwice) {
  Start(Sweep("strategy: random\n", 2, 1));
  Tick();
  ASSERT_EQ(runner_.submissions, 1);
  // As if the server died after submitting the job and before writing down its id.
  store::DocumentRecord record = *store_->documents().GetDocument(kSweepKind, kProject, "lr");
  SweepDoc doc = *SweepDocFromJson(record.doc_json);
  std::string job = doc.trials[0].jobs[0];
  doc.trials[0].jobs.clear();
  doc.trials[0].state = kTrialStarting;
  record.doc_json = SweepDocToJson(doc).dump();
  ASSERT_TRUE(store_->documents().UpdateDocument(record, record.version).ok());

  SweepController restarted(store_->documents(), runner_, clock_);
  ASSERT_TRUE(restarted.Tick().ok());
  EXPECT_EQ(runner_.submissions, 1);
  EXPECT_EQ(View().doc.trials[0].jobs, std::vector<std::string>{job});
  EXPECT_EQ(States(), std::vector<std::string>{"running"});
}

TEST_F(SweepControllerTest, TheSuggestionsAfterARestartAreTheOnesItWouldHaveMade) {
  // Two sweeps of one spec in two projects: one controller throughout for the first, a new
  // controller at every tick for the second.
  std::string yaml = Sweep("strategy: bayesian\n", 8, 2);
  ASSERT_TRUE(service_->Start("prj_b", yaml, "sweep.yaml", Json::object(), "").ok());
  Start(yaml);
  for (int round = 0; round < 6; ++round) {
    for (auto& [id, job] : runner_.jobs) {
      if (job.state != jobs::kRunning) continue;
      double lr = job.hyperparameters["lr"].get<double>();
      runner_.Report(id, 1, (std::log10(lr) + 2.5) * (std::log10(lr) + 2.5));
      runner_.End(id);
    }
    clock_.Advance(kSecondMs);
    SweepController fresh(store_->documents(), runner_, clock_);
    ASSERT_TRUE(fresh.Tick().ok());
  }
  auto a = service_->Get(kProject, "lr");
  auto b = service_->Get("prj_b", "lr");
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_EQ(a->doc.trials.size(), 8u);
  ASSERT_EQ(b->doc.trials.size(), 8u);
  for (size_t i = 0; i < 8; ++i) EXPECT_EQ(a->doc.trials[i].params, b->doc.trials[i].params) << i;
}

TEST_F(SweepControllerTest, AshaPausesAtARungAndAPromotedTrialResumesFromItsCheckpoints) {
  Start(
      Sweep("strategy: random\n"
            "early_stopping: {type: asha, resource: step, min_resource: 1, max_resource: 9,"
            " reduction_factor: 3}\n",
            6, 6));
  Tick();
  ASSERT_EQ(States().size(), 6u);
  // Trial 1 reaches rung 1 first and best so far: it goes on. Trial 2 is worse: paused.
  runner_.Report(JobOf(1), 1, 0.5);
  Tick();
  runner_.Report(JobOf(2), 1, 0.9);
  Tick();
  SweepView v = View();
  EXPECT_EQ(States(), (std::vector<std::string>{"running", "paused", "running", "running",
                                                "running", "running"}));
  EXPECT_EQ(runner_.jobs.at(JobOf(2)).state, jobs::kCancelled);
  EXPECT_TRUE(runner_.jobs.at(JobOf(2)).reason.starts_with(kPausedBy));
  EXPECT_FALSE(v.doc.trials[1].reason.empty());

  // Four worse values at rung 1 put trial 2 back among the best third (2 of 6): it resumes, as
  // a job that restores the first job's checkpoints, once its paused job has ended.
  std::string paused_job = JobOf(2);
  for (int t = 3; t <= 6; ++t) runner_.Report(JobOf(t), 1, 1.5 + t / 10.0);
  Tick();
  runner_.End(JobOf(1));
  Tick();
  v = View();
  ASSERT_EQ(v.doc.trials[1].jobs.size(), 2u) << v.doc.trials[1].reason;
  EXPECT_EQ(v.doc.trials[1].state, kTrialRunning);
  EXPECT_EQ(runner_.jobs.at(v.doc.trials[1].jobs[1]).checkpoint_of, paused_job);
  EXPECT_EQ(runner_.jobs.at(v.doc.trials[1].jobs[1]).name, "lr-2");
  EXPECT_EQ(v.doc.trials[1].reason, "promoted at step 1: now among the best 1/3 there");
  // The resumed job's reports join the first job's.
  runner_.Report(v.doc.trials[1].jobs[1], 9, 0.2);
  runner_.End(v.doc.trials[1].jobs[1]);
  Tick();
  v = View();
  ASSERT_EQ(v.doc.trials[1].reports.size(), 2u);
  EXPECT_EQ(v.doc.trials[1].state, kTrialComplete);
  EXPECT_EQ(v.record.state, kSweepFinished);
}

TEST_F(SweepControllerTest, RungsThatATrialPassedBetweenTwoTicksAreJudged) {
  Start(
      Sweep("strategy: random\n"
            "early_stopping: {type: asha, resource: step, min_resource: 1, max_resource: 9,"
            " reduction_factor: 3}\n",
            2, 2));
  Tick();
  runner_.Report(JobOf(1), 1, 0.5);
  Tick();
  // Trial 2's metrics arrive in one batch, past rung 1 (step 1) and rung 2 (step 3): it is
  // judged at step 1, where it was worse, and paused there.
  for (int step = 1; step <= 4; ++step) runner_.Report(JobOf(2), step, 1.0 - step / 10.0);
  Tick();
  SweepView v = View();
  EXPECT_EQ(v.doc.trials[1].state, kTrialPaused);
  EXPECT_EQ(v.doc.trials[1].rung, 0);
  EXPECT_TRUE(v.doc.trials[1].reason.starts_with("step 1 (rung 1 of 2): 0.9 is 2nd of 2"))
      << v.doc.trials[1].reason;
  EXPECT_EQ(v.doc.trials[0].rung, 0);
}

TEST_F(SweepControllerTest, TheMedianRuleStopsATrialForGood) {
  Start(
      Sweep("strategy: random\n"
            "early_stopping: {type: median, resource: step, min_resource: 2, max_resource: 9,"
            " min_trials: 2}\n",
            3, 3));
  Tick();
  for (int t = 1; t <= 2; ++t) {
    runner_.Report(JobOf(t), 1, 0.5);
    runner_.Report(JobOf(t), 2, 0.4);
  }
  Tick();
  runner_.Report(JobOf(3), 1, 0.9);
  runner_.Report(JobOf(3), 2, 0.8);
  Tick();
  EXPECT_EQ(States(), (std::vector<std::string>{"running", "running", "stopped"}));
  EXPECT_TRUE(runner_.jobs.at(JobOf(3)).reason.starts_with(kStoppedBy));
}

TEST_F(SweepControllerTest, NoNewTrialOnceTheSpendReachesTheBudget) {
  Start(Sweep("strategy: random\nbudget: 1.5\n", 10, 1));
  Tick();
  runner_.jobs.at(JobOf(1)).cost = 1.0;
  runner_.Report(JobOf(1), 1, 0.5);
  runner_.End(JobOf(1));
  Tick();
  EXPECT_EQ(States().size(), 2u);
  runner_.jobs.at(JobOf(2)).cost = 0.75;
  runner_.Report(JobOf(2), 1, 0.5);
  runner_.End(JobOf(2));
  Tick();
  SweepView v = View();
  EXPECT_EQ(States().size(), 2u);
  EXPECT_DOUBLE_EQ(v.doc.spent, 1.75);
  EXPECT_DOUBLE_EQ(v.doc.trials[1].cost, 0.75);
  EXPECT_EQ(v.record.state, kSweepFinished);
  EXPECT_EQ(v.doc.reason, "its spend $1.75 reached the budget $1.5");
}

TEST_F(SweepControllerTest, AStoppedSweepStopsItsTrials) {
  Start(Sweep("strategy: random\n"));
  Tick();
  auto stopping = service_->Stop(kProject, "lr");
  ASSERT_TRUE(stopping.ok()) << stopping.status().ToString();
  EXPECT_EQ(stopping->record.state, kSweepStopping);
  Tick();
  SweepView v = View();
  EXPECT_EQ(v.record.state, kSweepStopped);
  EXPECT_EQ(States(), (std::vector<std::string>{"stopped", "stopped"}));
  EXPECT_EQ(runner_.jobs.at(JobOf(1)).state, jobs::kCancelled);
  EXPECT_EQ(service_->Stop(kProject, "lr").status().code(), StatusCode::kFailedPrecondition);
}

TEST_F(SweepControllerTest, AMetricNoTrialReportsFailsTheSweepSayingSo) {
  Start(Sweep("strategy: random\n", 6, 3));
  Tick();
  for (int t = 1; t <= 3; ++t) {
    runner_.Report(JobOf(t), 1, 0.5, "loss");
    runner_.End(JobOf(t));
  }
  Tick();
  SweepView v = View();
  EXPECT_EQ(v.record.state, kSweepFailed);
  EXPECT_NE(v.doc.reason.find("no trial reported the metric 'val_loss' (3 finished)"),
            std::string::npos)
      << v.doc.reason;
  EXPECT_EQ(runner_.submissions, 3);
}

TEST_F(SweepControllerTest, ARefusedJobFailsItsTrialAndTheSweepWithTheReason) {
  Start(Sweep("strategy: random\n", 6, 1));
  Tick();
  runner_.Report(JobOf(1), 1, 0.5);
  runner_.End(JobOf(1));
  // The project's budget now refuses submissions: every trial's job would be refused.
  runner_.refuse = "budget 'team' is exhausted";
  Tick();
  SweepView v = View();
  ASSERT_EQ(v.doc.trials.size(), 2u);
  EXPECT_EQ(v.doc.trials[0].state, kTrialComplete);
  EXPECT_EQ(v.doc.trials[1].state, kTrialFailed);
  EXPECT_EQ(v.doc.trials[1].reason, "its job was refused: budget 'team' is exhausted");
  EXPECT_EQ(v.record.state, kSweepFailed);
  EXPECT_EQ(v.doc.reason,
            "trial 2's job was refused (every trial's would be): budget 'team' is exhausted");
  Tick();
  EXPECT_EQ(View().doc.trials.size(), 2u);
}

TEST(SweepServiceTest, ABadSpecOrARepeatedNameIsRefusedWithTheReason) {
  TempDir dir;
  auto store = store::OpenStore((dir.path() / "store.db").string());
  ASSERT_TRUE(store.ok());
  FakeClock clock;
  SweepService service((*store)->documents(), clock,
                       [](const jobs::JobSpec&, const std::string& source) {
                         return InvalidArgument(source + ": needs 8 GPUs on one node");
                       });
  Status refused =
      service.Start(kProject, Sweep("strategy: random\n"), "sweep.yaml", Json::object(), "")
          .status();
  EXPECT_EQ(refused.message(),
            "sweep.yaml: job: a trial cannot be placed: needs 8 GPUs on one node");
  Status bad =
      service.Start(kProject, "name: lr\njob: train.yaml\n", "sweep.yaml", Json::object(), "")
          .status();
  EXPECT_EQ(bad.code(), StatusCode::kInvalidArgument) << bad.ToString();

  SweepService lenient((*store)->documents(), clock, nullptr);
  ASSERT_TRUE(
      lenient.Start(kProject, Sweep("strategy: random\n"), "s.yaml", Json::object(), "").ok());
  Status again =
      lenient.Start(kProject, Sweep("strategy: random\n"), "s.yaml", Json::object(), "").status();
  EXPECT_EQ(again.code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(again.message(), "sweep 'lr' exists (running): give this one another name");
}

}  // namespace
}  // namespace tf::sweeps
