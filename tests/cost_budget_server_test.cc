// Budgets through a real server and the CLI: alerts recorded and jobs still scheduled while a
// webhook hangs, and bad input refused with projects kept apart.
#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <map>
#include <mutex>
#include <thread>

#include "api_test_util.h"
#include "auth/auth_service.h"
#include "client/json_client.h"
#include "cost/budgets/budget.h"
#include "cost/budgets/budget_eval.h"
#include "cost/budgets/budget_notifier.h"
#include "cost/budgets/budget_period.h"
#include "cost/budgets/budget_service.h"
#include "cost_budget_test_util.h"
#include "eventually.h"
#include "fleet/node_info.h"
#include "http_test_util.h"  // first: see the note in base/async.h
#include "in_process_app.h"
#include "jobs/job_service.h"
#include "program_run.h"
#include "store_test_env.h"

namespace tf::cost {
namespace {

using ::testing::HasSubstr;
using tf::testing::InProcessAppOptions;
using tf::testing::StartInProcessApp;
using tf::testing::TempDir;
using Json = nlohmann::json;
using budget_testing::Date;
using budget_testing::SilentListener;

// A whole server on the fake clock (SQLite), with budgets evaluated every 50 ms of real time,
// and metering pricing what its jobs hold of a node.
class BudgetServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    clock_.Set(Date("2026-11-20") + 10 * kHourMs);
    api::AppOptions o = InProcessAppOptions(dir_.path() / "server");
    o.clock = &clock_;
    o.controller_interval = std::chrono::milliseconds(50);
    o.budget_interval = std::chrono::milliseconds(50);
    o.heartbeat_timeout_ms = 365 * kDayMs;  // the node here never heartbeats
    auto started = StartInProcessApp(o);
    ASSERT_TRUE(started.ok()) << started.status().ToString();
    app_ = std::move(started->app);
    admin_token_ = started->admin_token;
    api_ = Client(admin_token_);
  }

  std::unique_ptr<client::JsonClient> Client(const std::string& token) {
    auto c = client::JsonClient::Create(app_->url(), token);
    EXPECT_TRUE(c.ok());
    return std::move(c).value();
  }

  tf::testing::ProgramRun Run(const std::vector<std::string>& args) {
    return tf::testing::RunTensorfleetOn(app_->url(), admin_token_, args);
  }

  // Polls GET `target` until `done` holds, for up to a minute of real time.
  Json WaitFor(const std::string& target, const std::function<bool(const Json&)>& done) {
    return tf::testing::PollJson(
        [&] {
          auto r = api_->Call("GET", target);
          return r.ok() ? *r : Json();
        },
        done, std::chrono::minutes(1), target);
  }

  std::string SubmitJob(const std::string& name) {
    auto r = api_->Call(
        "POST", "/v1/jobs",
        Json{{"spec", "name: " + name + "\ncommand: sleep 1000\nresources: {gpus: 1, cpus: 1}\n"},
             {"source", name + ".yaml"}});
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? (*r)["id"].get<std::string>() : "";
  }

  void TearDown() override { app_.reset(); }

  TempDir dir_;
  FakeClock clock_;
  std::unique_ptr<api::App> app_;
  std::string admin_token_;
  std::unique_ptr<client::JsonClient> api_;
};

TEST_F(BudgetServerTest, AlertsAreRecordedAndJobsScheduledWhileTheWebhookHangs) {
  SilentListener hook;
  fleet::NodeInfo info;
  info.address = "127.0.0.1";
  info.cpus = 8;
  info.memory_bytes = int64_t{32} << 30;
  for (int i = 0; i < 2; ++i) info.gpus.push_back({i, "simulated", int64_t{80} << 30, ""});
  info.simulated_gpus = true;
  info.price_per_hour = 20;  // a job of one GPU holds half: $10 an hour
  ASSERT_TRUE(
      api_->Call(
              "POST", "/v1/nodes",
              Json{{"id", "node_budget"}, {"name", "gpu-1"}, {"info", fleet::NodeInfoToJson(info)}})
          .ok());

  auto created = api_->Call("PUT", "/v1/budgets/team",
                            Json{{"amount", 5}, {"period", "daily"}, {"webhook", hook.url()}});
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_EQ((*created)["current"]["state"], "ok");
  EXPECT_EQ((*created)["current"]["period_start"], "2026-11-20T00:00:00.000Z");

  std::string first = SubmitJob("first");
  WaitFor("/v1/jobs/" + first, [](const Json& j) { return j["state"] == "starting"; });
  clock_.Advance(kHourMs);  // an hour on half the node: $10 of $5

  Json alerts =
      WaitFor("/v1/budgets/alerts", [](const Json& j) { return j["alerts"].size() >= 4; });
  std::vector<std::string> fired;
  for (const Json& a : alerts["alerts"]) {
    fired.push_back(a["kind"].get<std::string>() + " " + std::to_string(a["threshold"].get<int>()));
    EXPECT_EQ(a["budget"], "team");
  }
  EXPECT_EQ(fired, (std::vector<std::string>{"actual 50", "actual 80", "actual 90", "actual 100"}));

  // The budget thread is now stuck in a POST that never gets an answer; the job controller is
  // not: a second job is placed while the webhook still holds the connection.
  ASSERT_TRUE(hook.WaitForAccepted(1, std::chrono::seconds(30)));
  std::string second = SubmitJob("second");
  WaitFor("/v1/jobs/" + second, [](const Json& j) { return j["state"] == "starting"; });
  EXPECT_EQ(WaitFor("/v1/budgets/alerts",
                    [](const Json&) { return true; })["alerts"][0]["delivery"]["delivered_at"],
            nullptr);

  auto list = api_->Call("GET", "/v1/budgets");
  ASSERT_TRUE(list.ok());
  ASSERT_EQ((*list)["budgets"].size(), 1u);
  const Json& team = (*list)["budgets"][0];
  EXPECT_EQ(team["current"]["state"], "exhausted");
  EXPECT_GE(team["current"]["spend"].get<double>(), 9.9);
  EXPECT_EQ(team["webhook"], hook.url());

  // The CLI: change only the action; the amount and webhook stay.
  auto set = Run({"cost", "budget", "set", "team", "--action", "refuse-submissions"});
  EXPECT_EQ(set.exit_code, 0) << set.output;
  EXPECT_THAT(set.output, HasSubstr("updated budget team"));
  auto shown = Run({"--json", "cost", "budget", "show", "team"});
  ASSERT_EQ(shown.exit_code, 0) << shown.output;
  Json j = Json::parse(shown.output);
  EXPECT_EQ(j["action"], "refuse-submissions");
  EXPECT_EQ(j["amount"], 5);
  EXPECT_EQ(j["period"], "daily");
  EXPECT_EQ(j["webhook"], hook.url());

  auto refused = api_->Call("POST", "/v1/jobs",
                            Json{{"spec", "name: third\ncommand: true\nresources: {gpus: 1}\n"}});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(refused.status().message(), HasSubstr("budget 'team' is exhausted: $"));
  EXPECT_THAT(refused.status().message(),
              HasSubstr(" spent of $5.00 in the daily period 2026-11-20"));

  auto listed = Run({"cost", "budget", "list"});
  EXPECT_EQ(listed.exit_code, 0) << listed.output;
  EXPECT_THAT(listed.output, HasSubstr("NAME"));
  EXPECT_THAT(listed.output, HasSubstr("2026-11-20 to 2026-11-21"));
  EXPECT_THAT(listed.output, HasSubstr("refuse-submissions"));
  EXPECT_THAT(listed.output, HasSubstr("exhausted"));

  auto alert_table = Run({"cost", "budget", "alerts"});
  EXPECT_EQ(alert_table.exit_code, 0) << alert_table.output;
  EXPECT_THAT(alert_table.output, HasSubstr("THRESHOLD"));
  EXPECT_THAT(alert_table.output, HasSubstr("100.0%"));
  EXPECT_THAT(alert_table.output, HasSubstr("budget 'team' is exhausted"));
  auto after = Run({"--json", "cost", "budget", "alerts", "--after", "3"});
  ASSERT_EQ(after.exit_code, 0) << after.output;
  Json tail = Json::parse(after.output);
  for (const Json& a : tail["alerts"]) EXPECT_GT(a["seq"].get<int64_t>(), 3);

  hook.Release();  // the budget thread goes on, and the server can stop at once
}

TEST_F(BudgetServerTest, CliAndApiRefuseWhatIsWrongAndKeepProjectsApart) {
  auto missing_amount = Run({"cost", "budget", "set", "new-one"});
  EXPECT_EQ(missing_amount.exit_code, 1);
  EXPECT_THAT(missing_amount.output,
              HasSubstr("budget 'new-one' does not exist yet: give its --amount"));
  auto bad_period = Run({"cost", "budget", "set", "b", "--amount", "5", "--period", "fortnightly"});
  EXPECT_EQ(bad_period.exit_code, 1);
  EXPECT_THAT(bad_period.output, HasSubstr("budget field 'period': period must be monthly"));
  auto bad_thresholds =
      Run({"cost", "budget", "set", "b", "--amount", "5", "--thresholds", "50,x"});
  EXPECT_EQ(bad_thresholds.exit_code, 1);
  EXPECT_THAT(bad_thresholds.output, HasSubstr("'x' is not a number"));
  auto https =
      Run({"cost", "budget", "set", "b", "--amount", "5", "--webhook", "https://example.com/x"});
  EXPECT_EQ(https.exit_code, 1);
  EXPECT_THAT(https.output, HasSubstr("https webhooks are not supported"));

  auto made = Run({"cost", "budget", "set", "b", "--amount", "250", "--period", "30d", "--start",
                   "2026-11-10", "--thresholds", "25,75", "--action", "stop-spot"});
  ASSERT_EQ(made.exit_code, 0) << made.output;
  EXPECT_THAT(made.output, HasSubstr("created budget b"));
  EXPECT_THAT(made.output, HasSubstr("2026-11-10 to 2026-12-10"));
  EXPECT_THAT(made.output, HasSubstr("25,75,100 percent"));
  auto empty = Run({"cost", "budget", "alerts"});
  EXPECT_EQ(empty.exit_code, 0);
  EXPECT_THAT(empty.output, HasSubstr("no alerts"));

  // A project token sees its own project's budgets only.
  ASSERT_TRUE(api_->Call("POST", "/v1/projects", Json{{"name", "research"}}).ok());
  auto token = api_->Call("POST", "/v1/tokens", Json{{"name", "ci"}, {"project", "research"}});
  ASSERT_TRUE(token.ok()) << token.status().ToString();
  auto research = Client((*token)["secret"].get<std::string>());
  auto theirs = research->Call("GET", "/v1/budgets");
  ASSERT_TRUE(theirs.ok());
  EXPECT_TRUE((*theirs)["budgets"].empty());
  EXPECT_EQ(research->Call("GET", "/v1/budgets/b").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(research->Call("GET", "/v1/budgets?all=true").status().code(),
            StatusCode::kPermissionDenied);
  auto admin_view = api_->Call("GET", "/v1/budgets?project=research");
  ASSERT_TRUE(admin_view.ok());
  EXPECT_TRUE((*admin_view)["budgets"].empty());
  ASSERT_TRUE(api_->Call("PUT", "/v1/budgets/theirs?project=research", Json{{"amount", 1}}).ok());
  auto everyone = api_->Call("GET", "/v1/budgets?all=true");
  ASSERT_TRUE(everyone.ok());
  EXPECT_EQ((*everyone)["budgets"].size(), 2u);
  EXPECT_EQ(research->Call("GET", "/v1/budgets/theirs").status().code(), StatusCode::kOk);

  EXPECT_EQ(api_->Call("PUT", "/v1/budgets/alerts", Json{{"amount", 1}}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(api_->Call("GET", "/v1/budgets/alerts?after=x").status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_THAT(
      api_->Call("PUT", "/v1/budgets/c", Json{{"amount", 1}, {"colour", "red"}}).status().message(),
      HasSubstr("unknown budget field 'colour'"));

  auto deleted = Run({"cost", "budget", "delete", "b"});
  EXPECT_EQ(deleted.exit_code, 0) << deleted.output;
  auto gone = Run({"cost", "budget", "show", "b"});
  EXPECT_EQ(gone.exit_code, 1);
  EXPECT_THAT(gone.output, HasSubstr("error: budget 'b' does not exist"));

  for (auto verb : std::vector<std::vector<std::string>>{{"cost", "budget", "--help"},
                                                         {"cost", "budget", "set", "--help"},
                                                         {"cost", "budget", "alerts", "--help"}}) {
    auto help = Run(verb);
    EXPECT_EQ(help.exit_code, 0) << verb.back();
    EXPECT_THAT(help.output, HasSubstr("Usage:"));
  }
}

}  // namespace
}  // namespace tf::cost
