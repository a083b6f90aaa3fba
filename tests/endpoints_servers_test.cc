// Several servers over one PostgreSQL database, each with its gateway: a request that comes
// through a server that does not lead reaches the leader's controller through the store
// (endpoints/shared_load.h), so an endpoint at zero starts a replica for it and answers it.
// Needs a PostgreSQL server (scripts/with-postgres.sh); skipped without one. The test works in
// a schema of its own, so that the lead is between its two servers only.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>

#include "base/crypto.h"
#include "child_process.h"
#include "engine_test_util.h"
#include "eventually.h"
#include "http/http.h"
#include "pg_test_schema.h"
#include "program_run.h"
#include "server_process.h"
#include "store_test_env.h"

namespace tf::testing {
namespace {

using Json = nlohmann::json;

// Whether the server at `url` says it leads; nullopt while it does not answer.
std::optional<bool> Leads(const TensorfleetServer& server) {
  auto client = http::Client::Create(server.url());
  if (!client.ok()) return std::nullopt;
  auto status =
      (*client)->Send("GET", "/v1/status", {{"Authorization", "Bearer " + server.token()}}, "",
                      std::chrono::seconds(5));
  if (!status.ok() || status->status != 200) return std::nullopt;
  return Json::parse(status->body, nullptr, false).value("leader", false);
}

TEST(EndpointsOnSeveralServersTest, ARequestThroughAServerThatDoesNotLeadScalesFromZero) {
  if (TestPostgresUrl().empty()) GTEST_SKIP() << "TENSORFLEET_TEST_POSTGRES_URL is not set";
  TempDir dir;
  PgTestSchema schema(TestPostgresUrl(), "endpoints_");
  // One after the other: the first migrates the new schema.
  std::vector<std::unique_ptr<TensorfleetServer>> servers;
  for (const char* name : {"server-a", "server-b"}) {
    servers.push_back(std::make_unique<TensorfleetServer>(
        (dir.path() / name).string(), 0, std::vector<std::string>{"--store", schema.url()}));
    ASSERT_TRUE(servers.back()->Start());
  }
  int leader = -1;
  ASSERT_TRUE(Eventually([&] {
    for (int i = 0; i < 2; ++i) {
      if (Leads(*servers[i]).value_or(false)) leader = i;
    }
    return leader >= 0;
  })) << "neither server leads";
  TensorfleetServer& lead = *servers[leader];
  TensorfleetServer& other = *servers[1 - leader];
  ASSERT_EQ(Leads(other), false);

  ChildProcess worker;
  ASSERT_TRUE(StartTensorfleetWorker(worker, lead.url(), lead.token(),
                                     (dir.path() / "worker").string(), 0, {"--cpus", "2"}));
  ProgramRun project = RunTensorfleetOn(lead.url(), lead.token(), {"project", "create", "p"});
  ASSERT_EQ(project.exit_code, 0) << project.output;
  ProgramRun token = RunTensorfleetOn(lead.url(), lead.token(),
                                      {"--json", "token", "create", "t", "--project", "p"});
  ASSERT_EQ(token.exit_code, 0) << token.output;
  const std::string secret = Json::parse(token.output)["secret"];
  const std::string spec = (dir.path() / "tiny.yaml").string();
  std::ofstream(spec) << "name: tiny\nmodel: " << EngineData("llama-gqa")
                      << "\nengine:\n  builtin: {threads: 1, kv_cache: 64Mi}\n"
                         "resources: {cpus: 1}\nreplicas: {min: 0, max: 1}\n";
  ProgramRun up = RunTensorfleetOn(lead.url(), secret, {"endpoint", "up", spec});
  ASSERT_EQ(up.exit_code, 0) << up.output;

  // The request waits at the other server's gateway; only the leader's controller starts
  // replicas, and it has seen no request of its own.
  auto client = http::Client::Create(other.url());
  ASSERT_TRUE(client.ok());
  auto answer = (*client)->Send(
      "POST", "/openai/v1/completions",
      {{"Content-Type", "application/json"}, {"Authorization", "Bearer " + secret}},
      R"({"model":"tiny","prompt":"hello","max_tokens":3})", std::chrono::seconds(120));
  ASSERT_TRUE(answer.ok()) << answer.status().ToString();
  EXPECT_EQ(answer->status, 200) << answer->body << "\n" << lead.output() << other.output();

  ProgramRun describe =
      RunTensorfleetOn(lead.url(), secret, {"--json", "endpoint", "describe", "tiny"});
  ASSERT_EQ(describe.exit_code, 0) << describe.output;
  Json e = Json::parse(describe.output);
  bool from_zero = false;
  for (const Json& decision : e["scaling"]) {
    from_zero = from_zero || decision["reason"] == "1 request waiting and no replica: from 0 to 1";
  }
  EXPECT_TRUE(from_zero) << e.dump(2);

  // One more request, through the leader: `describe` on either server counts both (the other
  // server's once it has published the few seconds it answered in).
  auto lead_client = http::Client::Create(lead.url());
  ASSERT_TRUE(lead_client.ok());
  auto second =
      (*lead_client)
          ->Send("POST", "/openai/v1/completions",
                 {{"Content-Type", "application/json"}, {"Authorization", "Bearer " + secret}},
                 R"({"model":"tiny","prompt":"hello","max_tokens":3})", std::chrono::seconds(120));
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(second->status, 200) << second->body;
  for (TensorfleetServer* at : {&lead, &other}) {
    Json traffic;
    EXPECT_TRUE(Eventually([&] {
      ProgramRun d =
          RunTensorfleetOn(at->url(), secret, {"--json", "endpoint", "describe", "tiny"});
      if (d.exit_code != 0) return false;
      traffic = Json::parse(d.output, nullptr, false)["traffic"];
      return traffic.is_object() && traffic["requests"] == 2;
    })) << traffic.dump();
    EXPECT_EQ(traffic["servers"], 2) << traffic.dump();
    EXPECT_GT(traffic["latency_ms"]["p50"].get<double>(), 0) << traffic.dump();
    EXPECT_GT(traffic["completion_tokens"].get<int64_t>(), 0) << traffic.dump();
  }

  ProgramRun down = RunTensorfleetOn(lead.url(), secret, {"endpoint", "down", "tiny"});
  EXPECT_EQ(down.exit_code, 0) << down.output;
  worker.Kill(SIGTERM);
  worker.Wait();
}

}  // namespace
}  // namespace tf::testing
