// Endpoints end to end: a real server (on SQLite and on PostgreSQL), a real worker, and
// replicas that are real `tensorfleet engine serve` processes on the small test model. A
// replica killed with kill -9 is replaced; an update rolls new replicas in before the old ones
// drain; `down` stops them all.
#include <dirent.h>
#include <signal.h>

#include <fstream>

#include "child_process.h"
#include "engine_test_util.h"
#include "eventually.h"
#include "http/http.h"
#include "program_run.h"
#include "server_process.h"
#include "store_test_env.h"

namespace tf::testing {
namespace {

using Json = nlohmann::json;

// The pid of the process whose command line has every one of `parts`, or 0.
pid_t FindProcess(const std::vector<std::string>& parts) {
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return 0;
  pid_t found = 0;
  while (dirent* entry = readdir(proc)) {
    pid_t pid = static_cast<pid_t>(std::atoi(entry->d_name));
    if (pid <= 0) continue;
    std::ifstream in("/proc/" + std::string(entry->d_name) + "/cmdline", std::ios::binary);
    std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
    bool all = true;
    for (const std::string& part : parts) all = all && cmdline.find(part) != std::string::npos;
    if (all) {
      found = pid;
      break;
    }
  }
  closedir(proc);
  return found;
}

class EndpointsE2eTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    TF_SKIP_UNLESS_STORE_REACHABLE(GetParam());
    server_ = std::make_unique<TensorfleetServer>(
        (dir_.path() / "server").string(), 0,
        std::vector<std::string>{"--store", StoreUrl(GetParam(), dir_)});
    ASSERT_TRUE(server_->Start());
    ASSERT_TRUE(StartTensorfleetWorker(worker_, server_->url(), server_->token(),
                                       (dir_.path() / "worker").string(), 0, {"--cpus", "4"}));
  }

  ProgramRun Run(std::vector<std::string> args) {
    return RunTensorfleetOn(server_->url(), server_->token(), args);
  }

  std::string WriteSpec(int max_batch) {
    std::string path = (dir_.path() / "tiny.yaml").string();
    std::ofstream(path) << "name: tiny\n"
                        << "model: " << EngineData("llama-gqa") << "\n"
                        << "engine:\n  builtin: {threads: 1, kv_cache: 64Mi, max_batch: "
                        << max_batch << "}\n"
                        << "resources: {cpus: 1}\n"
                        << "replicas: {min: 1, max: 2}\n";
    return path;
  }

  Json Describe() {
    ProgramRun r = Run({"--json", "endpoint", "describe", "tiny"});
    return r.exit_code == 0 ? Json::parse(r.output, nullptr, false) : Json();
  }

  // Waits until the endpoint has exactly one replica, ready, of `generation`; returns it.
  Json WaitForOneReady(int generation, const std::string& other_than = "") {
    Json replica;
    bool ready = Eventually(
        [&] {
          Json e = Describe();
          if (!e.is_object() || e["replicas"].size() != 1) return false;
          replica = e["replicas"][0];
          return replica["state"] == "ready" && replica["generation"] == generation &&
                 replica["id"] != other_than;
        },
        std::chrono::seconds(90));
    EXPECT_TRUE(ready) << Describe().dump(2) << "\n" << server_->output();
    return replica;
  }

  // A completion straight from a replica's server.
  int Complete(const std::string& address) {
    auto client = http::Client::Create("http://" + address);
    if (!client.ok()) return -1;
    auto r = (*client)->Send("POST", "/v1/completions", {{"Content-Type", "application/json"}},
                             R"({"model":"tiny","prompt":"hello","max_tokens":3})",
                             std::chrono::seconds(30));
    return r.ok() ? r->status : -1;
  }

  TempDir dir_;
  std::unique_ptr<TensorfleetServer> server_;
  ChildProcess worker_;
};

TEST_P(EndpointsE2eTest, ReplicasAreReplacedRolledAndStopped) {
  ProgramRun up = Run({"endpoint", "up", WriteSpec(4)});
  ASSERT_EQ(up.exit_code, 0) << up.output;
  Json first = WaitForOneReady(1);
  std::string address = first["address"];
  EXPECT_EQ(Complete(address), 200);

  // kill -9 of the replica's server: its job fails, and a new replica takes its place.
  std::string port = address.substr(address.find(':') + 1);
  pid_t pid = FindProcess({"engine serve", "--port " + port});
  ASSERT_GT(pid, 0) << "no server process listening on " << port;
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  Json second = WaitForOneReady(1, first["id"]);
  EXPECT_EQ(Complete(second["address"]), 200);
  std::string reasons = Describe()["scaling"].dump();
  EXPECT_NE(reasons.find("replica " + first["id"].get<std::string>() + " ended"), std::string::npos)
      << reasons;

  // A changed engine option: generation 2 starts, then the generation-1 replica drains.
  ProgramRun update = Run({"endpoint", "up", WriteSpec(2)});
  ASSERT_EQ(update.exit_code, 0) << update.output;
  EXPECT_NE(update.output.find("generation 2"), std::string::npos) << update.output;
  Json third = WaitForOneReady(2);
  EXPECT_EQ(Complete(third["address"]), 200);
  EXPECT_TRUE(Eventually([&] { return FindProcess({"engine serve", "--port " + port}) == 0; }));

  ProgramRun down = Run({"endpoint", "down", "tiny"});
  ASSERT_EQ(down.exit_code, 0) << down.output;
  EXPECT_TRUE(Eventually(
      [&] {
        return Run({"endpoint", "describe", "tiny"}).exit_code == 1;
      },
      std::chrono::seconds(60)))
      << Describe().dump(2);
  std::string last_port =
      third["address"].get<std::string>().substr(third["address"].get<std::string>().find(':') + 1);
  EXPECT_TRUE(Eventually([&] {
    return FindProcess({"engine serve", "--port " + last_port}) == 0;
  }));
  ProgramRun ps = Run({"ps"});
  EXPECT_EQ(ps.output.find("running"), std::string::npos) << ps.output;
}

INSTANTIATE_TEST_SUITE_P(Backends, EndpointsE2eTest, ::testing::ValuesIn(StoreBackends()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace tf::testing
