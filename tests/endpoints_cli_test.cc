// `tensorfleet endpoint ...` against a live server: the verbs, their tables and --json, and
// errors that say what was wrong.
#include <fstream>

#include "api_test_util.h"
#include "program_run.h"

namespace tf::testing {
namespace {

class EndpointsCliTest : public ApiFixture {
 protected:
  ProgramRun Run(const std::vector<std::string>& args) {
    return RunTensorfleetOn(app_->url(), admin_token_, args);
  }
  std::string WriteSpec(const std::string& name, const std::string& yaml) {
    std::string path = (dir_.path() / name).string();
    std::ofstream(path) << yaml;
    return path;
  }
};

TEST_F(EndpointsCliTest, UpLsDescribeScaleDown) {
  std::string example = std::string(TENSORFLEET_SOURCE_DIR) + "/examples/endpoints/chat.yaml";
  auto up = Run({"endpoint", "up", example});
  ASSERT_EQ(up.exit_code, 0) << up.output;
  EXPECT_EQ(up.output, "created endpoint chat\n");
  EXPECT_EQ(Run({"endpoint", "up", example}).output, "endpoint chat unchanged\n");

  auto ls = Run({"endpoint", "ls"});
  ASSERT_EQ(ls.exit_code, 0) << ls.output;
  EXPECT_NE(ls.output.find("NAME"), std::string::npos) << ls.output;
  EXPECT_NE(ls.output.find("chat  active  0      0-4"), std::string::npos) << ls.output;

  auto describe = Run({"endpoint", "describe", "chat"});
  ASSERT_EQ(describe.exit_code, 0) << describe.output;
  const std::string autoscaling =
      "autoscaling  target 4 ongoing requests per replica; up after 0s, down after 1m, to zero "
      "after 5m idle";
  for (const std::string& fact :
       {std::string("model        job llama-train (its output/model)"),
        std::string("engine       builtin (quantize q8_0, max batch 8)"),
        std::string("replicas     none (min 0, max 4, warm pool 1)"), autoscaling,
        std::string("queue        up to 200 requests, each waiting at most 2m")}) {
    EXPECT_NE(describe.output.find(fact), std::string::npos) << fact << "\n" << describe.output;
  }

  auto scaled = Run({"endpoint", "scale", "chat", "--min", "1", "--max", "2"});
  ASSERT_EQ(scaled.exit_code, 0) << scaled.output;
  EXPECT_EQ(scaled.output, "endpoint chat: replicas from 1 to 2\n");
  auto json = Run({"--json", "endpoint", "describe", "chat"});
  ASSERT_EQ(json.exit_code, 0) << json.output;
  Json parsed = Json::parse(json.output);
  EXPECT_EQ(parsed["spec"]["replicas"]["max"], 2);

  auto down = Run({"endpoint", "down", "chat"});
  ASSERT_EQ(down.exit_code, 0) << down.output;
  EXPECT_EQ(down.output, "deleted endpoint chat\n");
  EXPECT_EQ(Run({"endpoint", "ls"}).output,
            "no endpoints (create one with: tensorfleet endpoint up chat.yaml)\n");
}

TEST_F(EndpointsCliTest, ErrorsSayWhatWasWrongAndExitNonZero) {
  auto bad =
      Run({"endpoint", "up", WriteSpec("bad.yaml", "name: chat\nmodel: /m\nspot: sometimes\n")});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_EQ(bad.output,
            "error: bad.yaml:3: spot: must be one of never, prefer, only, got \"sometimes\"\n");
  auto missing = Run({"endpoint", "up", (dir_.path() / "nothing.yaml").string()});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.output.find("cannot read"), std::string::npos) << missing.output;
  auto nope = Run({"endpoint", "describe", "nope"});
  EXPECT_EQ(nope.exit_code, 1);
  EXPECT_EQ(nope.output, "error: endpoint 'nope' does not exist\n");
  auto no_bounds = Run({"endpoint", "scale", "nope"});
  EXPECT_EQ(no_bounds.exit_code, 1);
  EXPECT_EQ(no_bounds.output, "error: give --min, --max or both\n");
}

}  // namespace
}  // namespace tf::testing
