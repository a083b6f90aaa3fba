// Endpoints end to end: a real server (on SQLite and on PostgreSQL), a real worker, and
// replicas that are real `tensorfleet engine serve` processes on the small test model. A
// replica's output is in `endpoint logs`; one killed with kill -9 is replaced; an update rolls
// new replicas in before the old ones drain; `down` stops them all.
#include <signal.h>

#include "endpoints_test_util.h"
#include "engine_test_util.h"

namespace tf::testing {
namespace {

class EndpointsE2eTest : public EndpointsFixture {
 protected:
  std::string TinySpec(int max_batch) {
    return "name: tiny\nmodel: " + EngineData("llama-gqa") +
           "\nengine:\n  builtin: {threads: 1, kv_cache: 64Mi, max_batch: " +
           std::to_string(max_batch) + "}\nresources: {cpus: 1}\nreplicas: {min: 1, max: 2}\n";
  }
  std::string WriteSpec(int max_batch) {
    return EndpointsFixture::WriteSpec("tiny", TinySpec(max_batch));
  }
  Json Describe() { return EndpointsFixture::Describe("tiny"); }

  // Waits until the endpoint has exactly one replica, ready, of `generation`; returns it.
  Json WaitForOneReady(int generation, const std::string& other_than = "") {
    Json e = WaitFor(
        "tiny",
        [&](const Json& e) {
          if (e["replicas"].size() != 1) return false;
          const Json& r = e["replicas"][0];
          return r["state"] == "ready" && r["generation"] == generation && r["id"] != other_than;
        },
        "one ready replica of generation " + std::to_string(generation));
    return e["replicas"].empty() ? Json() : e["replicas"][0];
  }

  // A completion straight from a replica's server (`path` /v1/completions), or through the
  // gateway (`base` the server's URL, `path` /openai/v1/completions, `token` the project's).
  static int Complete(const std::string& base, const std::string& path = "/v1/completions",
                      const std::string& token = "") {
    auto client = http::Client::Create(base);
    if (!client.ok()) return -1;
    http::Headers headers = {{"Content-Type", "application/json"}};
    if (!token.empty()) headers.emplace_back("Authorization", "Bearer " + token);
    auto r = (*client)->Send("POST", path, headers,
                             R"({"model":"tiny","prompt":"hello","max_tokens":3})",
                             std::chrono::seconds(30));
    return r.ok() ? r->status : -1;
  }

  // A replica's server answers the gateway, which sends its key, and no one else (401).
  void ExpectServing(const Json& replica) {
    EXPECT_EQ(Complete("http://" + replica["address"].get<std::string>()), 401);
    EXPECT_EQ(Complete(server_->url(), "/openai/v1/completions", token_), 200);
  }
};

TEST_P(EndpointsE2eTest, ReplicasAreReplacedRolledAndStopped) {
  ProgramRun up = Run({"endpoint", "up", WriteSpec(4)});
  ASSERT_EQ(up.exit_code, 0) << up.output;
  Json first = WaitForOneReady(1);
  std::string address = first["address"];
  ExpectServing(first);

  // Its output is its job's log, kept in objects.
  ProgramRun logs;
  EXPECT_TRUE(Eventually([&] {
    logs = Run({"endpoint", "logs", "tiny"});
    return logs.exit_code == 0 && logs.output.find("engine serve: ready") != std::string::npos;
  })) << logs.output;
  ProgramRun by_position = Run({"endpoint", "logs", "tiny", "--replica", "1"});
  EXPECT_NE(by_position.output.find("engine serve: ready"), std::string::npos)
      << by_position.output;
  ProgramRun missing = Run({"endpoint", "logs", "tiny", "--replica", "rep_none"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.output.find("endpoint tiny has no replica 'rep_none'; it has: 1 " +
                                first["id"].get<std::string>()),
            std::string::npos)
      << missing.output;

  // kill -9 of the replica's server: its job fails, and a new replica takes its place.
  std::string port = PortOf(address);
  pid_t pid = FindProcess({"engine serve", "--port " + port});
  ASSERT_GT(pid, 0) << "no server process listening on " << port;
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  Json second = WaitForOneReady(1, first["id"]);
  ExpectServing(second);
  std::string reasons = Describe()["scaling"].dump();
  EXPECT_NE(reasons.find("replica " + first["id"].get<std::string>() + " ended"), std::string::npos)
      << reasons;

  // A changed engine option: generation 2 starts, then the generation-1 replica drains.
  ProgramRun update = Run({"endpoint", "up", WriteSpec(2)});
  ASSERT_EQ(update.exit_code, 0) << update.output;
  EXPECT_NE(update.output.find("generation 2"), std::string::npos) << update.output;
  Json third = WaitForOneReady(2);
  ExpectServing(third);
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
