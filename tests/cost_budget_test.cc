// Budgets: the document, periods and evaluation as pure functions; then the budget service and
// the webhook notifier over a real store (SQLite, and PostgreSQL when the test command starts
// one) on the fake clock: thresholds crossed once, forecasts before actual spend, periods
// rolling over, the actions on exhaustion, and a webhook that is down. A real server and the
// CLI: cost_budget_server_test.cc.
#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>

#include "api_test_util.h"
#include "auth/auth_service.h"
#include "child_process.h"
#include "client/json_client.h"
#include "cost/budgets/budget.h"
#include "cost/budgets/budget_eval.h"
#include "cost/budgets/budget_notifier.h"
#include "cost/budgets/budget_period.h"
#include "cost/budgets/budget_service.h"
#include "cost_budget_test_util.h"
#include "fleet/node_info.h"
#include "http_test_util.h"  // first: see the note in base/async.h
#include "jobs/job_service.h"
#include "store_test_env.h"

namespace tf::cost {
namespace {

using ::testing::HasSubstr;
using tf::testing::StoreBackends;
using tf::testing::StoreUrl;
using tf::testing::TempDir;
using Json = nlohmann::json;

using budget_testing::Date;
using budget_testing::SilentListener;

// ---- The document ----------------------------------------------------------------------------

TEST(BudgetDocument, DefaultsAndRoundTrip) {
  auto b = BudgetFromJson(Json{{"amount", 500}}, Date("2026-11-05"));
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(b->amount, 500);
  EXPECT_EQ(b->period.kind, PeriodKind::kMonthly);
  EXPECT_EQ(b->thresholds, (std::vector<double>{50, 80, 90, 100}));
  EXPECT_EQ(b->action, BudgetAction::kNotify);
  EXPECT_EQ(b->webhook, "");

  Json full = {{"amount", 12.5},        {"period", "14d"},
               {"start", "2026-11-02"}, {"thresholds", {90, 25.5, 90}},
               {"action", "stop-spot"}, {"webhook", "http://hooks.internal:8080/budget?team=ml"}};
  auto parsed = BudgetFromJson(full, 0);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->period.kind, PeriodKind::kDays);
  EXPECT_EQ(parsed->period.days, 14);
  EXPECT_EQ(parsed->period.start, Date("2026-11-02"));
  EXPECT_EQ(parsed->thresholds, (std::vector<double>{25.5, 90, 100}));  // sorted, deduplicated
  Json written = BudgetToJson(*parsed);
  EXPECT_EQ(written["thresholds"], Json({25.5, 90}));  // 100 is implied
  EXPECT_EQ(written["start"], "2026-11-02");
  auto again = BudgetFromJson(written, 0);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *parsed);

  // An N-day period without a start starts on the day the budget is created.
  auto days =
      BudgetFromJson(Json{{"amount", 1}, {"period", "7d"}}, Date("2026-11-05") + 5 * kHourMs);
  ASSERT_TRUE(days.ok());
  EXPECT_EQ(days->period.start, Date("2026-11-05"));
}

TEST(BudgetDocument, ErrorsNameTheField) {
  struct Case {
    Json doc;
    std::string expected;
  };
  std::vector<Case> cases = {
      {Json::object(), "budget field 'amount' is required"},
      {Json{{"amount", 0}}, "budget field 'amount' must be more than 0"},
      {Json{{"amount", -5}}, "budget field 'amount' must be more than 0"},
      {Json{{"amount", "500"}}, "budget field 'amount' must be a number"},
      {Json{{"amount", 5}, {"period", "fortnightly"}},
       "budget field 'period': period must be monthly, weekly, daily or a number of days"},
      {Json{{"amount", 5}, {"period", "0d"}}, "budget field 'period'"},
      {Json{{"amount", 5}, {"period", "400d"}}, "budget field 'period'"},
      {Json{{"amount", 5}, {"start", "2026-11-01"}},
       "budget field 'start' applies only to a period of N days"},
      {Json{{"amount", 5}, {"period", "30d"}, {"start", "2026-02-30"}},
       "budget field 'start': there is no such day as 2026-02-30"},
      {Json{{"amount", 5}, {"thresholds", "50,80"}}, "budget field 'thresholds' must be an array"},
      {Json{{"amount", 5}, {"thresholds", {50, 120}}},
       "budget field 'thresholds[1]' must be more than 0 and at most 100"},
      {Json{{"amount", 5}, {"thresholds", {50, "x"}}},
       "budget field 'thresholds[1]' must be a number"},
      {Json{{"amount", 5}, {"action", "shutdown"}},
       "budget field 'action': action must be notify, refuse-submissions or stop-spot"},
      {Json{{"amount", 5}, {"webhook", "https://hooks.slack.com/x"}},
       "budget field 'webhook': https webhooks are not supported"},
      {Json{{"amount", 5}, {"webhook", "ftp://x"}},
       "budget field 'webhook': a webhook URL must start with http://"},
      {Json{{"amount", 5}, {"webhook", "http://host:99999/"}}, "port must be 1-65535"},
      {Json{{"amount", 5}, {"webhook", "http:///path"}}, "must name a host"},
      {Json{{"amount", 5}, {"limit", 5}}, "unknown budget field 'limit'"},
  };
  for (const Case& c : cases) {
    auto b = BudgetFromJson(c.doc, 0);
    ASSERT_FALSE(b.ok()) << c.doc.dump();
    EXPECT_EQ(b.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(b.status().message(), HasSubstr(c.expected)) << c.doc.dump();
  }
  EXPECT_FALSE(CheckBudgetName("alerts").ok());
  EXPECT_FALSE(CheckBudgetName("").ok());
  EXPECT_FALSE(CheckBudgetName("-x").ok());
  EXPECT_FALSE(CheckBudgetName("a/b").ok());
  EXPECT_TRUE(CheckBudgetName("gpu-monthly_2.0").ok());
}

TEST(BudgetDocument, WebhookUrlSplitsIntoServerAndTarget) {
  std::string base, target;
  SplitWebhookUrl("http://127.0.0.1:9000/hooks/budget?team=ml", &base, &target);
  EXPECT_EQ(base, "http://127.0.0.1:9000");
  EXPECT_EQ(target, "/hooks/budget?team=ml");
  SplitWebhookUrl("http://relay", &base, &target);
  EXPECT_EQ(base, "http://relay");
  EXPECT_EQ(target, "/");
  SplitWebhookUrl("http://relay:81?x=1", &base, &target);
  EXPECT_EQ(base, "http://relay:81");
  EXPECT_EQ(target, "/?x=1");
}

// An operator's --webhook-hosts: a host allows any of its ports, host:port only that one.
TEST(BudgetDocument, WebhooksGoOnlyToTheHostsTheServerAllows) {
  const std::vector<std::string> allowed = {"hooks.internal", "10.0.0.5:8080"};
  EXPECT_TRUE(CheckWebhookAllowed("http://hooks.internal/budget", allowed).ok());
  EXPECT_TRUE(CheckWebhookAllowed("http://HOOKS.internal:9000/x", allowed).ok());
  EXPECT_TRUE(CheckWebhookAllowed("http://10.0.0.5:8080/x", allowed).ok());
  EXPECT_TRUE(CheckWebhookAllowed("http://169.254.169.254/latest", {}).ok()) << "no list: any";
  Status metadata = CheckWebhookAllowed("http://169.254.169.254/latest/meta-data/", allowed);
  ASSERT_FALSE(metadata.ok());
  EXPECT_EQ(metadata.message(),
            "webhooks may go only to hooks.internal, 10.0.0.5:8080 (the server's "
            "--webhook-hosts); '169.254.169.254' is not one of them");
  EXPECT_FALSE(CheckWebhookAllowed("http://10.0.0.5:9090/x", allowed).ok()) << "another port";
}

// ---- Periods ---------------------------------------------------------------------------------

TEST(BudgetPeriod, DatesParseAndFormatInUtc) {
  // Checked against Python's datetime.
  EXPECT_EQ(Date("2026-11-01"), 1'793'491'200'000);
  EXPECT_EQ(Date("2028-02-29"), 1'835'395'200'000);
  EXPECT_EQ(FormatUtcDate(1'798'675'200'000 + kDayMs - 1), "2026-12-31");
  EXPECT_FALSE(ParseUtcDate("2027-02-29").ok());
  EXPECT_FALSE(ParseUtcDate("2026-1-01").ok());
  EXPECT_FALSE(ParseUtcDate("yesterday").ok());
}

TEST(BudgetPeriod, CalendarPeriodsRollOverAtUtcMidnight) {
  PeriodSpec monthly;
  EXPECT_EQ(PeriodAt(monthly, Date("2026-11-17") + 5 * kHourMs),
            (PeriodBounds{Date("2026-11-01"), Date("2026-12-01")}));
  EXPECT_EQ(PeriodAt(monthly, Date("2026-12-31") + kDayMs - 1),
            (PeriodBounds{Date("2026-12-01"), Date("2027-01-01")}));
  EXPECT_EQ(PeriodAt(monthly, Date("2027-01-01")),  // a boundary opens the new period
            (PeriodBounds{Date("2027-01-01"), Date("2027-02-01")}));
  EXPECT_EQ(PeriodAt(monthly, Date("2028-02-29")),
            (PeriodBounds{Date("2028-02-01"), Date("2028-03-01")}));

  PeriodSpec weekly{PeriodKind::kWeekly};
  // 2026-11-30 is a Monday; 2026-11-29 a Sunday.
  EXPECT_EQ(PeriodAt(weekly, Date("2026-11-30")),
            (PeriodBounds{Date("2026-11-30"), Date("2026-12-07")}));
  EXPECT_EQ(PeriodAt(weekly, Date("2026-11-30") - 1),
            (PeriodBounds{Date("2026-11-23"), Date("2026-11-30")}));
  EXPECT_EQ(PeriodAt(weekly, Date("2027-01-01") + 12 * kHourMs),  // a Friday
            (PeriodBounds{Date("2026-12-28"), Date("2027-01-04")}));

  PeriodSpec daily{PeriodKind::kDaily};
  EXPECT_EQ(PeriodAt(daily, Date("2026-11-30") + 23 * kHourMs),
            (PeriodBounds{Date("2026-11-30"), Date("2026-12-01")}));
}

TEST(BudgetPeriod, NDayPeriodsCountFromTheirStart) {
  PeriodSpec p{PeriodKind::kDays, 10, Date("2026-11-05")};
  EXPECT_EQ(PeriodAt(p, Date("2026-11-05")),
            (PeriodBounds{Date("2026-11-05"), Date("2026-11-15")}));
  EXPECT_EQ(PeriodAt(p, Date("2026-11-15") - 1),
            (PeriodBounds{Date("2026-11-05"), Date("2026-11-15")}));
  EXPECT_EQ(PeriodAt(p, Date("2026-12-01")),
            (PeriodBounds{Date("2026-11-25"), Date("2026-12-05")}));
  // Before the start: the periods before it.
  EXPECT_EQ(PeriodAt(p, Date("2026-11-04")),
            (PeriodBounds{Date("2026-10-26"), Date("2026-11-05")}));
  EXPECT_EQ(PeriodName(p), "10d");
  EXPECT_FALSE(ParsePeriod("d").ok());
  EXPECT_FALSE(ParsePeriod("-3d").ok());
  EXPECT_FALSE(ParsePeriod("3.5d").ok());
}

// ---- Evaluation ------------------------------------------------------------------------------

Budget MonthlyBudget(double amount) {
  auto b = BudgetFromJson(Json{{"amount", amount}}, 0);
  EXPECT_TRUE(b.ok());
  return *b;
}

TEST(BudgetEvaluation, StatusAndLinearForecast) {
  Budget b = MonthlyBudget(300);
  PeriodBounds nov{Date("2026-11-01"), Date("2026-12-01")};  // 30 days
  // Ten days in, $60 spent: $6/day, so $180 by the end.
  auto e = EvaluateBudget("gpu", b, nov, 60, Date("2026-11-11"));
  EXPECT_DOUBLE_EQ(e.status.percent, 20);
  ASSERT_TRUE(e.status.forecast);
  EXPECT_NEAR(*e.status.forecast, 180, 1e-9);
  EXPECT_NEAR(*e.status.forecast_percent, 60, 1e-9);
  EXPECT_EQ(e.status.state, BudgetState::kOk);
  ASSERT_EQ(e.alerts.size(), 1u);
  EXPECT_EQ(e.alerts[0].kind, kForecastAlert);
  EXPECT_EQ(e.alerts[0].threshold, 50);
  EXPECT_THAT(e.alerts[0].message, HasSubstr("budget 'gpu' is forecast to reach 50% of $300.00"));

  // With a burn rate given, the forecast is spend + rate × the rest of the period.
  auto burn = EvaluateBudget("gpu", b, nov, 60, Date("2026-11-11"), 1.0);  // $1/h, 20 days left
  EXPECT_NEAR(*burn.status.forecast, 60 + 480, 1e-9);
}

TEST(BudgetEvaluation, NoForecastUntilEnoughOfThePeriodHasElapsed) {
  Budget b = MonthlyBudget(100);
  PeriodBounds nov{Date("2026-11-01"), Date("2026-12-01")};
  // A month: min(10% = 3 days, 24 h) = 24 h.
  EXPECT_EQ(ForecastMinElapsed(nov), kDayMs);
  auto early = EvaluateBudget("b", b, nov, 40, Date("2026-11-01") + 23 * kHourMs);
  EXPECT_FALSE(early.status.forecast);
  EXPECT_TRUE(early.alerts.empty());
  auto later = EvaluateBudget("b", b, nov, 40, Date("2026-11-02"));
  ASSERT_TRUE(later.status.forecast);
  EXPECT_EQ(later.alerts.size(), 4u);  // forecast $1,200: 50, 80, 90 and 100
  // A day: min(2.4 h, 24 h).
  EXPECT_EQ(ForecastMinElapsed(PeriodBounds{0, kDayMs}), kDayMs / 10);
}

TEST(BudgetEvaluation, ActualAlertsAndExhaustion) {
  Budget b = MonthlyBudget(100);
  b.action = BudgetAction::kRefuseSubmissions;
  PeriodBounds nov{Date("2026-11-01"), Date("2026-12-01")};
  auto e = EvaluateBudget("cap", b, nov, 100, Date("2026-11-29"));
  EXPECT_TRUE(e.status.exhausted());
  std::vector<std::pair<std::string, double>> got;
  for (const auto& a : e.alerts) got.emplace_back(a.kind, a.threshold);
  // Every threshold is crossed by the actual spend, so no forecast alert is proposed.
  EXPECT_EQ(got, (std::vector<std::pair<std::string, double>>{
                     {"actual", 50}, {"actual", 80}, {"actual", 90}, {"actual", 100}}));
  EXPECT_THAT(e.alerts.back().message,
              HasSubstr("budget 'cap' is exhausted: $100.00 spent of $100.00 (100.0%)"));
  EXPECT_THAT(e.alerts.back().message,
              HasSubstr("new jobs of the project are refused until 2026-12-01"));

  auto warning = EvaluateBudget("cap", b, nov, 85, Date("2026-11-29"));
  EXPECT_EQ(warning.status.state, BudgetState::kWarning);
  // 85 crosses 50 and 80; the forecast (85 + 85/28 × 2 days = $91.07) crosses 90, first.
  std::vector<std::pair<std::string, double>> warned;
  for (const auto& a : warning.alerts) warned.emplace_back(a.kind, a.threshold);
  EXPECT_EQ(warned, (std::vector<std::pair<std::string, double>>{
                        {"forecast", 90}, {"actual", 50}, {"actual", 80}}));
  EXPECT_NEAR(warning.alerts[0].value, 85 + 85.0 / 28 * 2, 1e-9);
  EXPECT_EQ(warning.alerts[2].message.substr(0, 40), "budget 'cap' crossed 80% of $100.00: $85");
}

TEST(BudgetNotifierBackoff, DoublesFromTenSecondsToAnHour) {
  NotifierOptions o;
  std::vector<TimeMs> delays;
  for (int attempts = 1; attempts <= 11; ++attempts)
    delays.push_back(RetryDelay(o, attempts) / 1000);
  EXPECT_EQ(delays, (std::vector<TimeMs>{10, 20, 40, 80, 160, 320, 640, 1280, 2560, 3600, 3600}));
}

// ---- The service over a real store -----------------------------------------------------------

class BudgetServiceTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    TF_SKIP_UNLESS_STORE_REACHABLE(GetParam());
    auto store = store::OpenStore(StoreUrl(GetParam(), dir_));
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(store).value();
    auth_ = std::make_unique<auth::AuthService>(store_->auth(), clock_);
    auto p = auth_->CreateProject("team-" + RandomHex(4));
    auto q = auth_->CreateProject("other-" + RandomHex(4));
    ASSERT_TRUE(p.ok() && q.ok());
    project_ = p->id;
    project_name_ = p->name;
    other_ = q->id;
    jobs::JobServiceOptions job_options;
    job_options.heartbeat_timeout_ms = 365 * kDayMs;  // nodes here never heartbeat
    jobs_ = std::make_unique<jobs::JobService>(*store_, *auth_, clock_, job_options);
    budgets_ = std::make_unique<BudgetService>(*store_, *jobs_, clock_,
                                               [this](const std::string& project, TimeMs since,
                                                      TimeMs until, TimeMs now) -> Result<double> {
                                                 EXPECT_LE(since, until);
                                                 EXPECT_LE(until, now);
                                                 ++spend_calls_;
                                                 return spend_(project, since, now);
                                               });
    jobs_->SetAdmission([this](const std::string& p) { return budgets_->AdmitSubmission(p); });
    clock_.Set(Date("2026-11-01"));
  }

  BudgetView Put(const std::string& name, const Json& doc, const std::string& project = "") {
    bool created = false;
    auto v = budgets_->Put(project.empty() ? project_ : project, name, doc, &created);
    EXPECT_TRUE(v.ok()) << v.status().ToString();
    return v.ok() ? *v : BudgetView{};
  }

  // Evaluates at the fake clock's time.
  BudgetEvaluateStats Evaluate() {
    auto stats = budgets_->Evaluate(clock_.Now());
    EXPECT_TRUE(stats.ok()) << stats.status().ToString();
    EXPECT_EQ(stats.ok() ? stats->errors : -1, 0);
    return stats.ok() ? *stats : BudgetEvaluateStats{};
  }

  std::vector<store::BudgetAlert> AlertsOf(const std::string& project) {
    auto a = budgets_->Alerts(project, 0, 1000);
    EXPECT_TRUE(a.ok()) << a.status().ToString();
    return a.ok() ? *a : std::vector<store::BudgetAlert>{};
  }

  // "actual 50", "forecast 80", ... in the order they fired.
  std::vector<std::string> Fired(const std::string& project) {
    std::vector<std::string> out;
    for (const auto& a : AlertsOf(project)) {
      out.push_back(a.kind + " " + std::to_string(static_cast<int>(a.threshold)));
    }
    return out;
  }

  // A node with 4 (simulated) GPUs. The PostgreSQL database is shared by every test, so the
  // fleet a job is checked against may hold other tests' nodes: a test whose jobs must be
  // feasible registers one that can run them.
  void RegisterGpuNode(const std::string& id, bool spot) {
    fleet::NodeInfo info;
    info.address = "10.0.0." + std::to_string(id.size());
    info.cpus = 16;
    info.memory_bytes = int64_t{64} << 30;
    for (int i = 0; i < 4; ++i) info.gpus.push_back({i, "simulated", int64_t{80} << 30, ""});
    info.simulated_gpus = true;
    info.spot = spot;
    info.price_per_hour = spot ? 4 : 10;
    auto r = jobs_->RegisterNode(id, id, info);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  }

  Result<jobs::Job> Submit(const std::string& project, const std::string& name,
                           const std::string& capacity = "any") {
    return jobs_->Submit(project,
                         "name: " + name +
                             "\ncommand: sleep 1000\n"
                             "resources: {gpus: 1, cpus: 1}\ncapacity: " +
                             capacity + "\n",
                         name + ".yaml", "");
  }

  TempDir dir_;
  FakeClock clock_;
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<auth::AuthService> auth_;
  std::unique_ptr<jobs::JobService> jobs_;
  std::unique_ptr<BudgetService> budgets_;
  std::string project_, project_name_, other_;
  // What a project spent in the period that starts at `since`, as seen at `now`.
  std::function<double(const std::string& project, TimeMs since, TimeMs now)> spend_ =
      [](const std::string&, TimeMs, TimeMs) { return 0.0; };
  int spend_calls_ = 0;
};

TEST_P(BudgetServiceTest, ABudgetNamingAWebhookHostTheServerDoesNotAllowIsRefused) {
  budgets_->AllowWebhookHostsOnly({"hooks.internal"});
  bool created = false;
  auto refused = budgets_->Put(
      project_, "gpu", Json{{"amount", 10}, {"webhook", "http://169.254.169.254/x"}}, &created);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("budget field 'webhook': webhooks may go only to "
                                            "hooks.internal"),
            std::string::npos)
      << refused.status().message();
  EXPECT_FALSE(budgets_->Get(project_, "gpu").ok()) << "nothing was stored";
  Put("gpu", Json{{"amount", 10}, {"webhook", "http://hooks.internal:8080/budget"}});
}

TEST_P(BudgetServiceTest, ThresholdsAreCrossedExactlyOnce) {
  Put("gpu", Json{{"amount", 100}});
  double spent = 0;
  spend_ = [&](const std::string& p, TimeMs, TimeMs) { return p == project_ ? spent : 0.0; };

  clock_.Set(Date("2026-11-11"));  // 10 of 30 days
  spent = 55;                      // forecast $165: 80, 90 and 100 by forecast; 50 actually
  Evaluate();
  EXPECT_EQ(Fired(project_),
            (std::vector<std::string>{"forecast 80", "forecast 90", "forecast 100", "actual 50"}));
  for (int i = 0; i < 20; ++i) {
    clock_.Advance(kMinuteMs);
    Evaluate();
  }
  EXPECT_EQ(AlertsOf(project_).size(), 4u) << "evaluated 21 times, still one alert each";

  spent = 85;
  for (int i = 0; i < 5; ++i) Evaluate();
  spent = 150;
  for (int i = 0; i < 5; ++i) Evaluate();
  EXPECT_EQ(Fired(project_),
            (std::vector<std::string>{"forecast 80", "forecast 90", "forecast 100", "actual 50",
                                      "actual 80", "actual 90", "actual 100"}));
  auto alerts = AlertsOf(project_);
  for (size_t i = 1; i < alerts.size(); ++i) EXPECT_GT(alerts[i].seq, alerts[i - 1].seq);
  for (const auto& a : alerts) {
    EXPECT_EQ(a.period_start, Date("2026-11-01"));
    EXPECT_EQ(a.amount, 100);
    EXPECT_FALSE(a.next_delivery_at) << "no webhook: nothing to deliver";
  }
  EXPECT_EQ(alerts[4].spend, 85);
  EXPECT_THAT(alerts[4].message, HasSubstr("budget 'gpu' crossed 80% of $100.00: $85.00 spent"));
  EXPECT_TRUE(AlertsOf(other_).empty());

  auto view = budgets_->Get(project_, "gpu");
  ASSERT_TRUE(view.ok());
  EXPECT_TRUE(view->status.exhausted());
  EXPECT_EQ(view->status.spend, 150);
}

TEST_P(BudgetServiceTest, ForecastAlertsComeBeforeActualOnes) {
  Put("steady", Json{{"amount", 100}});
  // $5 a day, steadily: $150 by the end of November's 30 days.
  spend_ = [&](const std::string& p, TimeMs since, TimeMs now) {
    return p == project_ ? 5.0 * static_cast<double>(now - since) / kDayMs : 0.0;
  };
  std::map<std::string, TimeMs> fired_at;
  for (TimeMs t = Date("2026-11-01"); t < Date("2026-12-01"); t += 6 * kHourMs) {
    clock_.Set(t);
    Evaluate();
  }
  auto alerts = AlertsOf(project_);
  std::map<std::string, int64_t> seq;
  for (const auto& a : alerts) {
    std::string key = a.kind + " " + std::to_string(static_cast<int>(a.threshold));
    seq[key] = a.seq;
    fired_at[key] = a.fired_at;
  }
  // Forecasts wait for 24 h of the month, then say $150 at once.
  for (int t : {50, 80, 90, 100}) {
    std::string forecast = "forecast " + std::to_string(t);
    std::string actual = "actual " + std::to_string(t);
    ASSERT_TRUE(seq.count(forecast)) << forecast;
    ASSERT_TRUE(seq.count(actual)) << actual;
    EXPECT_LT(seq[forecast], seq[actual]) << t;
    EXPECT_EQ(fired_at[forecast], Date("2026-11-02"));
  }
  EXPECT_EQ(fired_at["actual 50"], Date("2026-11-11"));
  EXPECT_EQ(fired_at["actual 80"], Date("2026-11-17"));
  EXPECT_EQ(fired_at["actual 90"], Date("2026-11-19"));
  EXPECT_EQ(fired_at["actual 100"], Date("2026-11-21"));
  EXPECT_EQ(alerts.size(), 8u);
  EXPECT_NEAR(alerts.front().spend, 150, 1e-6) << "a forecast alert carries the forecast";
}

TEST_P(BudgetServiceTest, AlertsFireAgainWhenThePeriodRollsOver) {
  Put("daily", Json{{"amount", 10}, {"period", "daily"}, {"thresholds", {50}}});
  std::map<TimeMs, double> spent_in;  // by period start
  spend_ = [&](const std::string& p, TimeMs since, TimeMs) {
    return p == project_ ? spent_in[since] : 0.0;
  };
  auto actual_50 = [&] {
    std::vector<TimeMs> periods;
    for (const auto& a : AlertsOf(project_)) {
      if (a.kind == "actual" && a.threshold == 50) periods.push_back(a.period_start);
    }
    return periods;
  };

  clock_.Set(Date("2026-11-01") + 12 * kHourMs);
  spent_in[Date("2026-11-01")] = 6;
  Evaluate();
  clock_.Set(Date("2026-11-01") + 20 * kHourMs);
  Evaluate();
  EXPECT_EQ(actual_50(), (std::vector<TimeMs>{Date("2026-11-01")}));

  clock_.Set(Date("2026-11-02") + kHourMs);  // a new day: nothing spent in it yet
  Evaluate();
  EXPECT_EQ(actual_50().size(), 1u);
  auto view = budgets_->Get(project_, "daily");
  ASSERT_TRUE(view.ok());
  EXPECT_EQ(view->status.period, (PeriodBounds{Date("2026-11-02"), Date("2026-11-03")}));
  EXPECT_EQ(view->status.spend, 0);

  clock_.Set(Date("2026-11-02") + 12 * kHourMs);
  spent_in[Date("2026-11-02")] = 7;
  Evaluate();
  Evaluate();
  EXPECT_EQ(actual_50(), (std::vector<TimeMs>{Date("2026-11-01"), Date("2026-11-02")}));
}

TEST_P(BudgetServiceTest, RefuseSubmissionsRefusesSubmitWhileExhausted) {
  // A node that can run the jobs, so that only the budget refuses them; lost again at the end,
  // so that no later test places work on it.
  std::string gpu_node = "node_gpu" + RandomHex(4);
  RegisterGpuNode(gpu_node, false);
  struct LoseAtEnd {
    store::Store& store;
    std::string id;
    ~LoseAtEnd() { (void)store.nodes().SetNodeState(id, "lost", ""); }
  } lose_at_end{*store_, gpu_node};
  Put("cap", Json{{"amount", 10}, {"action", "refuse-submissions"}});
  Put("notify-only", Json{{"amount", 1}}, other_);  // exhausted, but only notifies
  std::map<TimeMs, double> spent_in;
  spend_ = [&](const std::string&, TimeMs since, TimeMs) { return spent_in[since]; };
  clock_.Set(Date("2026-11-20"));

  spent_in[Date("2026-11-01")] = 4;
  ASSERT_TRUE(Submit(project_, "first").ok());

  spent_in[Date("2026-11-01")] = 12.5;
  auto refused = Submit(project_, "second");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(refused.status().message(),
              HasSubstr("budget 'cap' is exhausted: $12.50 spent of $10.00 in the monthly period "
                        "2026-11-01 to 2026-12-01"));
  auto stored = jobs_->List(project_, true, 100);
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ(stored->size(), 1u) << "a refused job is not stored";

  EXPECT_TRUE(Submit(other_, "elsewhere").ok()) << "a notify budget refuses nothing";

  clock_.Set(Date("2026-12-01"));  // the next period: nothing spent yet
  EXPECT_TRUE(Submit(project_, "third").ok());
}

TEST_P(BudgetServiceTest, StopSpotCancelsOnlyTheProjectsSpotJobs) {
  auto node = [&](const std::string& id, bool spot) { RegisterGpuNode(id, spot); };
  std::string spot_node = "node_spot" + RandomHex(4), on_demand_node = "node_od" + RandomHex(4);
  node(spot_node, true);
  node(on_demand_node, false);

  auto on_spot = Submit(project_, "on-spot", "spot");
  auto on_demand = Submit(project_, "on-demand", "on-demand");
  auto others = Submit(other_, "others-spot", "spot");
  ASSERT_TRUE(on_spot.ok() && on_demand.ok() && others.ok()) << on_spot.status().ToString();
  auto tick = jobs_->Tick();
  ASSERT_TRUE(tick.ok()) << tick.status().ToString();
  auto node_of = [&](const std::string& id) {
    auto j = jobs_->Get("", id);
    EXPECT_TRUE(j.ok());
    const jobs::Attempt* a = j.ok() ? j->doc.current() : nullptr;
    return a != nullptr && !a->ranks.empty() ? a->ranks[0].node_id : std::string();
  };
  // (A shared PostgreSQL may hold other tests' nodes of both kinds, named alike.)
  ASSERT_EQ(node_of(on_spot->id()).rfind("node_spot", 0), 0u) << node_of(on_spot->id());
  ASSERT_EQ(node_of(on_demand->id()).rfind("node_od", 0), 0u) << node_of(on_demand->id());

  Put("spot-cap", Json{{"amount", 10}, {"action", "stop-spot"}});
  double spent = 9;
  spend_ = [&](const std::string& p, TimeMs, TimeMs) { return p == project_ ? spent : 1000.0; };
  clock_.Advance(kHourMs);
  Evaluate();
  auto running = jobs_->Get(project_, on_spot->id());
  ASSERT_TRUE(running.ok());
  EXPECT_FALSE(jobs::IsTerminalJobState(running->state())) << "not exhausted yet";

  spent = 10.5;
  Evaluate();
  auto stopped = jobs_->Get(project_, on_spot->id());
  ASSERT_TRUE(stopped.ok());
  EXPECT_EQ(stopped->state(), jobs::kCancelled);
  EXPECT_THAT(stopped->doc.reason,
              HasSubstr("stopped by budget 'spot-cap': $10.50 spent of $10.00 (action stop-spot)"));
  auto kept = jobs_->Get(project_, on_demand->id());
  ASSERT_TRUE(kept.ok());
  EXPECT_FALSE(jobs::IsTerminalJobState(kept->state())) << kept->state();
  auto theirs = jobs_->Get(other_, others->id());
  ASSERT_TRUE(theirs.ok());
  EXPECT_FALSE(jobs::IsTerminalJobState(theirs->state())) << "another project's budget, not ours";

  // Spot work submitted while exhausted is stopped at the next evaluation.
  auto later = Submit(project_, "later-spot", "spot");
  ASSERT_TRUE(later.ok());
  Evaluate();
  auto later_job = jobs_->Get(project_, later->id());
  ASSERT_TRUE(later_job.ok());
  EXPECT_EQ(later_job->state(), jobs::kCancelled);
}

// A webhook receiver on 127.0.0.1 that answers 503 until told to accept.
class WebhookReceiver {
 public:
  WebhookReceiver() {
    auto server = http::Server::Start(
        io_.io(), {},
        [this](http::Request& r) -> awaitable<http::Response> { co_return Receive(r); });
    EXPECT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(server).value();
  }
  ~WebhookReceiver() {
    io_.Await([&] { return server_->Shutdown(std::chrono::milliseconds(0)); });
    io_.Stop();
  }

  std::string url(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(server_->port()) + path;
  }
  void Accept(bool accept) { accepting_ = accept; }
  int requests() {
    std::lock_guard lock(mu_);
    return static_cast<int>(received_.size());
  }
  std::vector<Json> accepted() {
    std::lock_guard lock(mu_);
    return accepted_;
  }
  std::string last_target() {
    std::lock_guard lock(mu_);
    return received_.empty() ? "" : received_.back();
  }

 private:
  http::Response Receive(http::Request& r) {
    std::lock_guard lock(mu_);
    received_.push_back(r.target);
    http::Response out;
    out.content_type = "text/plain";
    if (!accepting_ || r.Header("Content-Type") != "application/json") {
      out.status = 503;
      out.body = "down for maintenance";
      return out;
    }
    accepted_.push_back(Json::parse(r.body, nullptr, false));
    out.status = 204;
    return out;
  }

  http::testing::IoThread io_;
  std::unique_ptr<http::Server> server_;
  std::atomic<bool> accepting_{false};
  std::mutex mu_;
  std::vector<std::string> received_;  // guarded by mu_
  std::vector<Json> accepted_;         // guarded by mu_
};

TEST_P(BudgetServiceTest, WebhookDownIsRetriedWithBackoffWhileAlertsKeepBeingRecorded) {
  WebhookReceiver hook;
  Put("hooked", Json{{"amount", 100},
                     {"thresholds", {50, 80}},
                     {"webhook", hook.url("/hooks/budget?team=ml")}});
  double spent = 60;
  spend_ = [&](const std::string& p, TimeMs, TimeMs) { return p == project_ ? spent : 0.0; };
  auto sender = NewHttpWebhookSender();
  BudgetNotifier notifier(*store_, *sender);
  // (The counts are of every project's due alerts; a shared PostgreSQL may hold others', so
  // the checks are on this project's alerts and on what the receiver saw.)
  auto deliver = [&] {
    auto stats = notifier.DeliverDue(clock_.Now());
    EXPECT_TRUE(stats.ok()) << stats.status().ToString();
  };
  auto alert = [&](double threshold) {
    for (const auto& a : AlertsOf(project_)) {
      if (a.kind == "actual" && a.threshold == threshold) return a;
    }
    ADD_FAILURE() << "no actual alert at " << threshold;
    return store::BudgetAlert{};
  };

  const TimeMs t0 = Date("2026-11-01") + 5 * kHourMs;  // too early for forecasts
  clock_.Set(t0);
  Evaluate();
  EXPECT_EQ(*alert(50).next_delivery_at, t0) << "due at once";

  deliver();
  EXPECT_EQ(hook.requests(), 1);
  EXPECT_EQ(hook.last_target(), "/hooks/budget?team=ml");
  auto a = alert(50);
  EXPECT_EQ(a.delivery_attempts, 1);
  EXPECT_EQ(a.next_delivery_at, t0 + 10 * kSecondMs);
  EXPECT_THAT(a.last_error, HasSubstr("HTTP 503: down for maintenance"));
  EXPECT_FALSE(a.delivered_at);

  clock_.Set(t0 + 5 * kSecondMs);
  deliver();
  EXPECT_EQ(hook.requests(), 1) << "not due before its backoff";
  // Evaluation goes on while the webhook is down.
  spent = 85;
  Evaluate();
  ASSERT_EQ(Fired(project_), (std::vector<std::string>{"actual 50", "actual 80"}));
  EXPECT_EQ(*alert(80).next_delivery_at, t0 + 5 * kSecondMs);

  clock_.Set(t0 + 10 * kSecondMs);  // both due; still down
  deliver();
  EXPECT_EQ(hook.requests(), 3);
  EXPECT_EQ(alert(50).delivery_attempts, 2);
  EXPECT_EQ(alert(50).next_delivery_at, t0 + 30 * kSecondMs) << "10 s, then 20 s";
  EXPECT_EQ(alert(80).next_delivery_at, t0 + 20 * kSecondMs);

  hook.Accept(true);
  clock_.Set(t0 + 20 * kSecondMs);
  deliver();
  EXPECT_EQ(hook.requests(), 4);
  EXPECT_EQ(alert(80).delivered_at, t0 + 20 * kSecondMs);
  EXPECT_FALSE(alert(80).next_delivery_at);
  EXPECT_EQ(alert(80).last_error, "");
  EXPECT_FALSE(alert(50).delivered_at) << "still waiting for its backoff";

  clock_.Set(t0 + 30 * kSecondMs);
  deliver();
  EXPECT_EQ(hook.requests(), 5);
  EXPECT_EQ(alert(50).delivered_at, t0 + 30 * kSecondMs);
  EXPECT_EQ(alert(50).delivery_attempts, 3);
  clock_.Set(t0 + kHourMs);
  deliver();
  EXPECT_EQ(hook.requests(), 5) << "delivered once";

  auto bodies = hook.accepted();
  ASSERT_EQ(bodies.size(), 2u);
  const Json& b = bodies[0];
  EXPECT_EQ(b["budget"], "hooked");
  EXPECT_EQ(b["project"], project_name_);
  EXPECT_EQ(b["project_id"], project_);
  EXPECT_EQ(b["kind"], "actual");
  EXPECT_EQ(b["threshold"], 80);
  EXPECT_EQ(b["spend"], 85);
  EXPECT_EQ(b["amount"], 100);
  EXPECT_EQ(b["period"]["start"], "2026-11-01T00:00:00.000Z");
  EXPECT_EQ(b["period"]["end"], "2026-12-01T00:00:00.000Z");
  EXPECT_THAT(b["message"].get<std::string>(), HasSubstr("budget 'hooked' crossed 80%"));
  EXPECT_EQ(bodies[1]["threshold"], 50);
}

TEST_P(BudgetServiceTest, WebhookDeliveryGivesUpAfterItsAttemptsAndSaysSo) {
  // Nothing listens there: every attempt is refused.
  Put("unreachable",
      Json{{"amount", 10},
           {"webhook", "http://127.0.0.1:" + std::to_string(tf::testing::FreePort()) + "/x"}});
  spend_ = [&](const std::string& p, TimeMs, TimeMs) { return p == project_ ? 6.0 : 0.0; };
  Evaluate();
  auto sender = NewHttpWebhookSender();
  NotifierOptions options;
  options.first_retry_ms = kSecondMs;
  options.max_attempts = 3;
  BudgetNotifier notifier(*store_, *sender, options);
  const TimeMs t0 = clock_.Now();
  std::vector<int> attempts;
  std::vector<bool> retrying;
  for (TimeMs at : {t0, t0 + kSecondMs, t0 + 3 * kSecondMs, t0 + kHourMs}) {
    auto stats = notifier.DeliverDue(at);
    ASSERT_TRUE(stats.ok()) << stats.status().ToString();
    auto alerts = AlertsOf(project_);
    ASSERT_EQ(alerts.size(), 1u);
    attempts.push_back(alerts[0].delivery_attempts);
    retrying.push_back(alerts[0].next_delivery_at.has_value());
  }
  // Tried at once, after 1 s, after 2 s more; then given up.
  EXPECT_EQ(attempts, (std::vector<int>{1, 2, 3, 3}));
  EXPECT_EQ(retrying, (std::vector<bool>{true, true, false, false}));
  auto alerts = AlertsOf(project_);
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0].delivery_attempts, 3);
  EXPECT_FALSE(alerts[0].next_delivery_at);
  EXPECT_FALSE(alerts[0].delivered_at);
  EXPECT_THAT(alerts[0].last_error, HasSubstr("gave up after 3 attempts: "));
}

TEST_P(BudgetServiceTest, AWebhookThatHangsTimesOutAndIsRetried) {
  SilentListener hook;
  Put("slow", Json{{"amount", 10}, {"webhook", hook.url()}});
  spend_ = [&](const std::string& p, TimeMs, TimeMs) { return p == project_ ? 6.0 : 0.0; };
  Evaluate();
  auto sender = NewHttpWebhookSender();
  NotifierOptions options;
  options.timeout = std::chrono::milliseconds(300);
  BudgetNotifier notifier(*store_, *sender, options);
  auto stats = notifier.DeliverDue(clock_.Now());
  ASSERT_TRUE(stats.ok());
  EXPECT_GE(hook.accepted(), 1);
  auto alerts = AlertsOf(project_);
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_THAT(alerts[0].last_error, HasSubstr("timed out"));
  EXPECT_EQ(alerts[0].next_delivery_at, clock_.Now() + 10 * kSecondMs);
}

INSTANTIATE_TEST_SUITE_P(Backends, BudgetServiceTest, ::testing::ValuesIn(StoreBackends()),
                         [](const auto& info) { return info.param; });

// ---- Through a real server and the CLI -------------------------------------------------------

}  // namespace
}  // namespace tf::cost
