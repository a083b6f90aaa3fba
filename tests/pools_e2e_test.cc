// Node pools end to end: a real server whose local pool starts real `tensorfleet worker`
// processes for a queued gang, stops them once they are idle, and replaces a spot machine
// killed in the middle of a job; a command pool whose script starts the workers; on both store
// back ends.
#include <signal.h>

#include "endpoints_test_util.h"  // FindProcess
#include "file_test_util.h"
#include "http_test_util.h"  // first: see the note in base/async.h
#include "jobs_test_util.h"
#include "pg_test_schema.h"
#include "pools/pool_spec.h"
#include "pools/ssh_provider.h"
#include "program_run.h"
#include "server_process.h"

namespace tf::testing {
namespace {

// A real OpenSSH server on 127.0.0.1 that lets root in with a key of the test's own.
class LoopbackSshd {
 public:
  // "" once it listens; otherwise why it cannot run here (the test is then skipped).
  std::string Start(const std::filesystem::path& dir) {
    if (::geteuid() != 0) return "sshd needs root, and the ssh provider's test logs in as root";
    if (!std::filesystem::exists("/usr/sbin/sshd")) return "openssh-server is not installed";
    std::filesystem::create_directories(dir);
    key_ = dir / "client_key";
    for (const std::filesystem::path& k : {dir / "host_key", key_}) {
      ProgramRun made =
          RunProgram({"/usr/bin/ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", k.string()});
      if (made.exit_code != 0) return "ssh-keygen failed: " + made.output;
    }
    std::filesystem::copy_file(key_.string() + ".pub", dir / "authorized_keys");
    std::filesystem::create_directories("/run/sshd");  // sshd's privilege separation directory
    port_ = FreePort();
    std::ofstream(dir / "sshd_config")
        << "Port " << port_ << "\nListenAddress 127.0.0.1\nHostKey " << (dir / "host_key").string()
        << "\nAuthorizedKeysFile " << (dir / "authorized_keys").string()
        << "\nPermitRootLogin prohibit-password\nPasswordAuthentication no\n"
           "KbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\n"
        << "PidFile " << (dir / "sshd.pid").string() << "\n";
    if (!sshd_.Start({"/usr/sbin/sshd", "-D", "-e", "-f", (dir / "sshd_config").string()})) {
      return "cannot start sshd";
    }
    if (!sshd_.WaitForOutput("Server listening", std::chrono::seconds(10))) {
      return "sshd did not start: " + sshd_.output();
    }
    return "";
  }
  int port() const { return port_; }
  const std::filesystem::path& key() const { return key_; }

 private:
  ChildProcess sshd_;
  int port_ = 0;
  std::filesystem::path key_;
};

class PoolsE2eTest : public JobsFixture, public ::testing::WithParamInterface<std::string> {
 protected:
  void SetUp() override {
    TF_SKIP_UNLESS_STORE_REACHABLE(GetParam());
    JobsFixture::SetUp();
  }

  void Configure(api::AppOptions& o) override {
    if (GetParam() == "postgresql") {
      // A schema of the test's own: no job another test left waits for this test's pool.
      schema_ = std::make_unique<PgTestSchema>(TestPostgresUrl(), "pools_");
      o.store_url = schema_->url();
    }
    o.tensorfleet_binary = TENSORFLEET_BINARY;
  }

  void CreatePool(const std::string& yaml) {
    auto created = api_->Call("POST", "/v1/pools", Json{{"spec", yaml}, {"source", "pool.yaml"}});
    ASSERT_TRUE(created.ok()) << created.status().ToString();
  }

  Json Pool(const std::string& name) {
    auto p = api_->Call("GET", "/v1/pools/" + name);
    EXPECT_TRUE(p.ok()) << p.status().ToString();
    return p.ok() ? *p : Json();
  }

  size_t NodeCount() {
    auto nodes = api_->Call("GET", "/v1/nodes");
    return nodes.ok() ? (*nodes)["nodes"].size() : 999;
  }

  // Whether a pool's worker process of this test is alive (its command line names the
  // server's data directory).
  pid_t PoolWorker(const std::string& machine = "") {
    std::vector<std::string> parts = {"worker", (dir_.path() / "server" / "pools").string()};
    if (!machine.empty()) parts.push_back("--name " + machine);
    return FindProcess(parts);
  }

  std::unique_ptr<PgTestSchema> schema_;
};

TEST_P(PoolsE2eTest, ALocalPoolStartsTwoNodesForAGangAndStopsThemWhenIdle) {
  CreatePool(
      "name: gpu\n"
      "machine: {gpus: 1, cpus: 2, memory: 1Gi, price_per_hour: 1.5}\n"
      "max: 2\n"
      "idle_timeout: 2s\n");
  EXPECT_EQ(NodeCount(), 0u);
  auto job = Submit(
      "name: gang\n"
      "nodes: 2\n"
      "resources: {gpus: 1, cpus: 1}\n"
      "command: echo \"rank $TENSORFLEET_NODE_RANK of $TENSORFLEET_NUM_NODES\"\n");
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  std::string id = (*job)["id"];
  Json done = WaitFor(id, Finished);
  ASSERT_EQ(done["state"], "succeeded") << done.dump(2);
  EXPECT_NE(Log(id, 1, 1).find("rank 1 of 2"), std::string::npos) << Log(id, 1, 1);

  // Both nodes were the pool's, started for this job.
  Json pool = Pool("gpu");
  std::string started;
  for (const Json& d : pool["decisions"]) {
    if (d["what"].get<std::string>().starts_with("started ")) started = d["why"];
  }
  EXPECT_EQ(started, "for " + id) << pool.dump(2);

  // Idle for 2 s: both stop, their nodes are forgotten and their processes gone.
  bool idle_stopped =
      Eventually([&] { return Pool("gpu")["machines"].empty() && NodeCount() == 0; },
                 std::chrono::seconds(30));
  EXPECT_TRUE(idle_stopped) << Pool("gpu").dump(2);
  EXPECT_EQ(Pool("gpu")["decisions"][0]["why"], "idle for 2s");
  EXPECT_TRUE(Eventually([&] { return PoolWorker() == 0; }, std::chrono::seconds(10)));

  // The CLI shows the same.
  ProgramRun describe = RunTensorfleetOn(app_->url(), admin_token_, {"pool", "describe", "gpu"});
  ASSERT_EQ(describe.exit_code, 0) << describe.output;
  EXPECT_NE(describe.output.find("nodes          none (min 0, max 2)"), std::string::npos)
      << describe.output;
  EXPECT_NE(describe.output.find("idle for 2s"), std::string::npos) << describe.output;
  ProgramRun ls = RunTensorfleetOn(app_->url(), admin_token_, {"pool", "ls"});
  EXPECT_NE(ls.output.find("1 GPU, 2 CPUs, 1Gi, $1.5/h"), std::string::npos) << ls.output;
}

TEST_P(PoolsE2eTest, ASpotMachineKilledMidJobIsReplacedAndTheJobResumes) {
  CreatePool(
      "name: spot\n"
      "machine: {gpus: 1, cpus: 2, spot: true, price_per_hour: 0.4}\n"
      "max: 1\n"
      "idle_timeout: 1m\n");
  auto job = Submit(CountingJob("counting", 60));
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  std::string id = (*job)["id"];
  WaitFor(id, [&](const Json&) { return Log(id, 1).find("step=5 ") != std::string::npos; });
  std::string first = Pool("spot")["machines"][0]["id"];
  pid_t worker = PoolWorker(first);
  ASSERT_GT(worker, 0);
  ASSERT_EQ(kill(worker, SIGKILL), 0);

  Json done = WaitFor(id, Finished, std::chrono::seconds(90));
  ASSERT_EQ(done["state"], "succeeded") << done.dump(2) << Pool("spot").dump(2);
  ASSERT_EQ(done["attempts"].size(), 2u) << done.dump(2);
  EXPECT_NE(Log(id, 2).find("step=60 "), std::string::npos) << Log(id, 2);
  // The second attempt ran on the replacement.
  Json pool = Pool("spot");
  ASSERT_EQ(pool["machines"].size(), 1u) << pool.dump(2);
  EXPECT_NE(pool["machines"][0]["id"], first);
  EXPECT_EQ(done["attempts"][1]["ranks"][0]["node"], pool["machines"][0]["node_id"])
      << done.dump(2) << pool.dump(2);
  bool replaced = false;
  for (const Json& d : pool["decisions"]) {
    replaced |= d["what"] == "stopped " + first &&
                d["why"].get<std::string>().starts_with("it stopped by itself");
  }
  EXPECT_TRUE(replaced) << pool.dump(2);
}

// The command provider with examples/pools/local-command/machines.py, whose machines are real
// workers started by the script (not the server's children), registering with the join token
// the script is given.
TEST_P(PoolsE2eTest, ACommandPoolsScriptStartsAWorkerForAJobAndStopsItWhenIdle) {
  std::filesystem::path machines = dir_.path() / "scripted-machines";
  // The script's workers are not the server's children: none outlives the test.
  struct KillLeftovers {
    std::filesystem::path dir;
    ~KillLeftovers() {
      std::error_code ec;
      for (const auto& m : std::filesystem::directory_iterator(dir, ec)) {
        std::string pid = ReadFile(m.path() / "pid");
        if (!pid.empty()) kill(std::stoi(pid), SIGKILL);
      }
    }
  } kill_leftovers{machines};
  std::string script =
      std::string(TENSORFLEET_SOURCE_DIR) + "/examples/pools/local-command/machines.py";
  CreatePool(
      "name: scripted\n"
      "provider:\n"
      "  type: command\n"
      "  create: " +
      script +
      "\n"
      "  delete: " +
      script +
      "\n"
      "  list: " +
      script +
      "\n"
      "  timeout: 30s\n"
      "  env: {TENSORFLEET_BINARY: " TENSORFLEET_BINARY ", MACHINES_DIR: " +
      machines.string() +
      "}\n"
      "machine: {cpus: 2, memory: 1Gi, price_per_hour: 0.17}\n"
      "max: 1\n"
      "idle_timeout: 2s\n");
  auto job = Submit("name: scripted\nresources: {cpus: 2}\ncommand: echo ran on $(hostname)\n");
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  std::string id = (*job)["id"];
  Json done = WaitFor(id, Finished);
  ASSERT_EQ(done["state"], "succeeded") << done.dump(2) << Pool("scripted").dump(2);
  std::string machine;
  Json pool = Pool("scripted");
  for (const Json& d : pool["decisions"]) {
    std::string what = d["what"];
    if (what.starts_with("started ")) machine = what.substr(8);
  }
  ASSERT_FALSE(machine.empty()) << pool.dump(2);
  // Its env may hold a cloud's credentials: describe names them, no more.
  EXPECT_EQ(pool["provider"]["env"]["MACHINES_DIR"], "(hidden)") << pool.dump(2);
  // The worker kept its node's credential; its join token is spent.
  EXPECT_EQ(ReadFile(machines / machine / "worker" / "node-credential").substr(0, 4), "tfn_");
  auto tokens = api_->Call("GET", "/v1/join-tokens");
  ASSERT_TRUE(tokens.ok());
  bool spent = false;
  for (const Json& t : (*tokens)["join_tokens"]) {
    spent |= t["name"] == "pool scripted, machine " + machine && t["state"] == "used up";
  }
  EXPECT_TRUE(spent) << tokens->dump(2);

  // Idle for 2 s: the script's delete stops the worker, and the node is forgotten.
  std::string pid = ReadFile(machines / machine / "pid");
  bool stopped =
      Eventually([&] { return Pool("scripted")["machines"].empty() && NodeCount() == 0; },
                 std::chrono::seconds(60));
  EXPECT_TRUE(stopped) << Pool("scripted").dump(2);
  EXPECT_FALSE(std::filesystem::exists(machines / machine));
  EXPECT_FALSE(pid.empty());
  EXPECT_TRUE(Eventually([&] { return ReadFile("/proc/" + pid + "/cmdline").empty(); },
                         std::chrono::seconds(10)));
}

// The ssh provider against a real sshd on loopback: it installs this build's binary on the
// "host", starts the worker there for a waiting job, and stops it once idle.
TEST_P(PoolsE2eTest, AnSshPoolInstallsTheBinaryStartsAWorkerOverSshAndStopsIt) {
  LoopbackSshd sshd;
  if (std::string why = sshd.Start(dir_.path() / "sshd"); !why.empty()) GTEST_SKIP() << why;
  std::filesystem::path remote = dir_.path() / "remote";
  std::string host = "root@127.0.0.1:" + std::to_string(sshd.port());
  CreatePool(
      "name: hosts\n"
      "provider:\n"
      "  type: ssh\n"
      "  hosts: [" +
      host +
      "]\n"
      "  key: " +
      sshd.key().string() +
      "\n"
      "  remote_dir: " +
      remote.string() +
      "\n"
      "  timeout: 30s\n"
      "machine: {cpus: 2, memory: 1Gi, price_per_hour: 0.3}\n"
      "max: 1\n"
      "idle_timeout: 2s\n");
  auto job = Submit("name: over-ssh\nresources: {cpus: 2}\ncommand: echo ran over ssh\n");
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  std::string id = (*job)["id"];
  Json done = WaitFor(id, Finished);
  ASSERT_EQ(done["state"], "succeeded") << done.dump(2) << Pool("hosts").dump(2);
  EXPECT_NE(Log(id, 1).find("ran over ssh"), std::string::npos);

  std::string machine;
  Json pool = Pool("hosts");
  for (const Json& d : pool["decisions"]) {
    std::string what = d["what"];
    if (what.starts_with("started ")) machine = what.substr(8);
  }
  ASSERT_FALSE(machine.empty()) << pool.dump(2);
  // This build's binary was installed, readable by its owner only; the worker registered with
  // its join token and keeps its node's credential there.
  std::filesystem::path installed = remote / "bin" / "tensorfleet";
  EXPECT_EQ(std::filesystem::file_size(installed), std::filesystem::file_size(TENSORFLEET_BINARY));
  EXPECT_EQ(std::filesystem::status(installed).permissions() & std::filesystem::perms::all,
            std::filesystem::perms::owner_all);
  std::filesystem::path machine_dir = remote / "pools" / "hosts" / machine;
  EXPECT_EQ(ReadFile(machine_dir / "worker" / "node-credential").substr(0, 4), "tfn_");
  std::string pid = ReadFile(machine_dir / "pid");
  ASSERT_FALSE(pid.empty());
  // The join token is on no command line.
  EXPECT_EQ(ReadFile("/proc/" + pid.substr(0, pid.find('\n')) + "/cmdline").find("tfj_"),
            std::string::npos);

  bool stopped = Eventually([&] { return Pool("hosts")["machines"].empty() && NodeCount() == 0; },
                            std::chrono::seconds(60));
  EXPECT_TRUE(stopped) << Pool("hosts").dump(2);
  EXPECT_FALSE(std::filesystem::exists(machine_dir));
  EXPECT_TRUE(Eventually(
      [&] { return ReadFile("/proc/" + pid.substr(0, pid.find('\n')) + "/cmdline").empty(); },
      std::chrono::seconds(10)));

  // A key the host does not accept: the error says so, and no machine starts.
  auto spec = pools::ParsePoolSpec("name: refused\nprovider: {type: ssh, hosts: [" + host +
                                       "], key: " + (dir_.path() / "sshd" / "host_key").string() +
                                       ", retries: 0, timeout: 20s}\n",
                                   "refused.yaml");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  pools::ProviderContext context;
  context.server_url = app_->url();
  context.binary = TENSORFLEET_BINARY;
  context.dir = dir_.path() / "refused";
  pools::SshProvider refused(*spec, context);
  Status created = refused.Create(*spec, "refused-1", "tfj_x");
  ASSERT_FALSE(created.ok());
  EXPECT_NE(created.message().find("on " + host + " failed: exit code 255"), std::string::npos)
      << created.ToString();
  EXPECT_NE(created.message().find("Permission denied"), std::string::npos) << created.ToString();
}

TEST_P(PoolsE2eTest, OnlyAdminsManagePoolsAndBadSpecsAreRefusedWithTheirLine) {
  auto bad = api_->Call("POST", "/v1/pools",
                        Json{{"spec", "name: gpu\nmax: -1\n"}, {"source", "pool.yaml"}});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("pool.yaml:2: max: must be an integer from 0 to 1000"),
            std::string::npos)
      << bad.status().ToString();

  // The CLI: create from a file, scale, describe as JSON, delete.
  std::string spec = (dir_.path() / "cpu.yaml").string();
  std::ofstream(spec) << "name: cpu\nmachine: {cpus: 2}\nmax: 1\n";
  auto cli = [&](const std::vector<std::string>& args) {
    return RunTensorfleetOn(app_->url(), admin_token_, args);
  };
  ProgramRun created = cli({"pool", "create", spec});
  ASSERT_EQ(created.exit_code, 0) << created.output;
  EXPECT_NE(created.output.find("created pool cpu (0 to 1 nodes of 2 CPUs, $0/h)"),
            std::string::npos)
      << created.output;
  ProgramRun again = cli({"pool", "create", spec});
  EXPECT_NE(again.exit_code, 0);
  EXPECT_NE(again.output.find("pool 'cpu' exists"), std::string::npos) << again.output;
  ProgramRun scaled = cli({"pool", "scale", "cpu", "--max", "4"});
  EXPECT_NE(scaled.output.find("pool cpu: from 0 to 4 nodes"), std::string::npos) << scaled.output;
  ProgramRun below = cli({"pool", "scale", "cpu", "--min", "5"});
  EXPECT_NE(below.exit_code, 0);
  EXPECT_NE(below.output.find("'max': must be at least min (5), got 4"), std::string::npos)
      << below.output;
  ProgramRun json = cli({"--json", "pool", "describe", "cpu"});
  ASSERT_EQ(json.exit_code, 0) << json.output;
  EXPECT_EQ(Json::parse(json.output)["max"], 4);
  EXPECT_EQ(cli({"pool", "delete", "cpu"}).exit_code, 0);
  ProgramRun gone = cli({"pool", "describe", "cpu"});
  EXPECT_NE(gone.exit_code, 0);
  EXPECT_NE(gone.output.find("pool 'cpu' does not exist"), std::string::npos) << gone.output;

  auto huge = api_->Call("POST", "/v1/pools/gpu/scale", Json{{"max", int64_t{1} << 40}});
  ASSERT_FALSE(huge.ok());
  EXPECT_NE(huge.status().message().find("'max' is out of range: 1099511627776"), std::string::npos)
      << huge.status().ToString();

  auto project = api_->Call("POST", "/v1/projects", Json{{"name", "team"}});
  ASSERT_TRUE(project.ok()) << project.status().ToString();
  auto token = api_->Call("POST", "/v1/tokens", Json{{"name", "t"}, {"project", "team"}});
  ASSERT_TRUE(token.ok()) << token.status().ToString();
  ProgramRun ls = RunTensorfleetOn(app_->url(), (*token)["secret"], {"pool", "ls"});
  EXPECT_NE(ls.exit_code, 0);
  EXPECT_NE(ls.output.find("admin"), std::string::npos) << ls.output;
}

// `tensorfleet server --config FILE`: the pools the file declares are created at start, and
// updated at the next start when the file changed; a flag on the command line wins over the
// file; a bad pool stops the start, naming the file's line.
TEST(PoolsConfigFileTest, AServerCreatesAndUpdatesThePoolsItsConfigFileDeclares) {
  TempDir dir;
  std::string config = (dir.path() / "server.yaml").string();
  auto write = [&](const std::string& max) {
    std::ofstream(config) << "port: 1\n"  // the command line's --port 0 wins
                          << "heartbeat_timeout: 5s\n"
                          << "webhook_hosts: hooks.internal, 10.0.0.5:8080\n"
                          << "pools:\n"
                          << "  - name: cpu\n"
                          << "    machine: {cpus: 2, price_per_hour: 0.1}\n"
                          << "    max: " << max << "\n";
  };
  write("2");
  TensorfleetServer server((dir.path() / "data").string(), 0, {"--config", config});
  ASSERT_TRUE(server.Start());
  auto describe = [&] {
    ProgramRun run =
        RunTensorfleetOn(server.url(), server.token(), {"--json", "pool", "describe", "cpu"});
    EXPECT_EQ(run.exit_code, 0) << run.output;
    return Json::parse(run.output, nullptr, false);
  };
  Json pool = describe();
  EXPECT_EQ(pool["max"], 2) << pool.dump(2);
  EXPECT_EQ(pool["version"], 1);
  EXPECT_NE(server.output().find("pool declared at " + config + ": created"), std::string::npos)
      << server.output();
  // The file's other settings reach the server too: budgets' webhooks go to its hosts only.
  ProgramRun hook = RunTensorfleetOn(server.url(), server.token(),
                                     {"cost", "budget", "set", "gpu", "--amount", "10", "--webhook",
                                      "http://169.254.169.254/latest/meta-data/"});
  EXPECT_NE(hook.exit_code, 0) << hook.output;
  EXPECT_NE(hook.output.find("webhooks may go only to hooks.internal, 10.0.0.5:8080"),
            std::string::npos)
      << hook.output;
  EXPECT_EQ(RunTensorfleetOn(server.url(), server.token(),
                             {"cost", "budget", "set", "gpu", "--amount", "10", "--webhook",
                              "http://hooks.internal:9000/budget"})
                .exit_code,
            0);
  server.Stop();

  write("4");
  ASSERT_TRUE(server.Start());
  pool = describe();
  EXPECT_EQ(pool["max"], 4) << pool.dump(2);
  EXPECT_EQ(pool["version"], 2);
  server.Stop();

  write("-1");
  ProgramRun refused = RunProgram({TENSORFLEET_BINARY, "--data-dir", (dir.path() / "data").string(),
                                   "server", "--port", "0", "--config", config});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.output.find(config + ":7: max: must be an integer from 0 to 1000"),
            std::string::npos)
      << refused.output;
}

INSTANTIATE_TEST_SUITE_P(Backends, PoolsE2eTest, ::testing::ValuesIn(StoreBackends()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace tf::testing
