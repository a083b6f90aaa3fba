// The command provider (pools/command_provider.h) with real scripts: a fake cloud in a
// directory, scripts that succeed, fail, hang, and create a machine but fail before saying so
// (the retry must not start a second one).
#include <gtest/gtest.h>
#include <signal.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "child_process.h"
#include "file_test_util.h"
#include "pools/command_provider.h"
#include "pools/script_call.h"
#include "store_test_env.h"

namespace tf::pools {
namespace {

using tf::testing::ReadFile;
using tf::testing::TempDir;

// The fake cloud: one file per machine in $CLOUD, holding the create call's input. The
// scripts count their calls in $CLOUD/calls.<action>.
constexpr const char* kCloudPrelude = R"(#!/usr/bin/python3
import json, os, sys
cloud = os.environ["CLOUD"]
call = json.load(sys.stdin)
counter = os.path.join(cloud, "calls." + call["action"])
calls = int(open(counter).read()) + 1 if os.path.exists(counter) else 1
open(counter, "w").write(str(calls))
)";

constexpr const char* kCreate = R"(
path = os.path.join(cloud, call["machine"])
if not os.path.exists(path):
    open(path, "w").write(json.dumps(call))
if os.environ.get("FAIL_FIRST_CREATE") and calls == 1:
    sys.stderr.write("lost the connection after asking\n")
    sys.exit(1)
print(json.dumps({"detail": "i-" + call["machine"]}))
)";

constexpr const char* kDelete = R"(
path = os.path.join(cloud, call["machine"])
if os.path.exists(path):
    os.remove(path)
)";

constexpr const char* kList = R"(
names = sorted(n for n in os.listdir(cloud) if not n.startswith("calls."))
print(json.dumps({"machines": [{"id": n, "running": n != "stopped-one", "detail": "i-" + n}
                               for n in names]}))
)";

class CommandProviderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::filesystem::create_directories(cloud());
    create_ = Script("create", std::string(kCloudPrelude) + kCreate);
    delete_ = Script("delete", std::string(kCloudPrelude) + kDelete);
    list_ = Script("list", std::string(kCloudPrelude) + kList);
  }

  std::filesystem::path cloud() const { return dir_.path() / "cloud"; }

  std::string Script(const std::string& name, const std::string& text) {
    std::filesystem::path path = dir_.path() / name;
    std::ofstream(path) << text;
    std::filesystem::permissions(path, std::filesystem::perms::owner_all);
    return path.string();
  }

  PoolSpec Spec(std::map<std::string, std::string> env = {}) {
    PoolSpec spec;
    spec.name = "gpu";
    spec.provider.type = ProviderType::kCommand;
    spec.provider.command.create = {create_};
    spec.provider.command.remove = {delete_};
    spec.provider.command.list = {list_};
    spec.provider.timeout_ms = 20 * kSecondMs;
    spec.provider.retries = 2;
    env["CLOUD"] = cloud().string();
    spec.provider.command.env = env;
    spec.machine.gpus = 1;
    spec.machine.price_per_hour = 1.2;
    return spec;
  }

  std::unique_ptr<CommandProvider> Provider(const PoolSpec& spec) {
    ProviderContext context;
    context.server_url = "http://10.0.0.5:8470";
    context.dir = dir_.path() / "pool";
    return std::make_unique<CommandProvider>(spec, context);
  }

  int Calls(const std::string& action) {
    std::string n = ReadFile(cloud() / ("calls." + action));
    return n.empty() ? 0 : std::stoi(n);
  }

  TempDir dir_;
  std::string create_, delete_, list_;
};

TEST_F(CommandProviderTest, MachinesAreCreatedListedAndDeletedThroughTheScripts) {
  PoolSpec spec = Spec();
  auto provider = Provider(spec);
  Status created = provider->Create(spec, "gpu-a1b2c3", "tfj_secret");
  ASSERT_TRUE(created.ok()) << created.ToString();

  auto input = nlohmann::json::parse(ReadFile(cloud() / "gpu-a1b2c3"));
  EXPECT_EQ(input["action"], "create");
  EXPECT_EQ(input["pool"], "gpu");
  EXPECT_EQ(input["machine"], "gpu-a1b2c3");
  EXPECT_EQ(input["join_token"], "tfj_secret");
  EXPECT_EQ(input["server_url"], "http://10.0.0.5:8470");
  EXPECT_EQ(input["shape"]["gpus"], 1);
  EXPECT_EQ(input["shape"]["price_per_hour"], 1.2);
  std::vector<std::string> args = input["worker_args"];
  ASSERT_GE(args.size(), 5u);
  EXPECT_EQ(args[0], "--server");
  EXPECT_EQ(args[1], "http://10.0.0.5:8470");
  EXPECT_EQ(args[2], "worker");
  EXPECT_EQ(args[3], "--name");
  EXPECT_EQ(args[4], "gpu-a1b2c3");
  // The join token is not on the worker's command line.
  EXPECT_EQ(input["worker_args"].dump().find("tfj_"), std::string::npos);

  auto listed = provider->List();
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].id, "gpu-a1b2c3");
  EXPECT_TRUE((*listed)[0].running);
  EXPECT_EQ((*listed)[0].detail, "i-gpu-a1b2c3");

  ASSERT_TRUE(provider->Delete("gpu-a1b2c3").ok());
  ASSERT_TRUE(provider->Delete("gpu-a1b2c3").ok());  // gone already: still OK
  EXPECT_TRUE(provider->List()->empty());
}

TEST_F(CommandProviderTest, ACreateThatFailsAfterStartingTheMachineIsRetriedIntoOneMachine) {
  PoolSpec spec = Spec({{"FAIL_FIRST_CREATE", "1"}});
  auto provider = Provider(spec);
  Status created = provider->Create(spec, "gpu-d4e5f6", "tfj_secret");
  ASSERT_TRUE(created.ok()) << created.ToString();
  EXPECT_EQ(Calls("create"), 2);  // the same input twice
  auto listed = provider->List();
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(listed->size(), 1u);
}

TEST_F(CommandProviderTest, AScriptThatKeepsFailingIsTriedRetriesPlusOneTimesAndSaysWhy) {
  PoolSpec spec = Spec();
  spec.provider.command.create = {
      Script("broken", std::string(kCloudPrelude) +
                           "sys.stderr.write('warming up\\nquota exceeded for g5.xlarge\\n')\n"
                           "sys.exit(3)\n")};
  auto provider = Provider(spec);
  Status created = provider->Create(spec, "gpu-000001", "tfj_secret");
  ASSERT_FALSE(created.ok());
  EXPECT_EQ(created.message(),
            "create gpu-000001 failed: exit code 3: quota exceeded for g5.xlarge");
  EXPECT_EQ(Calls("create"), 3);
}

TEST_F(CommandProviderTest, AScriptThatHangsIsKilledWithWhatItStartedAtItsTimeout) {
  PoolSpec spec = Spec();
  std::filesystem::path pid_file = dir_.path() / "child.pid";
  spec.provider.command.list = {"/bin/sh", "-c",
                                "sleep 600 & echo $! > " + pid_file.string() + "; wait"};
  spec.provider.timeout_ms = kSecondMs;
  spec.provider.retries = 0;
  auto provider = Provider(spec);
  auto listed = provider->List();
  ASSERT_FALSE(listed.ok());
  EXPECT_EQ(listed.status().message(), "list failed: timed out after 1s and was killed");
  pid_t child = std::stoi(ReadFile(pid_file));
  // Its group was killed: the sleep has ended too.
  EXPECT_TRUE(tf::testing::WaitForProcessExit(child, std::chrono::seconds(5)))
      << "the script's child " << child << " outlived its timeout";
}

// A script that never reads its input leaves the server writing to a pipe with no reader: that
// must fail the write, not raise SIGPIPE, whose default action would end the server. The input
// is larger than a pipe holds, so the write cannot finish before the script is gone.
TEST_F(CommandProviderTest, AScriptThatDoesNotReadItsInputDoesNotEndTheServer) {
  struct sigaction now {};
  ASSERT_EQ(::sigaction(SIGPIPE, nullptr, &now), 0);
  ASSERT_EQ(now.sa_handler, SIG_DFL) << "this test needs SIGPIPE's default action";
  ScriptCall call;
  call.argv = {"/bin/sh", "-c", "exec 0<&-; echo done"};
  call.env = ServerEnvironment();
  call.working_dir = dir_.path();
  call.input = std::string(size_t{4} << 20, 'x');
  call.timeout_ms = 20 * kSecondMs;
  auto outcome = RunScript(call);
  ASSERT_TRUE(outcome.ok()) << outcome.status().ToString();
  EXPECT_TRUE(outcome->success()) << outcome->Describe(call.timeout_ms);
  EXPECT_EQ(outcome->out, "done\n");
  sigset_t pending;
  sigemptyset(&pending);
  ASSERT_EQ(sigpending(&pending), 0);
  EXPECT_EQ(sigismember(&pending, SIGPIPE), 0) << "a SIGPIPE was left pending";
}

TEST_F(CommandProviderTest, WhatAListPrintsMustBeItsDocumentedJson) {
  PoolSpec spec = Spec();
  spec.provider.command.list = {"/bin/sh", "-c", "echo '[\"gpu-1\"]'"};
  auto provider = Provider(spec);
  auto listed = provider->List();
  ASSERT_FALSE(listed.ok());
  EXPECT_NE(listed.status().message().find(R"(is not a JSON object with a "machines" list)"),
            std::string::npos)
      << listed.status().message();

  spec.provider.command.list = {(dir_.path() / "no-such-script").string()};
  auto missing = Provider(spec)->List();
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("cannot run"), std::string::npos)
      << missing.status().message();
}

// examples/pools/ec2/ec2.py against a stand-in for the AWS CLI (tests/data/fake-aws/aws),
// which answers as the CLI's documentation says EC2 does: no real account is used.
TEST_F(CommandProviderTest, TheEc2ExampleFallsBackFromSpotToOnDemandAndStartsOneInstance) {
  std::filesystem::path state = dir_.path() / "ec2.json";
  std::string script = std::string(TENSORFLEET_SOURCE_DIR) + "/examples/pools/ec2/ec2.py";
  PoolSpec spec = Spec({{"AWS", std::string(TENSORFLEET_TEST_DATA) + "/fake-aws/aws"},
                        {"FAKE_EC2", state.string()},
                        {"FAKE_EC2_NO_SPOT", "1"},
                        {"LAUNCH_TEMPLATE", "lt-0123456789abcdef0"},
                        {"SPOT_FALLBACK", "on-demand"}});
  spec.name = "ec2-a10g";
  spec.provider.command.create = spec.provider.command.remove =
      spec.provider.command.list = {script};
  spec.machine.spot = true;
  spec.machine.zone = "us-east-1a";
  spec.machine.placement_group = "tensorfleet-gangs";
  auto provider = Provider(spec);

  Status created = provider->Create(spec, "ec2-a10g-1a2b3c", "tfj_machine_secret");
  ASSERT_TRUE(created.ok()) << created.ToString();
  ASSERT_TRUE(provider->Create(spec, "ec2-a10g-1a2b3c", "tfj_machine_secret").ok());  // again

  auto ec2 = nlohmann::json::parse(ReadFile(state));
  ASSERT_EQ(ec2["instances"].size(), 1u) << ec2.dump(2);
  const nlohmann::json& instance = ec2["instances"][0];
  EXPECT_FALSE(instance["Spot"]);  // EC2 had no spot capacity: on-demand instead
  EXPECT_EQ(instance["Placement"]["GroupName"], "tensorfleet-gangs");
  EXPECT_EQ(instance["Placement"]["AvailabilityZone"], "us-east-1a");
  std::string user_data = instance["UserData"];
  EXPECT_NE(user_data.find("TENSORFLEET_TOKEN=tfj_machine_secret"), std::string::npos);
  EXPECT_NE(user_data.find("--name ec2-a10g-1a2b3c"), std::string::npos) << user_data;
  EXPECT_NE(user_data.find("--label instance_id=$ID"), std::string::npos) << user_data;
  EXPECT_EQ(user_data.find(" --spot"), std::string::npos) << user_data;  // not a spot node
  // The token is in a file of root's, not on the worker's command line.
  size_t run = user_data.find("systemd-run");
  ASSERT_NE(run, std::string::npos) << user_data;
  std::string command_line = user_data.substr(run, user_data.find('\n', run) - run);
  EXPECT_NE(command_line.find("/usr/local/bin/tensorfleet --server"), std::string::npos)
      << command_line;
  EXPECT_EQ(command_line.find("tfj_"), std::string::npos) << command_line;
  std::string calls = ReadFile(state.string() + ".calls");
  EXPECT_NE(calls.find("\"run-instances\""), std::string::npos);
  EXPECT_NE(calls.find("\"--client-token\", \"ec2-a10g-1a2b3c-spot\""), std::string::npos) << calls;
  EXPECT_NE(calls.find("\"--client-token\", \"ec2-a10g-1a2b3c-od\""), std::string::npos);

  auto listed = provider->List();
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].id, "ec2-a10g-1a2b3c");
  EXPECT_TRUE((*listed)[0].running);
  EXPECT_NE((*listed)[0].detail.find("i-"), std::string::npos);

  ASSERT_TRUE(provider->Delete("ec2-a10g-1a2b3c").ok());
  EXPECT_TRUE(provider->List()->empty());
  EXPECT_EQ(nlohmann::json::parse(ReadFile(state))["instances"][0]["State"]["Name"], "terminated");

  // Without a launch template, the script says what is missing.
  PoolSpec bare = Spec({{"AWS", std::string(TENSORFLEET_TEST_DATA) + "/fake-aws/aws"},
                        {"FAKE_EC2", state.string()}});
  bare.provider.command.create = {script};
  bare.provider.retries = 0;
  Status refused = Provider(bare)->Create(bare, "gpu-x", "tfj_x");
  EXPECT_EQ(refused.message(),
            "create gpu-x failed: exit code 1: LAUNCH_TEMPLATE is not set (the pool spec's "
            "provider.env)");
}

}  // namespace
}  // namespace tf::pools
