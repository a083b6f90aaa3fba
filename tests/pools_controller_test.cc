// The pool controller (pools/pool_controller.h) over a real job service and SQLite store, with
// a fake clock and a provider that only records what it is asked: machines start for waiting
// work, stop after their idle timeout, and are replaced when they never register or stop by
// themselves.
#include <gtest/gtest.h>

#include <set>

#include "job_service_fixture.h"
#include "pools/pool_controller.h"
#include "pools/pool_service.h"

namespace tf::pools {
namespace {

// Machines as a cloud would keep them, shared by the provider objects of one test.
struct FakeCloud {
  std::map<std::string, Machine> machines;
  std::vector<std::string> created;
  std::vector<std::string> deleted;
  std::vector<std::string> join_tokens;  // what each created machine was given, in order
};

class FakeProvider : public MachineProvider {
 public:
  explicit FakeProvider(FakeCloud& cloud) : cloud_(cloud) {}
  Status Create(const PoolSpec&, const std::string& id, const std::string& join_token) override {
    cloud_.created.push_back(id);
    cloud_.join_tokens.push_back(join_token);
    cloud_.machines[id] = Machine{id, true, ""};
    return OkStatus();
  }
  Status Delete(const std::string& id) override {
    cloud_.deleted.push_back(id);
    cloud_.machines.erase(id);
    return OkStatus();
  }
  Result<std::vector<Machine>> List() override {
    std::vector<Machine> out;
    for (const auto& [id, m] : cloud_.machines) out.push_back(m);
    return out;
  }

 private:
  FakeCloud& cloud_;
};

class PoolControllerTest : public testing::JobServiceFixture {
 protected:
  void SetUp() override {
    JobServiceFixture::SetUp();
    pools_ = std::make_unique<PoolService>(*store_, clock_);
    jobs_->SetPotentialNodes([this] { return pools_->PotentialNodes(); });
    controller_ = std::make_unique<PoolController>(
        *store_, *jobs_, *auth_, clock_,
        [this](const PoolSpec&) { return std::make_unique<FakeProvider>(cloud_); });
  }

  void CreatePool(const std::string& yaml) {
    auto created = pools_->Create(yaml, "pool.yaml");
    ASSERT_TRUE(created.ok()) << created.status().ToString();
  }

  void Tick() {
    Status ticked = controller_->Tick();
    ASSERT_TRUE(ticked.ok()) << ticked.ToString();
    auto stats = jobs_->Tick();
    ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  }

  std::string Submit(const std::string& yaml) {
    auto job = jobs_->Submit(project_, yaml, "job.yaml", "");
    EXPECT_TRUE(job.ok()) << job.status().ToString();
    return job.ok() ? job->id() : "";
  }

  // The join token machine `id` was started with.
  std::string JoinTokenOf(const std::string& id) {
    for (size_t i = 0; i < cloud_.created.size(); ++i) {
      if (cloud_.created[i] == id) return cloud_.join_tokens[i];
    }
    ADD_FAILURE() << "no machine " << id << " was created";
    return "";
  }

  // Registers machine `id` as its worker would, with its join token: a node named after it, of
  // the pool's shape.
  std::string Join(const std::string& id, int gpus = 1) {
    fleet::NodeInfo info;
    info.address = "10.0.0.1";
    info.cpus = 4;
    info.memory_bytes = int64_t{8} << 30;
    for (int g = 0; g < gpus; ++g) info.gpus.push_back({g, "simulated", 0, ""});
    info.labels["pool"] = "gpu";
    std::string node = "node-" + id;
    auto who = auth_->AuthenticateWorker(JoinTokenOf(id));
    EXPECT_TRUE(who.ok()) << who.status().ToString();
    if (!who.ok()) return node;
    EXPECT_EQ(who->kind, auth::WorkerPrincipal::Kind::kJoin);
    store::NodeAdmission admission{who->join_token_id, auth::AuthService::NewNodeCredential().hash};
    auto registered = jobs_->RegisterNode(node, id, info, admission);
    EXPECT_TRUE(registered.ok()) << registered.status().ToString();
    return node;
  }

  void Heartbeats() {
    auto nodes = jobs_->ListNodes();
    ASSERT_TRUE(nodes.ok());
    for (const jobs::NodeView& n : *nodes) {
      if (n.record.state != "lost") {
        ASSERT_TRUE(jobs_->Heartbeat(n.record.id, n.record.epoch).ok());
      }
    }
  }

  // Every rank of the job's current attempt reports `state`.
  void Finish(const std::string& job_id) {
    auto job = jobs_->Get(project_, job_id);
    ASSERT_TRUE(job.ok());
    const jobs::Attempt* a = job->doc.current();
    ASSERT_NE(a, nullptr);
    for (size_t rank = 0; rank < a->ranks.size(); ++rank) {
      jobs::RankReport report;
      report.attempt = a->number;
      report.token = a->token;
      report.node_rank = static_cast<int>(rank);
      report.state = "succeeded";
      report.exit_code = 0;
      ASSERT_TRUE(jobs_->Report(job_id, report).ok());
    }
  }

  nlohmann::json PoolStatus() {
    auto pool = pools_->Get("gpu");
    EXPECT_TRUE(pool.ok()) << pool.status().ToString();
    return pool.ok() ? pool->status : nlohmann::json();
  }

  std::string JobState(const std::string& id) {
    auto job = jobs_->Get(project_, id);
    return job.ok() ? job->record.state : job.status().ToString();
  }

  std::string WaitingReason(const std::string& id) {
    auto job = jobs_->Get(project_, id);
    return job.ok() ? job->doc.waiting_reason : job.status().ToString();
  }

  size_t NodeCount() {
    auto nodes = jobs_->ListNodes();
    return nodes.ok() ? nodes->size() : 999;
  }

  FakeCloud cloud_;
  std::unique_ptr<PoolService> pools_;
  std::unique_ptr<PoolController> controller_;
};

constexpr const char* kGpuPool = R"(name: gpu
machine: {gpus: 1, cpus: 4, memory: 8Gi, price_per_hour: 1.2}
max: 2
idle_timeout: 5m
start_timeout: 2m
)";

constexpr const char* kGang = R"(name: gang
nodes: 2
resources: {gpus: 1, cpus: 1}
command: ["true"]
)";

TEST_F(PoolControllerTest, AGangStartsTwoMachinesThatStopAfterTheirIdleTimeout) {
  CreatePool(kGpuPool);
  std::string job = Submit(kGang);
  Tick();
  ASSERT_EQ(cloud_.created.size(), 2u);
  EXPECT_EQ(cloud_.created[0].substr(0, 4), "gpu-");
  EXPECT_EQ(WaitingReason(job), "pool gpu is starting 2 nodes for it");
  nlohmann::json status = PoolStatus();
  ASSERT_EQ(status["machines"].size(), 2u);
  EXPECT_EQ(status["machines"][0]["state"], "starting");
  EXPECT_EQ(status["decisions"][0]["what"],
            "started " + cloud_.created[0] + ", " + cloud_.created[1]);
  EXPECT_EQ(status["decisions"][0]["why"], "for " + job);

  // Nothing more starts while they come up.
  clock_.Advance(30 * kSecondMs);
  Tick();
  EXPECT_EQ(cloud_.created.size(), 2u);

  TimeMs asked_at = clock_.Now() - 30 * kSecondMs;
  std::string node = Join(cloud_.created[0]);
  Join(cloud_.created[1]);
  Tick();
  EXPECT_EQ(JobState(job), "starting");  // placed: its ranks start
  // The machine is metered from when it was asked for, 30 s before its worker registered.
  auto periods = store_->nodes().ListNodePeriods(0, clock_.Now() + kHourMs);
  ASSERT_TRUE(periods.ok());
  bool backdated = false;
  for (const store::NodePeriod& p : *periods) {
    if (p.node_id == node) backdated = p.started_at == asked_at;
  }
  EXPECT_TRUE(backdated);
  Tick();
  EXPECT_EQ(PoolStatus()["machines"][0]["state"], "busy");

  Finish(job);
  Tick();
  EXPECT_EQ(PoolStatus()["machines"][0]["state"], "idle");
  clock_.Advance(4 * kMinuteMs);
  Heartbeats();
  Tick();
  EXPECT_TRUE(cloud_.deleted.empty());
  clock_.Advance(kMinuteMs);
  Heartbeats();
  Tick();
  EXPECT_EQ(cloud_.deleted.size(), 2u);
  EXPECT_TRUE(cloud_.machines.empty());
  EXPECT_EQ(NodeCount(), 0u);  // retired at once, not left to be lost
  status = PoolStatus();
  EXPECT_TRUE(status["machines"].empty());
  EXPECT_EQ(status["decisions"][0]["why"], "idle for 5m");
}

// A leader that takes over knows when the machines it did not start were asked for (from their
// join tokens): it meters them from then and times their start from then.
TEST_F(PoolControllerTest, ALeaderThatTakesOverMetersAMachineFromWhenTheFirstAskedForIt) {
  CreatePool(kGpuPool);
  Submit(kGang);
  Tick();
  ASSERT_EQ(cloud_.created.size(), 2u);
  const TimeMs asked_at = clock_.Now();
  clock_.Advance(90 * kSecondMs);
  controller_ = std::make_unique<PoolController>(
      *store_, *jobs_, *auth_, clock_,
      [this](const PoolSpec&) { return std::make_unique<FakeProvider>(cloud_); });
  Tick();
  nlohmann::json machines = PoolStatus()["machines"];
  ASSERT_EQ(machines.size(), 2u);
  EXPECT_EQ(machines[0]["since"], asked_at) << machines.dump();

  std::string node = Join(cloud_.created[0]);
  Tick();
  auto periods = store_->nodes().ListNodePeriods(0, clock_.Now() + kHourMs);
  ASSERT_TRUE(periods.ok());
  bool backdated = false;
  for (const store::NodePeriod& p : *periods) {
    if (p.node_id == node) backdated = p.started_at == asked_at;
  }
  EXPECT_TRUE(backdated) << "metered from the first leader's ask";

  // The other never registers: its start timeout (2m) counts from the first ask too.
  clock_.Advance(31 * kSecondMs);
  Heartbeats();
  Tick();
  EXPECT_EQ(cloud_.deleted, (std::vector<std::string>{cloud_.created[1]}));
}

TEST_F(PoolControllerTest, EachMachineGetsAJoinTokenThatRegistersItsNodeOnce) {
  CreatePool(kGpuPool);
  Submit(kGang);
  Tick();
  ASSERT_EQ(cloud_.join_tokens.size(), 2u);
  EXPECT_NE(cloud_.join_tokens[0], cloud_.join_tokens[1]);
  EXPECT_EQ(cloud_.join_tokens[0].substr(0, 4), "tfj_");
  // Not a token of a person: it reaches no project's data.
  EXPECT_EQ(auth_->Authenticate(cloud_.join_tokens[0]).status().code(),
            StatusCode::kUnauthenticated);

  Join(cloud_.created[0]);
  auto again = auth_->AuthenticateWorker(cloud_.join_tokens[0]);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().code(), StatusCode::kUnauthenticated);
  EXPECT_NE(again.status().message().find("used up"), std::string::npos)
      << again.status().message();

  // Valid for the machine's start timeout (2 minutes) and a minute more.
  clock_.Advance(3 * kMinuteMs);
  auto late = auth_->AuthenticateWorker(cloud_.join_tokens[1]);
  ASSERT_FALSE(late.ok());
  EXPECT_NE(late.status().message().find("expired"), std::string::npos) << late.status().message();

  // A day after they expired, the controller forgets them (any machine it starts meanwhile
  // gets a new one).
  auto ids = [&] {
    std::set<std::string> out;
    auto tokens = auth_->ListJoinTokens();
    EXPECT_TRUE(tokens.ok()) << tokens.status().ToString();
    for (const store::JoinToken& t : tokens.ok() ? *tokens : std::vector<store::JoinToken>{}) {
      out.insert(t.id);
    }
    return out;
  };
  std::set<std::string> first = ids();
  EXPECT_EQ(first.size(), 2u);
  clock_.Advance(kDayMs + kMinuteMs);
  Heartbeats();
  Tick();
  for (const std::string& id : ids()) EXPECT_EQ(first.count(id), 0u) << id << " was kept";
}

TEST_F(PoolControllerTest, WorkNoNodeFitsIsQueuedIfAPoolCouldHoldItAndRefusedOtherwise) {
  fleet::NodeInfo cpu_node;
  cpu_node.cpus = 8;
  cpu_node.address = "10.0.0.9";
  ASSERT_TRUE(jobs_->RegisterNode("node-cpu", "cpu", cpu_node).ok());
  auto refused = jobs_->Submit(project_, kGang, "job.yaml", "");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().message(),
            "job.yaml: resources.gpus: 1 GPU per node requested; the largest node has 0");

  CreatePool(kGpuPool);
  EXPECT_FALSE(Submit(kGang).empty());
  auto too_big = jobs_->Submit(project_, "name: big\nresources: {gpus: 4}\ncommand: [\"true\"]\n",
                               "big.yaml", "");
  ASSERT_FALSE(too_big.ok());
  EXPECT_EQ(too_big.status().message(),
            "big.yaml: resources.gpus: 4 GPUs per node requested; the largest node has 1");
  auto three = jobs_->Submit(project_, std::string(kGang).replace(18, 1, "3"), "three.yaml", "");
  ASSERT_FALSE(three.ok());  // the pool may hold 2 machines
  EXPECT_EQ(three.status().message(),
            "three.yaml: nodes: 3 nodes requested; only 2 can hold 1 GPU and 1 CPU each");
}

TEST_F(PoolControllerTest, AMachineThatNeverRegistersOrStopsByItselfIsReplaced) {
  CreatePool(kGpuPool);
  std::string job = Submit("name: one\nresources: {gpus: 1}\ncommand: [\"true\"]\n");
  Tick();
  ASSERT_EQ(cloud_.created.size(), 1u);
  std::string first = cloud_.created[0];

  clock_.Advance(2 * kMinuteMs + kSecondMs);
  Tick();  // past start_timeout: deleted, and another asked for in the same tick
  EXPECT_EQ(cloud_.deleted, std::vector<std::string>{first});
  ASSERT_EQ(cloud_.created.size(), 2u);
  nlohmann::json decisions = PoolStatus()["decisions"];
  EXPECT_EQ(decisions[1]["what"], "stopped " + first);
  EXPECT_EQ(decisions[1]["why"], "it did not register within 2m");

  cloud_.machines[cloud_.created[1]].running = false;
  cloud_.machines[cloud_.created[1]].detail = "terminated by the cloud";
  Tick();
  ASSERT_EQ(cloud_.created.size(), 3u);
  EXPECT_EQ(PoolStatus()["decisions"][1]["why"], "it stopped by itself: terminated by the cloud");
  EXPECT_EQ(WaitingReason(job), "pool gpu is starting 1 node for it");
}

TEST_F(PoolControllerTest, ADrainedNodeOnceEmptyStopsAfterTheIdleTimeoutToo) {
  CreatePool(kGpuPool);
  std::string job = Submit("name: one\nresources: {gpus: 1}\ncommand: [\"true\"]\n");
  Tick();
  ASSERT_EQ(cloud_.created.size(), 1u);
  std::string node = Join(cloud_.created[0]);
  Tick();
  Finish(job);
  ASSERT_TRUE(jobs_->Drain(node, 0, "spot interruption notice").ok());
  Tick();
  EXPECT_EQ(PoolStatus()["machines"][0]["state"], "idle, draining");
  clock_.Advance(5 * kMinuteMs);
  Heartbeats();
  Tick();
  EXPECT_EQ(cloud_.deleted, std::vector<std::string>{cloud_.created[0]});
  EXPECT_EQ(PoolStatus()["decisions"][0]["why"], "idle for 5m");
}

TEST_F(PoolControllerTest, AMinimumIsKeptIdleAndDeletingThePoolStopsItsMachines) {
  CreatePool(std::string(kGpuPool) + "min: 1\n");
  Tick();
  ASSERT_EQ(cloud_.created.size(), 1u);
  EXPECT_EQ(PoolStatus()["decisions"][0]["why"], "the pool's min is 1");
  Join(cloud_.created[0]);
  Tick();
  clock_.Advance(10 * kMinuteMs);
  Heartbeats();
  Tick();
  EXPECT_TRUE(cloud_.deleted.empty());  // idle, but the pool keeps one

  auto scaled = pools_->Scale("gpu", 0, std::nullopt);
  ASSERT_TRUE(scaled.ok()) << scaled.status().ToString();
  Tick();
  EXPECT_EQ(cloud_.deleted.size(), 1u);

  ASSERT_TRUE(pools_->Create(std::string(kGpuPool) + "min: 1\n", "p.yaml").status().code() ==
              StatusCode::kAlreadyExists);
  Tick();  // scaled back to 0 with nothing waiting: nothing starts
  EXPECT_EQ(cloud_.created.size(), 1u);
  ASSERT_TRUE(pools_->Scale("gpu", 1, std::nullopt).ok());
  Tick();
  ASSERT_EQ(cloud_.created.size(), 2u);
  ASSERT_TRUE(pools_->Delete("gpu").ok());
  Tick();
  EXPECT_EQ(cloud_.deleted.size(), 2u);
  EXPECT_TRUE(cloud_.machines.empty());
}

}  // namespace
}  // namespace tf::pools
