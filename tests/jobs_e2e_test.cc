// Managed jobs end to end: a real server, real workers, real processes. Each job here is a
// small shell script; the PyTorch example has tests of its own (example_training_test.cc).
#include <atomic>
#include <csignal>
#include <cstdlib>
#include <mutex>

#include "base/sha256_stream.h"
#include "client/object_client.h"
#include "eventually.h"
#include "file_test_util.h"
#include "http_test_util.h"  // first: see the note in base/async.h
#include "jobs/job_doc.h"
#include "jobs_test_util.h"
#include "program_run.h"
#include "worker/code_bundle.h"

namespace tf::testing {
namespace {

int RankExit(const Json& job, int attempt, int rank = 0) {
  return job["attempts"][attempt - 1]["ranks"][rank].value("exit_code", -1);
}

using JobsE2eTest = JobsFixture;

TEST_F(JobsE2eTest, AJobRunsWithTheEnvironmentContractAndSucceeds) {
  // What the worker was started with (here: this process's environment, the worker being in
  // it) does not reach the job: only PATH, HOME and LANG do.
  ASSERT_EQ(setenv("TF_TEST_WORKER_SECRET", "the-workers-own", 1), 0);
  StartWorker("w1", 2);
  auto job = Submit(
      "name: env-check\n"
      "command: env | grep -E '^(TENSORFLEET_|CUDA_VISIBLE|RANK|WORLD_SIZE|MASTER_)' | sort > "
      "\"$TENSORFLEET_OUTPUT_DIR/env.txt\"; env > \"$TENSORFLEET_OUTPUT_DIR/all.txt\"; "
      "echo hello from the job; echo 'loss=0.25'\n"
      "resources: {gpus: 1}\n"
      "hyperparameters: {lr: 0.001, layers: 4, name: tiny}\n"
      "env: {GREETING: hi}\n"
      "metrics: [{name: loss, regex: \"loss=([0-9.]+)\"}]\n");
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  std::string id = (*job)["id"];
  EXPECT_EQ((*job)["state"], "queued");
  Json done = WaitFor(id, Finished);
  ASSERT_EQ(done["state"], "succeeded") << done.dump(2);
  EXPECT_EQ(done["exit_code"], 0);
  EXPECT_EQ(EventKinds(id),
            (std::vector<std::string>{"queued", "starting", "running", "succeeded"}));

  auto env = RawGet("/v1/buckets/tensorfleet-jobs/objects/" + id + "/output/env.txt");
  ASSERT_TRUE(env.has_value());
  EXPECT_NE(env->find("TENSORFLEET_JOB_ID=" + id), std::string::npos) << *env;
  EXPECT_NE(env->find("TENSORFLEET_ATTEMPT=1"), std::string::npos);
  EXPECT_NE(env->find("TENSORFLEET_NODE_RANK=0"), std::string::npos);
  EXPECT_NE(env->find("TENSORFLEET_NUM_NODES=1"), std::string::npos);
  EXPECT_NE(env->find("TENSORFLEET_HP_LR=0.001"), std::string::npos);
  EXPECT_NE(env->find("TENSORFLEET_HP_NAME=tiny"), std::string::npos);
  EXPECT_NE(env->find("CUDA_VISIBLE_DEVICES=0\n"), std::string::npos);
  EXPECT_NE(env->find("WORLD_SIZE=1"), std::string::npos);
  EXPECT_NE(env->find("TENSORFLEET_MASTER_ADDR=127.0.0.1"), std::string::npos);
  EXPECT_NE(env->find("TENSORFLEET_TOKEN="), std::string::npos);
  auto all = RawGet("/v1/buckets/tensorfleet-jobs/objects/" + id + "/output/all.txt");
  unsetenv("TF_TEST_WORKER_SECRET");
  ASSERT_TRUE(all.has_value());
  EXPECT_EQ(all->find("the-workers-own"), std::string::npos) << *all;
  EXPECT_NE(all->find("GREETING=hi\n"), std::string::npos) << *all;
  EXPECT_NE(all->find("PATH="), std::string::npos) << *all;

  std::string log = Log(id, 1);
  EXPECT_NE(log.find("hello from the job"), std::string::npos) << log;
  EXPECT_NE(log.find("[tensorfleet] no checkpoint yet"), std::string::npos) << log;

  auto metrics = api_->Call("GET", "/v1/jobs/" + id + "/metrics");
  ASSERT_TRUE(metrics.ok());
  ASSERT_EQ((*metrics)["metrics"].size(), 1u) << metrics->dump();
  EXPECT_EQ((*metrics)["metrics"][0]["name"], "loss");
  EXPECT_EQ((*metrics)["metrics"][0]["value"], 0.25);
}

// A finished rank's directory (work, output, logs) leaves the worker's disk once its outcome
// is reported, its output and logs being uploaded; a worker told to keep them keeps them.
TEST_F(JobsE2eTest, AFinishedRanksDirectoryIsRemovedUnlessTheWorkerKeepsThem) {
  auto run_one = [&](const std::string& worker_name, bool keep) -> std::filesystem::path {
    worker::WorkerOptions o = WorkerOptionsFor(worker_name);
    o.keep_attempt_dirs = keep;
    o.labels = {{"name", worker_name}};
    auto w = worker::Worker::Start(o);
    EXPECT_TRUE(w.ok()) << w.status().ToString();
    if (!w.ok()) return {};
    workers_.push_back(std::move(w).value());
    auto job = Submit(
        "name: leaves-nothing\ncommand: echo done > $TENSORFLEET_OUTPUT_DIR/out.txt\n"
        "node_selector: {name: " +
        worker_name + "}\n");
    EXPECT_TRUE(job.ok()) << job.status().ToString();
    if (!job.ok()) return {};
    const std::string id = (*job)["id"];
    Json done = WaitFor(id, Finished);
    EXPECT_EQ(done["state"], "succeeded") << done.dump(2);
    EXPECT_EQ(RawGet("/v1/buckets/tensorfleet-jobs/objects/" + id + "/output/out.txt"), "done\n");
    EXPECT_NE(Log(id, 1).find("rank succeeded"), std::string::npos) << Log(id, 1);
    return dir_.path() / worker_name / "attempts" / (id + "-1-0");
  };
  const std::filesystem::path removed = run_one("w1", /*keep=*/false);
  EXPECT_TRUE(Eventually([&] { return !std::filesystem::exists(removed); }))
      << removed << " is still there";
  const std::filesystem::path kept = run_one("w2", /*keep=*/true);
  workers_.back()->Shutdown(std::chrono::seconds(5));  // its rank runner is done with the dir
  EXPECT_TRUE(std::filesystem::exists(kept / "logs" / "rank-0.log")) << kept;
  EXPECT_TRUE(std::filesystem::exists(kept / "output" / "out.txt")) << kept;
}

TEST_F(JobsE2eTest, AWorkerJoinsWithAOneUseJoinTokenAndComesBackOnItsOwnCredential) {
  auto made = api_->Call("POST", "/v1/join-tokens", Json{{"name", "w-join"}, {"max_uses", 1}});
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  std::string join = (*made)["secret"];
  worker::WorkerOptions o = WorkerOptionsFor("w-join");
  o.token = join;
  auto first = worker::Worker::Start(o);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  std::string node = (*first)->node_id();
  auto job = Submit("name: joined\ncommand: echo ran\nresources: {gpus: 1}\n");
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  EXPECT_EQ(WaitFor((*job)["id"], Finished)["state"], "succeeded");

  // The worker keeps its node's credential, readable by it alone; not the join token.
  std::filesystem::path kept = o.data_dir / "node-credential";
  std::string credential = ReadFile(kept);
  EXPECT_EQ(credential.substr(0, 4), "tfn_") << credential;
  EXPECT_EQ(std::filesystem::status(kept).permissions(),
            std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  (*first)->Shutdown(std::chrono::seconds(2));
  first->reset();

  // The join token is spent; the same worker registers again with its credential.
  auto second = worker::Worker::Start(o);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ((*second)->node_id(), node);
  workers_.push_back(std::move(second).value());
  auto again = Submit("name: joined-again\ncommand: echo ran\nresources: {gpus: 1}\n");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(WaitFor((*again)["id"], Finished)["state"], "succeeded");

  // A fresh worker cannot reuse the spent token.
  worker::WorkerOptions other = WorkerOptionsFor("w-other");
  other.token = join;
  auto refused = worker::Worker::Start(other);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kUnauthenticated);
  EXPECT_NE(refused.status().message().find("used up"), std::string::npos)
      << refused.status().ToString();
}

TEST_F(JobsE2eTest, AFailingCommandIsRetriedOnlyAsItsPolicySaysThenFailsWithItsExitCode) {
  StartWorker("w1");
  auto job = Submit(
      "name: broken\n"
      "command: echo \"about to fail on attempt $TENSORFLEET_ATTEMPT\"; exit 3\n"
      "retry: {on: [error], max_attempts: 2, backoff: 100ms}\n");
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  std::string id = (*job)["id"];
  Json done = WaitFor(id, Finished);
  ASSERT_EQ(done["state"], "failed") << done.dump(2);
  ASSERT_EQ(done["attempts"].size(), 2u);
  EXPECT_EQ(done["exit_code"], 3);
  EXPECT_EQ(RankExit(done, 1), 3);
  EXPECT_EQ(RankExit(done, 2), 3);
  std::string tail = done["attempts"][1]["ranks"][0].value("log_tail", "");
  EXPECT_NE(tail.find("about to fail on attempt 2"), std::string::npos) << tail;
  auto kinds = EventKinds(id);
  EXPECT_EQ(std::count(kinds.begin(), kinds.end(), "retrying"), 1);

  // Without `error` in the policy there is no second attempt.
  auto once = Submit("name: broken-once\ncommand: exit 1\n");
  ASSERT_TRUE(once.ok());
  Json failed = WaitFor((*once)["id"], Finished);
  EXPECT_EQ(failed["state"], "failed");
  EXPECT_EQ(failed["attempts"].size(), 1u);
}

// A pure-Python wheel, written as pip expects one: tfhello 1.0, whose module says hello.
constexpr const char* kMakeWheel = R"(
import sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w") as whl:
    whl.writestr("tfhello.py", "GREETING = 'hello from a wheel'\n")
    whl.writestr("tfhello-1.0.dist-info/METADATA",
                 "Metadata-Version: 2.1\nName: tfhello\nVersion: 1.0\n")
    whl.writestr("tfhello-1.0.dist-info/WHEEL",
                 "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
    whl.writestr("tfhello-1.0.dist-info/RECORD",
                 "tfhello.py,,\ntfhello-1.0.dist-info/METADATA,,\n"
                 "tfhello-1.0.dist-info/WHEEL,,\ntfhello-1.0.dist-info/RECORD,,\n")
)";

// setup: and python: (worker/setup_step.h). The first attempt makes a venv, installs a wheel
// from the job's code into it with no package index, and runs the spec's setup; the job's
// second attempt on the same node finds all of it done. A setup command that fails ends the
// rank, saying which.
TEST_F(JobsE2eTest, SetupMakesAVenvFromTheCodesWheelsOnceForTheJobsAttemptsOnANode) {
  StartWorker("w1");
  const std::filesystem::path code = dir_.path() / "code";
  std::filesystem::create_directories(code / "wheels");
  WriteFile(dir_.path() / "make_wheel.py", kMakeWheel);
  ASSERT_EQ(std::system(("/usr/bin/python3 " + (dir_.path() / "make_wheel.py").string() + " " +
                         (code / "wheels/tfhello-1.0-py3-none-any.whl").string())
                            .c_str()),
            0);
  WriteFile(code / "requirements.txt", "tfhello==1.0\n");
  const std::filesystem::path bundle = dir_.path() / "code.tar.gz";
  ASSERT_TRUE(worker::Pack(code, bundle).ok());
  auto sha = Sha256OfFile(bundle);
  ASSERT_TRUE(sha.ok()) << sha.status().ToString();
  const std::string key = "bundles/" + *sha + ".tar.gz";
  ASSERT_TRUE(api_->Call("POST", "/v1/buckets", Json{{"name", jobs::kJobsBucket}}).ok());
  auto objects = client::MakeHttpObjectClient(app_->url(), admin_token_);
  ASSERT_TRUE(objects.ok()) << objects.status().ToString();
  Status put = (*objects)->PutFileChecked(jobs::kJobsBucket, key, bundle, *sha);
  ASSERT_TRUE(put.ok()) << put.ToString();

  auto job = Submit(
      "name: with-setup\n"
      "python: {venv: true, requirements: requirements.txt, wheels: wheels}\n"
      "setup: echo ran >> \"$TENSORFLEET_SETUP_DIR/setup-runs\"\n"
      "command: |\n"
      "  python -c 'import tfhello, numpy; print(tfhello.GREETING, numpy.__name__)'\n"
      "  echo \"setup runs: $(wc -l < \"$TENSORFLEET_SETUP_DIR/setup-runs\")\"\n"
      "  test \"$TENSORFLEET_ATTEMPT\" = 2\n"
      "retry: {on: [error], max_attempts: 2, backoff: 100ms}\n",
      key);
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  std::string id = (*job)["id"];
  Json done = WaitFor(id, Finished);
  ASSERT_EQ(done["state"], "succeeded") << done.dump(2) << Log(id, 1);
  ASSERT_EQ(done["attempts"].size(), 2u);
  const std::string first = Log(id, 1), second = Log(id, 2);
  for (const char* line :
       {"setup 1/3: python3 -m venv --system-site-packages", "setup 2/3: python -m pip install",
        "Successfully installed tfhello-1.0", "setup 3/3: echo ran", "setup: done in",
        "hello from a wheel numpy", "setup runs: 1"}) {
    EXPECT_NE(first.find(line), std::string::npos) << line << " in:\n" << first;
  }
  for (const char* line :
       {"setup: done before on this node", "hello from a wheel numpy", "setup runs: 1"}) {
    EXPECT_NE(second.find(line), std::string::npos) << line << " in:\n" << second;
  }
  EXPECT_EQ(second.find("setup 1/3"), std::string::npos) << second;

  auto broken = Submit(
      "name: broken-setup\nsetup: [echo fine, 'echo no deps >&2; exit 7']\n"
      "command: echo never\n");
  ASSERT_TRUE(broken.ok()) << broken.status().ToString();
  std::string broken_id = (*broken)["id"];
  Json failed = WaitFor(broken_id, Finished);
  ASSERT_EQ(failed["state"], "failed") << failed.dump(2);
  EXPECT_EQ(failed["exit_code"], 7);
  std::string reason = failed["attempts"][0].value("reason", "");
  EXPECT_NE(reason.find("setup 2/2 failed (exit code 7): echo no deps >&2; exit 7"),
            std::string::npos)
      << failed.dump(2);
  const std::string log = Log(broken_id, 1);
  EXPECT_NE(log.find("no deps"), std::string::npos) << log;
  EXPECT_EQ(log.find("never"), std::string::npos) << log;
}

TEST_F(JobsE2eTest, BadSpecsAreRefusedAtSubmitNamingTheField) {
  StartWorker("w1", 2);
  auto unknown = Submit("name: x\ncommand: true\ncheckpointing: {}\n");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(unknown.status().message().find("test.yaml:3"), std::string::npos)
      << unknown.status().message();
  EXPECT_NE(unknown.status().message().find("checkpointing"), std::string::npos);

  auto too_big = Submit("name: x\ncommand: true\nresources: {gpus: 8}\n");
  ASSERT_FALSE(too_big.ok());
  EXPECT_NE(too_big.status().message().find("resources.gpus"), std::string::npos)
      << too_big.status().message();

  auto bad_value = Submit("name: x\ncommand: true\nnodes: lots\n");
  ASSERT_FALSE(bad_value.ok());
  EXPECT_NE(bad_value.status().message().find("nodes"), std::string::npos);

  auto jobs = api_->Call("GET", "/v1/jobs?all=true");
  ASSERT_TRUE(jobs.ok());
  EXPECT_TRUE((*jobs)["jobs"].empty()) << "a refused spec left a job behind";
}

TEST_F(JobsE2eTest, DrainInterruptsTheJobWhichResumesElsewhereFromItsCheckpoint) {
  std::string w1 = StartWorker("w1");
  auto job = Submit(CountingJob("counter", 60));
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  std::string id = (*job)["id"];
  // Let it run past a few steps and a checkpoint sync, then drain its node.
  WaitFor(id, [&](const Json&) { return Log(id, 1).find("step=25 ") != std::string::npos; });
  std::string w2 = StartWorker("w2");
  auto drained = api_->Call("POST", "/v1/nodes/" + w1 + "/drain",
                            Json{{"deadline_ms", 5000}, {"reason", "spot interruption notice"}});
  ASSERT_TRUE(drained.ok()) << drained.status().ToString();

  Json done = WaitFor(id, Finished);
  ASSERT_EQ(done["state"], "succeeded") << done.dump(2);
  ASSERT_EQ(done["attempts"].size(), 2u);
  EXPECT_EQ(done["attempts"][0]["state"], "interrupted");
  EXPECT_EQ(done["attempts"][0]["ranks"][0]["node"], w1);
  EXPECT_EQ(done["attempts"][1]["ranks"][0]["node"], w2);
  EXPECT_EQ(done["recoveries"], 1);
  auto kinds = EventKinds(id);
  EXPECT_NE(std::find(kinds.begin(), kinds.end(), "interrupted"), kinds.end());

  // The first attempt saved its step on SIGTERM; the second started from exactly there.
  std::string first = Log(id, 1), second = Log(id, 2);
  size_t saved_at = first.find("saved at ");
  ASSERT_NE(saved_at, std::string::npos) << first;
  int saved = std::stoi(first.substr(saved_at + 9));
  EXPECT_GE(saved, 25);
  EXPECT_NE(second.find("restored checkpoint"), std::string::npos) << second;
  EXPECT_NE(second.find("start at step " + std::to_string(saved) + " "), std::string::npos)
      << second;
  EXPECT_EQ(second.find("step=1 "), std::string::npos) << "the second attempt started over";
  auto result = RawGet("/v1/buckets/tensorfleet-jobs/objects/" + id + "/output/result.txt");
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(*result, "done at step 60\n");
}

// EC2's instance metadata as a worker on a spot instance sees it: 404 at the spot notice path
// until the instance is marked for interruption, then 200 with the action and its time.
class InstanceMetadata {
 public:
  static constexpr const char* kNoticePath = "/latest/meta-data/spot/instance-action";

  InstanceMetadata() {
    auto server = http::Server::Start(
        io_.io(), {},
        [this](http::Request& r) -> awaitable<http::Response> { co_return Answer(r); });
    EXPECT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(server).value();
  }
  ~InstanceMetadata() {
    io_.Await([&] { return server_->Shutdown(std::chrono::milliseconds(0)); });
    io_.Stop();
  }

  std::string notice_url() const {
    return "http://127.0.0.1:" + std::to_string(server_->port()) + kNoticePath;
  }
  void Interrupt() { interrupted_ = true; }
  int polls() {
    std::lock_guard lock(mu_);
    return polls_;
  }

 private:
  http::Response Answer(http::Request& r) {
    http::Response out;
    out.content_type = "text/plain";
    if (r.target != kNoticePath) {
      out.status = 404;
      return out;
    }
    {
      std::lock_guard lock(mu_);
      ++polls_;
    }
    if (!interrupted_) {
      out.status = 404;
      out.body = "Not Found";
      return out;
    }
    out.content_type = "application/json";
    out.body = R"({"action": "terminate", "time": "2026-11-30T12:00:00Z"})";
    return out;
  }

  http::testing::IoThread io_;
  std::unique_ptr<http::Server> server_;
  std::atomic<bool> interrupted_{false};
  std::mutex mu_;
  int polls_ = 0;  // guarded by mu_
};

TEST_F(JobsE2eTest, ASpotNoticeDrainsTheWorkerAndTheJobResumesElsewhere) {
  InstanceMetadata metadata;
  worker::WorkerOptions spot = WorkerOptionsFor("spot-1");
  spot.spot = true;
  spot.spot_notice_url = metadata.notice_url();
  spot.spot_notice_interval = std::chrono::milliseconds(100);
  spot.spot_notice_deadline = std::chrono::milliseconds(5000);
  auto started = worker::Worker::Start(spot);
  ASSERT_TRUE(started.ok()) << started.status().ToString();
  std::string w1 = (*started)->node_id();
  workers_.push_back(std::move(started).value());

  auto job = Submit(CountingJob("counter", 60));
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  std::string id = (*job)["id"];
  WaitFor(id, [&](const Json&) { return Log(id, 1).find("step=25 ") != std::string::npos; });
  EXPECT_GT(metadata.polls(), 0) << "the worker never asked for a spot notice";
  EXPECT_EQ(GetJob(id)["attempts"].size(), 1u) << "no notice yet, so nothing was interrupted";
  std::string w2 = StartWorker("on-demand-1");
  metadata.Interrupt();

  Json done = WaitFor(id, Finished);
  ASSERT_EQ(done["state"], "succeeded") << done.dump(2);
  ASSERT_EQ(done["attempts"].size(), 2u) << done.dump(2);
  EXPECT_EQ(done["attempts"][0]["state"], "interrupted");
  EXPECT_EQ(done["attempts"][0]["ranks"][0]["node"], w1);
  EXPECT_EQ(done["attempts"][1]["ranks"][0]["node"], w2);
  EXPECT_EQ(done["recoveries"], 1);
  std::string second = Log(id, 2);
  EXPECT_NE(second.find("restored checkpoint"), std::string::npos) << second;
  EXPECT_EQ(second.find("step=1 "), std::string::npos) << "the second attempt started over";

  auto nodes = api_->Call("GET", "/v1/nodes");
  ASSERT_TRUE(nodes.ok()) << nodes.status().ToString();
  std::string w1_state;
  for (const Json& n : (*nodes)["nodes"]) {
    if (n["id"] == w1) w1_state = n["state"];
  }
  EXPECT_EQ(w1_state, "draining") << nodes->dump(2);
}

TEST_F(JobsE2eTest, AnUndrainedNodeTakesWorkAgainAndALostOneCanBeRemoved) {
  std::string w1 = StartWorker("w1");
  ASSERT_TRUE(api_->Call("POST", "/v1/nodes/" + w1 + "/drain", Json{{"deadline_ms", 0}}).ok());
  auto job = Submit("name: after-undrain\ncommand: echo ran\n");
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  std::string id = (*job)["id"];
  Json waiting = WaitFor(id, [](const Json& j) { return !j.value("waiting_reason", "").empty(); });
  EXPECT_EQ(waiting["state"], "queued") << "placed on a draining node";
  auto live = api_->Call("DELETE", "/v1/nodes/" + w1);
  ASSERT_FALSE(live.ok());
  EXPECT_EQ(live.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(live.status().message().find("is draining, not lost: only a lost node can be removed"),
            std::string::npos)
      << live.status().message();

  ASSERT_TRUE(api_->Call("POST", "/v1/nodes/" + w1 + "/undrain", Json::object()).ok());
  Json done = WaitFor(id, Finished);
  EXPECT_EQ(done["state"], "succeeded") << done.dump(2);
  EXPECT_EQ(done["attempts"][0]["ranks"][0]["node"], w1);
  auto twice = api_->Call("POST", "/v1/nodes/" + w1 + "/undrain", Json::object());
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.status().message().find("is ready, not draining"), std::string::npos)
      << twice.status().message();

  // Its worker stops: once lost, the node can be removed, and is gone from the list.
  workers_.front()->Shutdown(std::chrono::seconds(2));
  workers_.front()->Wait();
  auto node_state = [&] {
    auto nodes = api_->Call("GET", "/v1/nodes");
    if (!nodes.ok()) return std::string("?");
    for (const Json& n : (*nodes)["nodes"]) {
      if (n["id"] == w1) return n["state"].get<std::string>();
    }
    return std::string("gone");
  };
  ASSERT_TRUE(Eventually([&] { return node_state() == "lost"; }, std::chrono::seconds(30)));
  ASSERT_TRUE(api_->Call("DELETE", "/v1/nodes/" + w1).ok());
  EXPECT_EQ(node_state(), "gone");
  EXPECT_EQ(api_->Call("DELETE", "/v1/nodes/" + w1).status().code(), StatusCode::kNotFound);
}

TEST_F(JobsE2eTest, AProcessThatIgnoresSigtermIsKilledAtTheDeadline) {
  std::string w1 = StartWorker("w1");
  auto job = Submit(
      "name: stubborn\n"
      "command: trap 'echo ignoring TERM' TERM; echo started; while true; do sleep 0.05; done\n"
      "retry: {on: [], max_attempts: 1}\n");
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  std::string id = (*job)["id"];
  WaitForState(id, "running");
  WaitFor(id, [&](const Json&) { return Log(id, 1).find("started") != std::string::npos; });
  ASSERT_TRUE(api_->Call("POST", "/v1/nodes/" + w1 + "/drain", Json{{"deadline_ms", 700}}).ok());
  Json done = WaitFor(id, Finished);
  EXPECT_EQ(done["state"], "failed") << done.dump(2);  // interrupted, and the policy says no retry
  EXPECT_EQ(done["attempts"][0]["state"], "interrupted");
  EXPECT_EQ(done["attempts"][0]["ranks"][0].value("signal", 0), SIGKILL) << done.dump(2);
  EXPECT_NE(Log(id, 1).find("ignoring TERM"), std::string::npos);
}

// A service that prints when SIGTERM reaches it, on a node of its own that is drained with
// `deadline_ms`: how many milliseconds after the drain began TERM came (-1 if it never did).
// The job must end stopped by that TERM, not killed.
class ServiceDrainTest : public JobsE2eTest {
 protected:
  int64_t TermAfterDrain(const std::string& drain_grace, int64_t deadline_ms) {
    std::string node = StartWorker("w1");
    auto job = Submit(
        "name: service\n"
        "command: trap 'echo \"TERM at $(date +%s%3N)\"; exit 0' TERM; echo started; "
        "while true; do sleep 0.05; done\n"
        "drain_grace: " +
        drain_grace + "\nretry: {on: [], max_attempts: 1}\n");
    EXPECT_TRUE(job.ok()) << job.status().ToString();
    if (!job.ok()) return -1;
    std::string id = (*job)["id"];
    WaitForState(id, "running");
    WaitFor(id, [&](const Json&) { return Log(id, 1).find("started") != std::string::npos; });
    const int64_t drained_at = std::chrono::duration_cast<std::chrono::milliseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count();
    EXPECT_TRUE(
        api_->Call("POST", "/v1/nodes/" + node + "/drain", Json{{"deadline_ms", deadline_ms}})
            .ok());
    Json done = WaitFor(id, Finished);
    EXPECT_EQ(done["attempts"][0]["state"], "interrupted") << done.dump(2);
    EXPECT_EQ(done["attempts"][0]["ranks"][0].value("signal", 0), 0) << "stopped by TERM in time";
    std::string log = Log(id, 1);
    size_t at = log.find("TERM at ");
    EXPECT_NE(at, std::string::npos) << log;
    return at == std::string::npos ? -1 : std::stoll(log.substr(at + 8)) - drained_at;
  }
};

// A job with a drain_grace (a service that its owner replaces first) keeps running while its
// node drains, until that long before the deadline, and then gets SIGTERM.
TEST_F(ServiceDrainTest, AJobWithADrainGraceRunsOnUntilGraceBeforeTheDeadline) {
  EXPECT_GE(TermAfterDrain("1s", 2500), 1'500 - 100) << "TERM came before deadline - grace";
}

// A drain whose deadline is nearer than twice the grace: the service serves for the first half
// of the notice and stops in the second (it was stopped at once, nothing serving meanwhile).
TEST_F(ServiceDrainTest, AShortDrainDeadlineLeavesAServiceHalfOfItToServe) {
  EXPECT_GE(TermAfterDrain("30s", 2000), 1'000 - 150) << "TERM came before half of the notice";
}

// `tensorfleet run --set`: values for one run replace or add to the spec's hyperparameters,
// typed as YAML types them, and reach the job as the spec's own do; a bad one is named.
TEST_F(JobsE2eTest, RunSetGivesOneRunItsOwnHyperparameters) {
  StartWorker("w1");
  const std::string spec =
      WriteFile(dir_.path() / "hp.yaml",
                "name: hp\n"
                "command: echo \"lr=$TENSORFLEET_HP_LR layers=$TENSORFLEET_HP_LAYERS "
                "tag=$TENSORFLEET_HP_TAG\"\n"
                "hyperparameters: {lr: 0.001, layers: 4}\n");
  ProgramRun run = RunTensorfleetOn(
      app_->url(), admin_token_, {"--json", "run", spec, "--set", "lr=3e-4", "--set", "tag=fast"});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const std::string id = Json::parse(run.output)["id"];
  Json done = WaitFor(id, Finished);
  EXPECT_EQ(done["state"], "succeeded") << done.dump(2);
  EXPECT_NE(Log(id, 1).find("lr=0.0003 layers=4 tag=fast"), std::string::npos) << Log(id, 1);

  ProgramRun bad =
      RunTensorfleetOn(app_->url(), admin_token_, {"run", spec, "--set", "bad name=1"});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.output.find("--set: hyperparameters.bad name: is not a valid name"),
            std::string::npos)
      << bad.output;
}

TEST_F(JobsE2eTest, CancelStopsARunningJobAndAQueuedOne) {
  StartWorker("w1");
  auto running = Submit("name: sleeper\ncommand: echo up; sleep 60\nresources: {gpus: 1}\n");
  ASSERT_TRUE(running.ok());
  std::string id = (*running)["id"];
  WaitForState(id, "running");
  // Another waits for the node's only GPU, which the sleeper holds.
  auto queued = Submit("name: waiter\ncommand: true\nresources: {gpus: 1}\n");
  ASSERT_TRUE(queued.ok());
  auto cancelled = api_->Call("POST", "/v1/jobs/" + id + "/cancel");
  ASSERT_TRUE(cancelled.ok()) << cancelled.status().ToString();
  EXPECT_EQ((*cancelled)["state"], "cancelled");
  Json after = WaitFor(id, [](const Json& j) {
    return j["attempts"][0]["ranks"][0].value("state", "") == "stopped";
  });
  EXPECT_EQ(after["state"], "cancelled");
  auto again = api_->Call("POST", "/v1/jobs/" + id + "/cancel");
  EXPECT_EQ(again.status().code(), StatusCode::kFailedPrecondition);
  WaitFor((*queued)["id"], Finished);
}

TEST_F(JobsE2eTest, AStaleLeaseIsRefused) {
  std::string w1 = StartWorker("w1");
  auto job = Submit("name: quick\ncommand: true\n");
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  std::string id = (*job)["id"];
  WaitFor(id, Finished);
  auto stale = api_->Call("POST", "/v1/jobs/" + id + "/reports",
                          Json{{"attempt", 1},
                               {"token", "12345"},
                               {"node_rank", 0},
                               {"state", "failed"},
                               {"exit_code", 1}});
  EXPECT_EQ(stale.status().code(), StatusCode::kAborted);
  EXPECT_NE(stale.status().message().find("stale lease"), std::string::npos);
  EXPECT_EQ(GetJob(id)["state"], "succeeded");
}

}  // namespace
}  // namespace tf::testing
