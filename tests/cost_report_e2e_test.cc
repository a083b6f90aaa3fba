// Metering end to end: a real server, `tensorfleet worker` registered with a price, a short job,
// then `tensorfleet cost report` and /metrics. On SQLite, and on PostgreSQL (a schema of its
// own) when TENSORFLEET_TEST_POSTGRES_URL is set.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include "api/app.h"
#include "base/time_format.h"
#include "child_process.h"
#include "client/json_client.h"
#include "cost/metering/metering_time.h"
#include "eventually.h"
#include "http/http.h"
#include "in_process_app.h"
#include "pg_test_schema.h"
#include "program_run.h"
#include "server_process.h"
#include "store_test_env.h"

namespace tf::testing {
namespace {

using Json = nlohmann::json;

constexpr double kPrice = 12.5;  // the worker's --price, per hour

class CostReportE2eTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    TF_SKIP_UNLESS_STORE_REACHABLE(GetParam());
    api::AppOptions o = InProcessAppOptions(dir_.path() / "server");
    o.controller_interval = std::chrono::milliseconds(100);
    o.heartbeat_timeout_ms = 3000;
    if (GetParam() == "postgresql") {
      // A schema of this test's own, so that other tests' jobs do not show up.
      schema_ = std::make_unique<PgTestSchema>(TestPostgresUrl(), "tf_cost_");
      o.store_url = schema_->url();
    }
    auto started = StartInProcessApp(o);
    ASSERT_TRUE(started.ok()) << started.status().ToString();
    app_ = std::move(started->app);
    admin_token_ = started->admin_token;
    api_ = std::move(client::JsonClient::Create(app_->url(), admin_token_)).value();
  }

  void TearDown() override {
    if (worker_) {
      worker_->Kill(SIGTERM);
      worker_->Wait();
    }
    app_.reset();
    schema_.reset();  // after the server: it drops the schema
  }

  // `tensorfleet worker` with two simulated GPUs and a price.
  void StartWorker() {
    worker_ = std::make_unique<ChildProcess>();
    ASSERT_TRUE(StartTensorfleetWorker(*worker_, app_->url(), admin_token_,
                                       (dir_.path() / "w1").string(), 2,
                                       {"--cpus", "4", "--price", std::to_string(kPrice)}));
  }

  ProgramRun Cli(const std::vector<std::string>& args, const std::string& token = "") {
    return RunTensorfleetOn(app_->url(), token.empty() ? admin_token_ : token, args);
  }

  Json CliJson(std::vector<std::string> args, const std::string& token = "") {
    ProgramRun r = Cli(std::move(args), token);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    Json j = Json::parse(r.output, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << r.output;
    return j;
  }

  Json WaitUntilFinished(const std::string& id) {
    return PollJson(
        [&] {
          auto got = api_->Call("GET", "/v1/jobs/" + id);
          return got.ok() ? *got : Json();
        },
        [](const Json& j) {
          std::string s = j.value("state", "");
          return s == "succeeded" || s == "failed" || s == "cancelled";
        },
        std::chrono::seconds(60), id);
  }

  std::string Metrics() {
    auto client = http::Client::Create(app_->url());
    EXPECT_TRUE(client.ok());
    auto r = (*client)->Send("GET", "/metrics", {{"Authorization", "Bearer " + admin_token_}}, "",
                             std::chrono::seconds(30));
    EXPECT_TRUE(r.ok() && r->status == 200);
    return r.ok() ? r->body : "";
  }

  static TimeMs Time(const Json& text) {
    auto t = cost::ParseReportTime(text.get<std::string>(), "time");
    EXPECT_TRUE(t.ok()) << text;
    return t.ok() ? *t : 0;
  }

  TempDir dir_;
  std::unique_ptr<PgTestSchema> schema_;
  std::unique_ptr<api::App> app_;
  std::string admin_token_;
  std::unique_ptr<client::JsonClient> api_;
  std::unique_ptr<ChildProcess> worker_;
};

TEST_P(CostReportE2eTest, AJobCostsItsDurationTimesTheWorkersPriceTimesItsShare) {
  TimeMs test_start = SystemClock::Get().Now();
  ASSERT_NO_FATAL_FAILURE(StartWorker());
  auto submitted =
      api_->Call("POST", "/v1/jobs",
                 Json{{"spec", "name: priced\ncommand: sleep 1\nresources: {gpus: 1, cpus: 1}\n"},
                      {"source", "priced.yaml"}});
  ASSERT_TRUE(submitted.ok()) << submitted.status().ToString();
  std::string id = (*submitted)["id"];
  Json done = WaitUntilFinished(id);
  ASSERT_EQ(done["state"], "succeeded") << done.dump(2);

  // The rank held one of the node's two GPUs from placement until it ended.
  const Json& attempt = done["attempts"][0];
  double seconds =
      static_cast<double>(Time(attempt["ranks"][0]["ended_at"]) - Time(attempt["created_at"])) /
      1000.0;
  ASSERT_GE(seconds, 1.0);
  double expected = seconds / 3600.0 * kPrice * 0.5;

  std::string since = FormatTime(test_start - kHourMs);
  Json report = CliJson({"cost", "report", "--by", "job", "--since", since, "--json"});
  ASSERT_EQ(report["rows"].size(), 1u) << report.dump(2);
  const Json& row = report["rows"][0];
  EXPECT_EQ(row["key"], id);
  EXPECT_EQ(row["label"], "priced");
  EXPECT_GT(row["cost"].get<double>(), 0);
  EXPECT_NEAR(row["cost"].get<double>(), expected, expected * 1e-9);
  EXPECT_NEAR(row["gpu_seconds"].get<double>(), seconds, 1e-6);
  EXPECT_NEAR(report["totals"]["usage_cost"].get<double>(), expected, expected * 1e-9);
  EXPECT_EQ(report["burn_rate_per_hour"], 0.0);
  EXPECT_TRUE(report["unreadable"].empty());

  // The whole fleet's report has the worker's idle capacity, priced at its price.
  ASSERT_TRUE(report["idle"].is_object()) << report.dump(2);
  ASSERT_GE(report["idle"]["nodes"].size(), 1u) << report.dump(2);
  const Json& idle = report["idle"]["nodes"][0];
  EXPECT_EQ(idle["price_per_hour"], kPrice);
  EXPECT_GE(idle["cost"].get<double>(), 0);
  EXPECT_NEAR(idle["cost"].get<double>(), idle["idle_seconds"].get<double>() / 3600.0 * kPrice,
              1e-9);

  // Every rank's line, as CSV.
  ProgramRun csv = Cli({"cost", "report", "--since", since, "--csv", "--lines"});
  ASSERT_EQ(csv.exit_code, 0) << csv.output;
  EXPECT_EQ(csv.output.rfind("project,job_id,job,attempt,node_rank,node_id,", 0), 0u) << csv.output;
  EXPECT_NE(csv.output.find("default," + id + ",priced,1,0,"), std::string::npos) << csv.output;
  EXPECT_NE(csv.output.find(",0.5,12.5,"), std::string::npos) << csv.output;

  // The table people read.
  ProgramRun table = Cli({"cost", "report", "--by", "project", "--since", since});
  ASSERT_EQ(table.exit_code, 0) << table.output;
  EXPECT_NE(table.output.find("Cost by project"), std::string::npos) << table.output;
  EXPECT_NE(table.output.find("default"), std::string::npos) << table.output;
  EXPECT_NE(table.output.find("idle capacity"), std::string::npos) << table.output;

  // Prometheus: everything the project has spent, and nothing burning now.
  std::string metrics = Metrics();
  std::string spend_line = "tensorfleet_spend_dollars_total{project=\"default\"} ";
  size_t at = metrics.find(spend_line);
  ASSERT_NE(at, std::string::npos) << metrics;
  EXPECT_NEAR(std::stod(metrics.substr(at + spend_line.size())), expected, 1e-6);
  EXPECT_NE(metrics.find("tensorfleet_burn_rate_dollars_per_hour{project=\"default\"} 0.000000"),
            std::string::npos)
      << metrics;
}

TEST_P(CostReportE2eTest, AProjectTokenSeesItsOwnWorkWithoutIdleCapacity) {
  ASSERT_NO_FATAL_FAILURE(StartWorker());
  auto submitted = api_->Call(
      "POST", "/v1/jobs",
      Json{{"spec", "name: admins\ncommand: true\nresources: {gpus: 1}\n"}, {"source", "a.yaml"}});
  ASSERT_TRUE(submitted.ok()) << submitted.status().ToString();
  WaitUntilFinished((*submitted)["id"]);
  ASSERT_TRUE(api_->Call("POST", "/v1/projects", Json{{"name", "other"}}).ok());
  auto token = api_->Call("POST", "/v1/tokens", Json{{"name", "ci"}, {"project", "other"}});
  ASSERT_TRUE(token.ok()) << token.status().ToString();
  std::string secret = (*token)["secret"];

  Json mine = CliJson({"cost", "report", "--since", "2020-01-01", "--json"}, secret);
  EXPECT_EQ(mine["project"], "other");
  EXPECT_TRUE(mine["rows"].empty()) << mine.dump(2);
  EXPECT_TRUE(mine["idle"].is_null()) << mine.dump(2);

  ProgramRun theirs = Cli({"cost", "report", "--project", "default"}, secret);
  EXPECT_EQ(theirs.exit_code, 1);
  EXPECT_NE(theirs.output.find("only its own project"), std::string::npos) << theirs.output;

  // The admin sees the other project's (empty) report when asking for it by name.
  Json other = CliJson({"cost", "report", "--project", "other", "--json"});
  EXPECT_TRUE(other["rows"].empty());
  EXPECT_TRUE(other["idle"].is_null());
}

TEST_P(CostReportE2eTest, BadTimesAreRefusedNamingTheFlagAndTheFormsAccepted) {
  ProgramRun r = Cli({"cost", "report", "--since", "yesterday"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("since: \"yesterday\""), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("RFC 3339"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("milliseconds since 1970"), std::string::npos) << r.output;

  ProgramRun backwards = Cli({"cost", "report", "--since", "2026-02-01", "--until", "2026-01-01"});
  EXPECT_EQ(backwards.exit_code, 1);
  EXPECT_NE(backwards.output.find("until: "), std::string::npos) << backwards.output;
}

INSTANTIATE_TEST_SUITE_P(Stores, CostReportE2eTest, ::testing::ValuesIn(StoreBackends()));

}  // namespace
}  // namespace tf::testing
