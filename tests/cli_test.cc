// The tensorfleet command against a live server: exit codes, tables, --json, and errors that
// say what was wrong.
#include "api_test_util.h"
#include "base/crypto.h"
#include "eventually.h"
#include "program_run.h"

namespace tf::testing {
namespace {

class CliTest : public ApiFixture {
 protected:
  ProgramRun Run(std::vector<std::string> args, bool with_credentials = true,
                 const std::string& token = "") {
    if (with_credentials) {
      return RunTensorfleetOn(app_->url(), token.empty() ? admin_token_ : token, args);
    }
    // Nothing to find: an empty data directory.
    args.insert(args.begin(), {"--data-dir", (dir_.path() / "empty").string()});
    return RunTensorfleet(args, {"TENSORFLEET_URL=", "TENSORFLEET_TOKEN="});
  }
};

TEST_F(CliTest, QueueLifecycle) {
  auto created = Run({"queue", "create", "jobs", "--visibility-timeout", "45"});
  EXPECT_EQ(created.exit_code, 0) << created.output;
  EXPECT_NE(created.output.find("created queue jobs"), std::string::npos);

  auto list = Run({"queue", "list"});
  EXPECT_EQ(list.exit_code, 0);
  EXPECT_NE(list.output.find("NAME"), std::string::npos);
  EXPECT_NE(list.output.find("45s"), std::string::npos);

  auto sent = Run({"queue", "send", "jobs", "a", "b", "--attr", "kind=test"});
  EXPECT_EQ(sent.exit_code, 0) << sent.output;

  auto received = Run({"--json", "queue", "receive", "jobs", "--max", "10"});
  ASSERT_EQ(received.exit_code, 0) << received.output;
  auto j = Json::parse(received.output);
  ASSERT_EQ(j["messages"].size(), 2u);
  EXPECT_EQ(j["messages"][0]["attributes"]["kind"]["string_value"], "test");

  std::string handle = j["messages"][0]["receipt_handle"];
  auto deleted = Run({"queue", "delete", "jobs", handle});
  EXPECT_EQ(deleted.exit_code, 0) << deleted.output;
  auto attrs = Run({"--json", "queue", "attributes", "jobs"});
  EXPECT_EQ(Json::parse(attrs.output)["messages"]["in_flight"], 1);

  auto purged = Run({"queue", "purge", "jobs"});
  EXPECT_NE(purged.output.find("purged 1 message"), std::string::npos) << purged.output;
  EXPECT_EQ(Run({"queue", "remove", "jobs"}).exit_code, 0);
  EXPECT_EQ(Run({"queue", "attributes", "jobs"}).exit_code, 1);
}

TEST_F(CliTest, ErrorsAreClearAndExitNonZero) {
  auto missing = Run({"queue", "send", "nope", "x"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.output.find("error: queue 'nope' does not exist"), std::string::npos)
      << missing.output;

  auto range = Run({"queue", "create", "q", "--retention", "5"});
  EXPECT_EQ(range.exit_code, 1);
  EXPECT_NE(range.output.find("retention_seconds must be between 60 and 1209600, got 5"),
            std::string::npos)
      << range.output;

  auto usage = Run({"queue", "create"});
  EXPECT_EQ(usage.exit_code, 2);

  auto no_server = Run({"status"}, /*with_credentials=*/false);
  EXPECT_EQ(no_server.exit_code, 1);
  EXPECT_NE(no_server.output.find("tensorfleet up"), std::string::npos) << no_server.output;

  EXPECT_EQ(Run({"queue", "create", "q"}).exit_code, 0);
  auto bad_handle = Run({"queue", "delete", "q", "not-a-handle"});
  EXPECT_EQ(bad_handle.exit_code, 1);
  EXPECT_NE(bad_handle.output.find("is not one this server issued"), std::string::npos)
      << bad_handle.output;
}

TEST_F(CliTest, TokensAndProjects) {
  EXPECT_EQ(Run({"project", "create", "research"}).exit_code, 0);
  auto token = Run({"--json", "token", "create", "ci", "--project", "research"});
  ASSERT_EQ(token.exit_code, 0) << token.output;
  std::string secret = Json::parse(token.output)["secret"];
  std::string id = Json::parse(token.output)["id"];

  auto status = Run({"--json", "status"}, true, secret);
  EXPECT_EQ(Json::parse(status.output)["project"], "research");

  auto listed = Run({"token", "list", "--all"});
  EXPECT_NE(listed.output.find(id), std::string::npos);
  EXPECT_EQ(listed.output.find(secret), std::string::npos) << "secrets must never be listed";

  EXPECT_EQ(Run({"token", "revoke", id}).exit_code, 0);
  auto revoked = Run({"status"}, true, secret);
  EXPECT_EQ(revoked.exit_code, 1);
  EXPECT_NE(revoked.output.find("revoked"), std::string::npos);
}

TEST_F(CliTest, NodesAreUndrainedAndLostOnesRemoved) {
  const std::string node = "node_" + RandomHex(8);
  ApiReply registered =
      Call("POST", "/v1/nodes",
           Json{{"id", node}, {"name", "box"}, {"info", {{"address", "10.0.0.9"}, {"cpus", 4}}}});
  ASSERT_EQ(registered.status, 200) << registered.body.dump();
  auto listed = Run({"nodes"});
  ASSERT_EQ(listed.exit_code, 0) << listed.output;
  EXPECT_NE(listed.output.find(node), std::string::npos) << listed.output;

  auto live = Run({"nodes", "rm", node});
  EXPECT_EQ(live.exit_code, 1);
  EXPECT_NE(live.output.find("is ready, not lost: only a lost node can be removed"),
            std::string::npos)
      << live.output;
  ASSERT_EQ(Run({"worker", "drain", "--node", node, "--deadline", "1s"}).exit_code, 0);
  auto undrained = Run({"nodes", "undrain", node});
  EXPECT_EQ(undrained.exit_code, 0) << undrained.output;
  EXPECT_EQ(undrained.output, node + " undrained: it takes new work again\n");
  auto again = Run({"worker", "undrain", "--node", node});
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_NE(again.output.find("is ready, not draining"), std::string::npos) << again.output;

  // No heartbeat past the timeout: lost, then removed.
  clock_.Advance(60 * kSecondMs);
  auto state = [&] {
    auto nodes = Run({"--json", "nodes"});
    if (nodes.exit_code != 0) return std::string("?");
    const Json listed = Json::parse(nodes.output);
    for (const Json& n : listed["nodes"]) {
      if (n["id"] == node) return n["state"].get<std::string>();
    }
    return std::string("gone");
  };
  ASSERT_TRUE(Eventually([&] { return state() == "lost"; }, std::chrono::seconds(30)))
      << Run({"--json", "nodes"}).output;
  auto removed = Run({"nodes", "rm", node});
  EXPECT_EQ(removed.exit_code, 0) << removed.output;
  EXPECT_EQ(removed.output, node + " removed\n");
  EXPECT_EQ(state(), "gone");
}

TEST_F(CliTest, HelpForEveryVerb) {
  for (auto verb : std::vector<std::vector<std::string>>{{"--help"},
                                                         {"up", "--help"},
                                                         {"server", "--help"},
                                                         {"queue", "--help"},
                                                         {"queue", "create", "--help"},
                                                         {"queue", "redrive", "--help"},
                                                         {"token", "--help"},
                                                         {"project", "--help"},
                                                         {"status", "--help"},
                                                         {"nodes", "rm", "--help"},
                                                         {"worker", "undrain", "--help"}}) {
    auto r = Run(verb);
    EXPECT_EQ(r.exit_code, 0) << verb[0];
    EXPECT_NE(r.output.find("Usage:"), std::string::npos) << verb[0];
  }
}

}  // namespace
}  // namespace tf::testing
