// Only the leader server runs the job controller (store/leadership.h). With SQLite the one
// server always leads. With PostgreSQL the leader holds a session-level advisory lock on a
// connection of its own: one of two servers leads, the other places nothing, and when the
// leader dies (or its session is ended) another takes the lead and schedules what waits.
//
// The PostgreSQL tests need a server: run under scripts/with-postgres.sh, which sets
// TENSORFLEET_TEST_POSTGRES_URL; without it they are skipped. Each works in a schema of its own
// (search_path in the store URL), so that jobs and nodes other tests left in the database play
// no part, and the schema's leader lock is its own.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "api_test_util.h"
#include "child_process.h"
#include "client/json_client.h"
#include "eventually.h"
#include "pg_test_schema.h"
#include "server_process.h"
#include "store/pg_connection.h"
#include "store/pg_leadership.h"
#include "store/store.h"
#include "worker/worker.h"

namespace tf::testing {
namespace {

namespace fs = std::filesystem;

std::string PostgresUrl() {
  const char* url = std::getenv("TENSORFLEET_TEST_POSTGRES_URL");
  return url == nullptr ? "" : url;
}

constexpr auto kLeadTimeout = std::chrono::seconds(30);

// A schema of its own in the test database, with its own leader lock.
class PgSchema : public PgTestSchema {
 public:
  explicit PgSchema(const std::string& base_url) : PgTestSchema(base_url, "leader_") {}

  // Ends the sessions that hold this schema's leader lock, as an administrator's
  // pg_terminate_backend or a failed network would; returns how many it ended.
  int EndLeaderSessions() {
    auto ended = admin()->Exec(
        "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND granted"
        " AND classid = $1::oid AND objid = $2::oid AND objsubid = 2"
        " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
        store::PgParams()
            .Add(int64_t{store::kLeaderLockClass})
            .Add(int64_t{static_cast<uint32_t>(store::LeaderLockKey(name()))}));
    EXPECT_TRUE(ended.ok()) << ended.status().ToString();
    return ended.ok() ? ended->rows() : -1;
  }
};

std::unique_ptr<store::Store> OpenOrFail(const std::string& url) {
  auto store = store::OpenStore(url);
  EXPECT_TRUE(store.ok()) << store.status().ToString();
  return store.ok() ? std::move(store).value() : nullptr;
}

// --- SQLite ---------------------------------------------------------------------------------

TEST(SqliteLeadershipTest, TheOneServerOfASqliteStoreAlwaysLeads) {
  TempDir dir;
  auto store = OpenOrFail((dir.path() / "tensorfleet.db").string());
  ASSERT_NE(store, nullptr);
  auto leadership = store->NewLeadership();
  EXPECT_TRUE(leadership->Held());
  EXPECT_TRUE(leadership->TryAcquire());
  EXPECT_TRUE(leadership->Held());
}

class SqliteServerLeadsTest : public ApiFixture {};

TEST_F(SqliteServerLeadsTest, StatusAndMetricsSayTheServerLeads) {
  ApiReply status = Call("GET", "/v1/status");
  ASSERT_EQ(status.status, 200) << status.body.dump();
  EXPECT_EQ(status.body["leader"], true) << status.body.dump();
  auto client = http::Client::Create(app_->url());
  ASSERT_TRUE(client.ok());
  auto metrics = (*client)->Send("GET", "/metrics", {{"Authorization", "Bearer " + admin_token_}},
                                 "", std::chrono::seconds(30));
  ASSERT_TRUE(metrics.ok()) << metrics.status().ToString();
  EXPECT_NE(metrics->body.find("\ntensorfleet_leader 1\n"), std::string::npos) << metrics->body;
}

// --- PostgreSQL: the lock -------------------------------------------------------------------

class PgLeadershipTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (PostgresUrl().empty()) GTEST_SKIP() << "TENSORFLEET_TEST_POSTGRES_URL is not set";
    schema_ = std::make_unique<PgSchema>(PostgresUrl());
    first_ = OpenOrFail(schema_->url());
    second_ = OpenOrFail(schema_->url());
    ASSERT_NE(first_, nullptr);
    ASSERT_NE(second_, nullptr);
  }

  std::unique_ptr<PgSchema> schema_;
  std::unique_ptr<store::Store> first_, second_;  // two servers' stores on one database
};

TEST_F(PgLeadershipTest, OneOfTwoServersLeadsUntilItClosesThenTheOtherTakesOver) {
  auto a = first_->NewLeadership();
  auto b = second_->NewLeadership();
  EXPECT_FALSE(a->Held()) << "led before asking";
  ASSERT_TRUE(a->TryAcquire());
  EXPECT_TRUE(a->Held());
  EXPECT_FALSE(b->TryAcquire()) << "two leaders";
  EXPECT_FALSE(b->Held());
  // Asking again keeps the lead where it is.
  EXPECT_TRUE(a->TryAcquire());
  EXPECT_FALSE(b->TryAcquire());
  // Another handle of the same store is another server's: it does not lead either.
  EXPECT_FALSE(first_->NewLeadership()->TryAcquire());

  a.reset();  // the leader closes
  EXPECT_TRUE(Eventually([&] { return b->TryAcquire(); }, kLeadTimeout))
      << "the lead was not released";
  EXPECT_TRUE(b->Held());
  EXPECT_FALSE(first_->NewLeadership()->TryAcquire()) << "two leaders";
}

TEST_F(PgLeadershipTest, ALeaderWhoseSessionEndsLosesTheLeadAndTakesItAgainOnceFree) {
  auto a = first_->NewLeadership();
  auto b = second_->NewLeadership();
  ASSERT_TRUE(a->TryAcquire());
  ASSERT_FALSE(b->TryAcquire());

  ASSERT_EQ(schema_->EndLeaderSessions(), 1);
  // The next ask notices that the connection holding the lock is gone.
  EXPECT_TRUE(Eventually([&] { return !a->TryAcquire(); }, kLeadTimeout))
      << "the lead outlived its session";
  EXPECT_FALSE(a->Held());
  EXPECT_TRUE(Eventually([&] { return b->TryAcquire(); }, kLeadTimeout))
      << "the lead was not released";
  EXPECT_FALSE(a->TryAcquire()) << "two leaders";

  b.reset();
  // `a` connects again and takes the lead once it is free.
  EXPECT_TRUE(Eventually([&] { return a->TryAcquire(); }, kLeadTimeout));
  EXPECT_TRUE(a->Held());
}

// --- PostgreSQL: two servers ----------------------------------------------------------------

// `tensorfleet server` as a child process on the schema's database.
struct ServerProcess {
  std::unique_ptr<TensorfleetServer> server;
  std::string url, token;
  std::unique_ptr<client::JsonClient> api;

  bool Start(const fs::path& data_dir, const std::string& store_url) {
    server = std::make_unique<TensorfleetServer>(
        data_dir.string(), 0,
        std::vector<std::string>{"--store", store_url, "--heartbeat-timeout", "3s"});
    if (!server->Start()) return false;
    url = server->url();
    token = server->token();
    auto client = client::JsonClient::Create(url, token);
    if (!client.ok()) {
      ADD_FAILURE() << client.status().ToString();
      return false;
    }
    api = std::move(client).value();
    return true;
  }

  ChildProcess& process() { return *server->process(); }
  std::string output() { return server ? server->output() : ""; }

  // How many times its job controller has asked for the lead (tensorfleet_leader_checks_total);
  // -1 while it does not answer.
  int64_t LeadChecks() {
    auto client = http::Client::Create(url);
    if (!client.ok()) return -1;
    auto metrics = (*client)->Send("GET", "/metrics", {{"Authorization", "Bearer " + token}}, "",
                                   std::chrono::seconds(5));
    if (!metrics.ok()) return -1;
    const std::string name = "\ntensorfleet_leader_checks_total ";
    size_t at = metrics->body.find(name);
    return at == std::string::npos ? -1 : std::atoll(metrics->body.c_str() + at + name.size());
  }

  // Waits until its controller has asked for the lead `n` more times than now: `n` of its
  // wakes, whatever the time they took.
  bool WaitForLeadChecks(int n) {
    int64_t from = LeadChecks();
    return from >= 0 && Eventually([&] { return LeadChecks() >= from + n; }, kLeadTimeout);
  }

  // What its /v1/status says; false while it does not answer.
  bool Leads() {
    auto status = api->Call("GET", "/v1/status", nullptr, std::chrono::seconds(5));
    return status.ok() && (*status).value("leader", false);
  }

  Result<Json> Submit(const std::string& yaml) {
    return api->Call("POST", "/v1/jobs",
                     Json{{"spec", yaml}, {"source", "test.yaml"}, {"code_key", ""}});
  }

  std::string State(const std::string& job_id) {
    auto job = api->Call("GET", "/v1/jobs/" + job_id, nullptr, std::chrono::seconds(5));
    return job.ok() ? (*job).value("state", "") : "";
  }
};

constexpr char kLeaderLine[] = "this server is now the leader";

std::string QuickJob(const std::string& name) {
  return "name: " + name + "\ncommand: \"true\"\nresources: {gpus: 1}\n";
}

class TwoServersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (PostgresUrl().empty()) GTEST_SKIP() << "TENSORFLEET_TEST_POSTGRES_URL is not set";
    schema_ = std::make_unique<PgSchema>(PostgresUrl());
    // One after the other: the first migrates the new schema.
    ASSERT_TRUE(servers_[0].Start(dir_.path() / "server-a", schema_->url()));
    ASSERT_TRUE(servers_[1].Start(dir_.path() / "server-b", schema_->url()));
  }

  void TearDown() override {
    if (worker_) worker_->Shutdown(std::chrono::seconds(2));
    worker_.reset();
  }

  // A worker with one GPU, attached to `server`.
  void StartWorker(ServerProcess& server) {
    worker::WorkerOptions o;
    o.server_url = server.url;
    o.token = server.token;
    o.data_dir = dir_.path() / "worker";
    o.name = "w1";
    o.address = "127.0.0.1";
    o.gpus = 1;
    o.cpus = 4;
    o.memory_bytes = int64_t{8} << 30;
    o.heartbeat_interval = std::chrono::milliseconds(300);
    o.stop_grace = std::chrono::seconds(2);
    auto w = worker::Worker::Start(o);
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    worker_ = std::move(w).value();
  }

  bool WaitForState(ServerProcess& server, const std::string& job_id, const std::string& state) {
    return Eventually([&] { return server.State(job_id) == state; });
  }

  TempDir dir_;
  std::unique_ptr<PgSchema> schema_;
  ServerProcess servers_[2];
  std::unique_ptr<worker::Worker> worker_;  // declared last: stopped before the servers
};

TEST_F(TwoServersTest, OneLeadsTheOtherPlacesNothingUntilItTakesOverFromAKilledLeader) {
  // Exactly one leads, and keeps leading while both ask for the lead again and again.
  ASSERT_TRUE(Eventually([&] { return servers_[0].Leads() || servers_[1].Leads(); }, kLeadTimeout))
      << servers_[0].output() << servers_[1].output();
  for (int i = 0; i < 5; ++i) {
    bool first = servers_[0].Leads(), second = servers_[1].Leads();
    ASSERT_NE(first, second) << "leaders: " << first << ", " << second;
    ASSERT_TRUE(servers_[0].WaitForLeadChecks(1) && servers_[1].WaitForLeadChecks(1));
  }
  int lead = servers_[0].Leads() ? 0 : 1;
  ServerProcess& leader = servers_[lead];
  ServerProcess& follower = servers_[1 - lead];
  EXPECT_TRUE(leader.process().WaitForOutput(kLeaderLine, std::chrono::seconds(1)));
  EXPECT_EQ(follower.output().find(kLeaderLine), std::string::npos) << follower.output();

  // The worker talks to the follower; the leader places the jobs, whichever server took them.
  StartWorker(follower);
  for (ServerProcess* server : {&follower, &leader}) {
    auto job = server->Submit(QuickJob("quick"));
    ASSERT_TRUE(job.ok()) << job.status().ToString();
    EXPECT_TRUE(WaitForState(follower, (*job)["id"], "succeeded")) << server->output();
  }

  // A frozen leader keeps the lead (its session lives) and places nothing; the follower does
  // not place either, however many times its controller wakes.
  leader.process().Kill(SIGSTOP);
  auto waiting = follower.Submit(QuickJob("waits"));
  ASSERT_TRUE(waiting.ok()) << waiting.status().ToString();
  const std::string id = (*waiting)["id"];
  ASSERT_TRUE(follower.WaitForLeadChecks(3)) << follower.output();
  EXPECT_EQ(follower.State(id), "queued");
  EXPECT_FALSE(follower.Leads());

  // kill -9 of the leader ends its session: the follower takes the lead and the job runs.
  leader.process().Kill(SIGKILL);
  leader.process().Wait();
  ASSERT_TRUE(Eventually([&] { return follower.Leads(); }, kLeadTimeout)) << follower.output();
  EXPECT_TRUE(follower.process().WaitForOutput(kLeaderLine, std::chrono::seconds(1)));
  EXPECT_TRUE(WaitForState(follower, id, "succeeded")) << follower.State(id) << "\n"
                                                       << follower.output();
}

}  // namespace
}  // namespace tf::testing
