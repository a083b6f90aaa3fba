// Managed jobs when things die: workers (and the server) run as child processes of the test and
// are killed with SIGKILL mid-job. A killed worker's job resumes elsewhere from its last
// complete checkpoint; a worker restarted on the same directory kills what its predecessor
// left running; a restarted server loses nothing; a two-node gang trains the example's model
// with DDP and restarts whole when one of its nodes dies.
#include <signal.h>
#include <sys/wait.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <regex>

#include "eventually.h"
#include "jobs_test_util.h"
#include "program_run.h"
#include "server_process.h"
#include "worker/checkpoint_manifest.h"
#include "worker/local_state.h"

namespace tf::testing {
namespace {

namespace fs = std::filesystem;

// The number after `prefix` in `text`, or -1.
int NumberAfter(const std::string& text, const std::string& prefix) {
  size_t at = text.find(prefix);
  if (at == std::string::npos) return -1;
  return std::atoi(text.c_str() + at + prefix.size());
}

// True while `pid` names a process that has not ended (a zombie has ended).
bool Alive(pid_t pid) {
  if (::kill(pid, 0) != 0) return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  size_t paren = line.rfind(')');
  return paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] != 'Z';
}

// `tensorfleet worker` as a child process. Stop() interrupts it as Ctrl-C would (its ranks are
// stopped); Crash() is kill -9 (its ranks' processes die with it).
class WorkerProcess {
 public:
  WorkerProcess(std::string url, std::string token, fs::path dir, int gpus = 1)
      : url_(std::move(url)), token_(std::move(token)), dir_(std::move(dir)), gpus_(gpus) {}
  ~WorkerProcess() {
    Stop();
    KillLeftovers();
  }

  // Starts it and waits until it has registered; returns false (with the output in the
  // failure) if it did not.
  bool Start() {
    child_ = std::make_unique<ChildProcess>();
    return StartTensorfleetWorker(*child_, url_, token_, dir_.string(), gpus_);
  }

  void Crash() {
    if (!child_) return;
    child_->Kill(SIGKILL);
    child_->Wait();
  }

  void Stop() {
    if (!child_ || child_->pid() <= 0) return;
    child_->Kill(SIGTERM);
    child_->Wait();
  }

  // The process groups this worker (or a predecessor on its directory) recorded.
  std::vector<worker::LocalState::Entry> Recorded() const {
    worker::LocalState state(dir_ / "worker-state.json");
    if (!state.Load().ok()) return {};
    return state.entries();
  }

  // Kills whatever groups the record names, as the machine going away would.
  void KillLeftovers() {
    for (const auto& e : Recorded()) {
      if (e.pgid > 0) ::killpg(e.pgid, SIGKILL);
    }
  }

  std::string node_id() const {
    std::ifstream in(dir_ / "node-id");
    std::string id;
    std::getline(in, id);
    return id;
  }

  std::string output() { return child_ ? child_->output() : ""; }
  bool WaitForOutput(const std::string& text, std::chrono::milliseconds timeout) {
    return child_ && child_->WaitForOutput(text, timeout);
  }

 private:
  std::string url_, token_;
  fs::path dir_;
  int gpus_;
  std::unique_ptr<ChildProcess> child_;
};

class JobsReliabilityTest : public JobsFixture {
 protected:
  std::unique_ptr<WorkerProcess> ChildWorker(const std::string& name, int gpus = 1) {
    auto w = std::make_unique<WorkerProcess>(app_->url(), admin_token_, dir_.path() / name, gpus);
    EXPECT_TRUE(w->Start());
    return w;
  }

  // The step counter of the job's latest complete checkpoint snapshot, or -1 if none yet.
  int SyncedStep(const std::string& id, const std::string& file = "step") {
    worker::CheckpointKeys keys(id + "/checkpoints");
    const std::string objects = "/v1/buckets/tensorfleet-jobs/objects/";
    auto latest = RawGet(objects + keys.Latest());
    if (!latest) return -1;
    auto seq = worker::ParseLatest(*latest);
    if (!seq.ok()) return -1;
    auto text = RawGet(objects + keys.Manifest(*seq));
    if (!text) return -1;
    auto manifest = worker::ParseManifest(*text);
    if (!manifest.ok()) return -1;
    for (const auto& f : manifest->files) {
      if (f.path != file) continue;
      auto blob = RawGet(objects + keys.Blob(f.sha256));
      return blob ? std::atoi(blob->c_str()) : -1;
    }
    return -1;
  }

  bool HasSnapshot(const std::string& id) {
    return RawGet("/v1/buckets/tensorfleet-jobs/objects/" + id + "/checkpoints/latest").has_value();
  }
};

TEST_F(JobsReliabilityTest, AKilledWorkersJobResumesElsewhereFromItsLastSyncedCheckpoint) {
  auto w1 = ChildWorker("w1");
  // Long enough that the job is still running when its worker is killed, on a slow machine too.
  auto job = Submit(CountingJob("counter", 800));
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  std::string id = (*job)["id"];
  // Past the first periodic sync (10 s in) and a few steps beyond it.
  WaitFor(
      id, [&](const Json&) { return SyncedStep(id) > 0; }, std::chrono::seconds(120));
  int at_sync = SyncedStep(id);
  WaitFor(id, [&](const Json&) {
    return Log(id, 1).find("step=" + std::to_string(at_sync + 5) + " ") != std::string::npos;
  });
  std::string first_node = w1->node_id();
  ASSERT_FALSE(w1->Recorded().empty()) << "the worker recorded no process group";
  w1->Crash();
  w1->KillLeftovers();          // the machine is gone with its worker
  int synced = SyncedStep(id);  // nothing syncs any more
  ASSERT_GT(synced, 0);
  EXPECT_GT(NumberAfter(Log(id, 1), "step="), 0);

  // The node is lost after the heartbeat timeout; the job waits for a GPU, then runs on w2.
  WaitFor(id, [](const Json& j) {
    return j["attempts"].size() >= 1 && j["attempts"][0].value("state", "") == "lost";
  });
  auto w2 = ChildWorker("w2");
  Json done = WaitFor(id, Finished, std::chrono::seconds(180));
  ASSERT_EQ(done["state"], "succeeded") << done.dump(2);
  ASSERT_EQ(done["attempts"].size(), 2u) << done.dump(2);
  EXPECT_EQ(done["attempts"][0]["state"], "lost");
  EXPECT_EQ(done["attempts"][0]["ranks"][0]["node"], first_node);
  EXPECT_EQ(done["attempts"][1]["ranks"][0]["node"], w2->node_id());
  EXPECT_EQ(done["recoveries"], 1);
  auto kinds = EventKinds(id);
  EXPECT_NE(std::find(kinds.begin(), kinds.end(), "retrying"), kinds.end());

  std::string second = Log(id, 2);
  EXPECT_NE(second.find("restored checkpoint"), std::string::npos) << second;
  EXPECT_NE(second.find("start at step " + std::to_string(synced) + " "), std::string::npos)
      << "synced at " << synced << ":\n"
      << second;
  EXPECT_EQ(second.find("step=1 "), std::string::npos) << "the second attempt started over";
  EXPECT_NE(second.find("step=" + std::to_string(synced + 1) + " "), std::string::npos) << second;
  auto result = RawGet("/v1/buckets/tensorfleet-jobs/objects/" + id + "/output/result.txt");
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(*result, "done at step 800\n");
}

TEST_F(JobsReliabilityTest, AKilledWorkersProcessesDieWithItAndItsRestartReportsTheRankLost) {
  auto w1 = ChildWorker("w1");
  // The shell, and a process of its own that it waits for: every process of the job.
  auto job = Submit(
      "name: sleeper\ncommand: sleep 600 & echo \"up $$ child $!\"; wait\n"
      "resources: {gpus: 1}\n");
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  std::string id = (*job)["id"];
  WaitForState(id, "running");
  WaitFor(id, [&](const Json&) { return Log(id, 1).find("child") != std::string::npos; });
  const std::string log = Log(id, 1);
  const pid_t shell = NumberAfter(log, "up "), child = NumberAfter(log, "child ");
  auto recorded = w1->Recorded();
  ASSERT_EQ(recorded.size(), 1u);
  const pid_t leader = recorded[0].pgid;
  for (pid_t pid : {leader, shell, child}) ASSERT_TRUE(pid > 0 && Alive(pid)) << log;
  std::string node = w1->node_id();

  // kill -9 of the worker: no process of its job runs on unsupervised (a second copy would
  // run once the job resumes elsewhere).
  w1->Crash();
  for (pid_t pid : {leader, shell, child}) {
    EXPECT_TRUE(WaitForProcessExit(pid, std::chrono::seconds(10)))
        << "pid " << pid << " outlived its worker";
  }
  // Restarted at once, before the heartbeat timeout declares the node lost, it reports the rank
  // its predecessor left.
  ASSERT_TRUE(w1->Start());
  EXPECT_EQ(w1->node_id(), node);
  EXPECT_TRUE(w1->WaitForOutput("left by a previous worker: stopped, reported lost (accepted)",
                                std::chrono::seconds(30)))
      << w1->output();
  Json lost =
      WaitFor(id, [](const Json& j) { return j["attempts"][0].value("state", "") == "lost"; });
  EXPECT_EQ(lost["attempts"][0]["ranks"][0]["state"], "lost") << lost.dump(2);
  // The job goes on (a second attempt, on the same node once it is free); cancel it once that
  // attempt runs. (Cancelled while its rank is only assigned, before the worker saw it, the
  // rank would stay "stopping": nothing reports on a rank its worker never ran.)
  WaitFor(id, [](const Json& j) {
    return j["attempts"].size() >= 2 && j["attempts"][1].value("state", "") == "running";
  });
  ASSERT_TRUE(api_->Call("POST", "/v1/jobs/" + id + "/cancel").ok());
  WaitFor(id, [](const Json& j) {
    const Json& ranks = j["attempts"].back()["ranks"];
    return ranks[0].value("state", "") == "stopped";
  });
}

// The server itself as a child process, on a fixed port so that workers find it again.
class ServerCrashTest : public ::testing::Test {
 protected:
  void StartServer() {
    ASSERT_TRUE(server_.Start());
    token_ = server_.token();
    api_ = std::move(client::JsonClient::Create(url(), token_)).value();
  }
  void CrashServer() { server_.Crash(); }
  std::string url() const { return server_.url(); }

  // The job, or null while the server cannot answer.
  Json GetJob(const std::string& id) {
    auto j = api_->Call("GET", "/v1/jobs/" + id, nullptr, std::chrono::seconds(10));
    return j.ok() ? *j : Json();
  }

  Json WaitFor(const std::string& id, const std::function<bool(const Json&)>& pred,
               std::chrono::milliseconds timeout = std::chrono::seconds(120)) {
    return PollJson([&] { return GetJob(id); }, pred, timeout, id);
  }

  void TearDown() override {
    worker_.reset();
    CrashServer();
  }

  TempDir dir_;
  // On a fixed port, so that workers find it again after a restart.
  TensorfleetServer server_{
      (dir_.path() / "server").string(), FreePort(), {"--heartbeat-timeout", "3s"}};
  std::string token_;
  std::unique_ptr<client::JsonClient> api_;
  std::unique_ptr<WorkerProcess> worker_;
};

TEST_F(ServerCrashTest, AKilledServerRestartedOnItsDataLosesNothingAndTheJobFinishes) {
  StartServer();
  worker_ = std::make_unique<WorkerProcess>(url(), token_, dir_.path() / "w1");
  ASSERT_TRUE(worker_->Start());
  auto job = api_->Call(
      "POST", "/v1/jobs",
      Json{{"spec", CountingJob("counter", 200)}, {"source", "test.yaml"}, {"code_key", ""}});
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  std::string id = (*job)["id"];
  WaitFor(id, [](const Json& j) { return j.value("state", "") == "running"; });

  CrashServer();
  // The worker notices (its heartbeats fail) and keeps its rank running meanwhile.
  ASSERT_TRUE(worker_->WaitForOutput("heartbeat failed", std::chrono::seconds(30)))
      << worker_->output();
  StartServer();

  Json done = WaitFor(id, Finished, std::chrono::seconds(180));
  ASSERT_EQ(done["state"], "succeeded") << done.dump(2) << "\nworker:\n" << worker_->output();
  EXPECT_EQ(done["attempts"].size(), 1u) << done.dump(2);
  EXPECT_EQ(done["attempts"][0]["state"], "succeeded");
  EXPECT_EQ(done["recoveries"], 0);
  auto nodes = api_->Call("GET", "/v1/nodes");
  ASSERT_TRUE(nodes.ok());
  ASSERT_EQ((*nodes)["nodes"].size(), 1u);
  EXPECT_EQ((*nodes)["nodes"][0]["id"], worker_->node_id());
  EXPECT_NE((*nodes)["nodes"][0].value("state", ""), "lost") << nodes->dump(2);
}

// The example's DDP training (examples/llama-train/) over two nodes of one simulated GPU each.
constexpr char kPython[] = "/usr/bin/python3";

class GangTest : public JobsReliabilityTest {
 protected:
  void SetUp() override {
    JobsReliabilityTest::SetUp();
    corpus_ = dir_.path() / "corpus.txt";
    std::ofstream(corpus_)
        << "A journey of a thousand miles begins with a single step.\n%\n"
           "It's not a bug, it's a feature.\n%\n"
           "Simple things should be simple; complex things should be possible.\n%\n"
           "Premature optimization is the root of all evil.\n%\n"
           "Never trust a computer you can't throw out a window.\n";
  }

  // Tiny hyperparameters (those of example_training_test.cc), so that a step takes milliseconds.
  std::string Spec(const std::string& name, int steps, int checkpoint_every, int slow_step_ms) {
    std::string train = std::string(TENSORFLEET_SOURCE_DIR) + "/examples/llama-train/train.py";
    return "name: " + name +
           "\n"
           "command: [\"" +
           std::string(kPython) + "\", \"" + train +
           "\"]\n"
           "nodes: 2\n"
           "resources: {gpus: 1, cpus: 1}\n"
           "hyperparameters: {steps: " +
           std::to_string(steps) +
           ", batch_size: 4, seq_len: 32, "
           "hidden_size: 32, intermediate_size: 64, num_layers: 2, num_heads: 4, num_kv_heads: 2, "
           "bpe_merges: 64, threads: 1, log_every: 1, checkpoint_every: " +
           std::to_string(checkpoint_every) +
           ", seed: 7, lr: 0.01, warmup_steps: 2, "
           "slow_step_ms: " +
           std::to_string(slow_step_ms) + ", corpus: \"" + corpus_.string() +
           "\"}\n"
           "checkpoint: {sync_interval: 10s}\n"
           "retry: {on: [interruption, node-lost], max_attempts: 3}\n";
  }

  fs::path corpus_;
};

TEST_F(GangTest, TwoNodesTrainTheExampleWithDdpAndSucceed) {
  if (!PythonHasTorch()) GTEST_SKIP() << "/usr/bin/python3 cannot import torch and numpy";
  auto w1 = ChildWorker("w1");
  auto w2 = ChildWorker("w2");
  auto job = Submit(Spec("ddp", 8, 4, 0));
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  std::string id = (*job)["id"];
  Json done = WaitFor(id, Finished, std::chrono::minutes(5));
  ASSERT_EQ(done["state"], "succeeded") << done.dump(2) << Log(id, 1, 0) << Log(id, 1, 1);
  ASSERT_EQ(done["attempts"][0]["ranks"].size(), 2u);
  EXPECT_NE(done["attempts"][0]["ranks"][0]["node"], done["attempts"][0]["ranks"][1]["node"]);
  for (int rank = 0; rank < 2; ++rank) {
    std::string log = Log(id, 1, rank);
    if (rank == 0) {  // the main rank says
      EXPECT_NE(log.find("2 rank(s)"), std::string::npos) << log;
    }
    EXPECT_NE(log.find("node rank " + std::to_string(rank) + " of 2"), std::string::npos) << log;
    EXPECT_NE(log.find("rank " + std::to_string(rank) + " final weights sha256="),
              std::string::npos)
        << log;
  }
  // DDP keeps the replicas equal: both ranks end with the same weights.
  std::regex digest("final weights sha256=([0-9a-f]+)");
  std::smatch m0, m1;
  std::string l0 = Log(id, 1, 0), l1 = Log(id, 1, 1);
  ASSERT_TRUE(std::regex_search(l0, m0, digest));
  ASSERT_TRUE(std::regex_search(l1, m1, digest));
  EXPECT_EQ(m0[1], m1[1]);
}

TEST_F(GangTest, KillingOneWorkerOfAGangRestartsTheWholeGangFromTheCheckpoint) {
  if (!PythonHasTorch()) GTEST_SKIP() << "/usr/bin/python3 cannot import torch and numpy";
  auto w1 = ChildWorker("w1");
  auto w2 = ChildWorker("w2");
  auto job = Submit(Spec("ddp-kill", 150, 5, 150));
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  std::string id = (*job)["id"];
  WaitFor(
      id, [&](const Json&) { return HasSnapshot(id); }, std::chrono::minutes(5));
  Json running = GetJob(id);
  std::string rank1_node = running["attempts"][0]["ranks"][1]["node"];
  WorkerProcess* victim = rank1_node == w1->node_id() ? w1.get() : w2.get();
  victim->Crash();
  victim->KillLeftovers();

  // The survivor's all_reduce fails at once ("Connection closed by peer") and its rank reports
  // exit code 1 before the dead node is declared lost: the server waits for the heartbeat
  // timeout before its verdict, so the attempt ends as lost (retried by the default policy),
  // not failed. A third worker makes room for the new gang.
  Json ended = WaitFor(id, [](const Json& j) {
    std::string s = j["attempts"][0].value("state", "");
    return s == "lost" || s == "failed";
  });
  EXPECT_EQ(ended["attempts"][0]["state"], "lost") << ended.dump(2);
  auto w3 = ChildWorker("w3");
  Json done = WaitFor(id, Finished, std::chrono::minutes(5));
  ASSERT_EQ(done["state"], "succeeded") << done.dump(2);
  ASSERT_EQ(done["attempts"].size(), 2u) << done.dump(2);
  EXPECT_EQ(done["recoveries"], 1);
  for (const Json& r : done["attempts"][0]["ranks"]) {
    EXPECT_NE(r.value("state", ""), "running") << done.dump(2);
  }
  for (int rank = 0; rank < 2; ++rank) {
    std::string log = Log(id, 2, rank);
    EXPECT_NE(log.find("restored checkpoint"), std::string::npos) << log;
    if (rank == 0) {
      EXPECT_NE(log.find("resumed from step "), std::string::npos) << log;
    }
    EXPECT_EQ(log.find("starting from scratch"), std::string::npos) << log;
  }
}

}  // namespace
}  // namespace tf::testing
