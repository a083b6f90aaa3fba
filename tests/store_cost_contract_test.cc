// What cost needs of the store (migration 5): the periods nodes were up, budgets and their
// alerts, run against every back end (tests/store_test_env.h). The PostgreSQL database is shared
// by every test, so each test uses ids of its own and looks only at its own rows.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <set>
#include <thread>

#include "base/crypto.h"
#include "store/store.h"
#include "store_test_env.h"
#include "store_upgrade_util.h"

namespace tf::store {
namespace {

using testing::RunSql;
using testing::StoreBackends;
using testing::StoreUrl;
using testing::TempDir;
using testing::UpgradeDatabase;

constexpr TimeMs kT0 = 1'700'000'000'000;

class CostStoreContractTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    TF_SKIP_UNLESS_STORE_REACHABLE(GetParam());
    store_ = Open(StoreUrl(GetParam(), dir_));
    ASSERT_NE(store_, nullptr);
    // Ids share a random stem and end in a letter, so that their order is known.
    stem_ = RandomHex(8);
    project_ = "prj_" + stem_ + "a";
  }

  static std::unique_ptr<Store> Open(const std::string& url) {
    auto opened = OpenStore(url);
    EXPECT_TRUE(opened.ok()) << opened.status().ToString();
    return opened.ok() ? std::move(opened).value() : nullptr;
  }

  NodeRecord MakeNode(const std::string& suffix, TimeMs at, const std::string& info) {
    NodeRecord n;
    n.id = "node_" + stem_ + suffix;
    n.name = "box-" + suffix;
    n.info_json = info;
    n.registered_at = n.heartbeat_at = at;
    return n;
  }

  // This test's periods (ids with its stem) overlapping [since, until).
  std::vector<NodePeriod> MyPeriods(TimeMs since, TimeMs until) {
    auto all = store_->nodes().ListNodePeriods(since, until);
    EXPECT_TRUE(all.ok()) << all.status().ToString();
    std::vector<NodePeriod> out;
    if (!all.ok()) return out;
    for (NodePeriod& p : *all) {
      if (p.node_id.find(stem_) != std::string::npos) out.push_back(std::move(p));
    }
    return out;
  }

  BudgetRecord MakeBudget(const std::string& project, const std::string& name) {
    BudgetRecord b;
    b.id = "bud_" + RandomHex(8);
    b.project_id = project;
    b.name = name;
    b.doc_json = R"({"amount":100})";
    b.created_at = b.updated_at = kT0;
    return b;
  }

  BudgetAlert MakeAlert(const BudgetRecord& b, double threshold, const std::string& kind = "actual",
                        TimeMs period_start = kT0) {
    BudgetAlert a;
    a.budget_id = b.id;
    a.project_id = b.project_id;
    a.period_start = period_start;
    a.kind = kind;
    a.threshold = threshold;
    a.fired_at = kT0 + 1;
    a.spend = 80.25;
    a.amount = 100;
    a.message = "spent $80.25 of $100";
    return a;
  }

  std::vector<BudgetAlert> Alerts(const std::string& project, int64_t after_seq = 0,
                                  int limit = 100) {
    auto listed = store_->budgets().ListBudgetAlerts(project, after_seq, limit);
    EXPECT_TRUE(listed.ok()) << listed.status().ToString();
    return listed.ok() ? *listed : std::vector<BudgetAlert>{};
  }

  TempDir dir_;
  std::unique_ptr<Store> store_;
  std::string stem_;
  std::string project_;
};

// --- Node periods ---------------------------------------------------------------------------

TEST_P(CostStoreContractTest, EachRegistrationOpensAPeriodWithTheInfoItRegistered) {
  NodeRecord n = MakeNode("a", kT0, R"({"price":2.5})");
  ASSERT_TRUE(store_->nodes().RegisterNode(n).ok());
  n.info_json = R"({"price":4})";
  n.registered_at = kT0 + 1'000;
  n.heartbeat_at = kT0 + 1'500;  // a registration that carries a later heartbeat
  auto second = store_->nodes().RegisterNode(n);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  ASSERT_EQ(second->epoch, 2);

  std::vector<NodePeriod> periods = MyPeriods(0, kT0 + 10'000);
  ASSERT_EQ(periods.size(), 2u);
  EXPECT_EQ(periods[0].node_id, n.id);
  EXPECT_EQ(periods[0].epoch, 1);
  EXPECT_EQ(periods[0].started_at, kT0);
  EXPECT_EQ(periods[0].last_seen_at, kT0);
  EXPECT_EQ(periods[0].info_json, R"({"price":2.5})");
  EXPECT_EQ(periods[1].epoch, 2);
  EXPECT_EQ(periods[1].started_at, kT0 + 1'000);
  EXPECT_EQ(periods[1].last_seen_at, kT0 + 1'500);
  EXPECT_EQ(periods[1].info_json, R"({"price":4})");
}

TEST_P(CostStoreContractTest, HeartbeatsMoveOnlyTheCurrentPeriodAndOnlyForward) {
  NodeRecord n = MakeNode("a", kT0, "{}");
  ASSERT_TRUE(store_->nodes().RegisterNode(n).ok());
  ASSERT_TRUE(store_->nodes().TouchNode(n.id, 1, kT0 + 10).ok());
  n.registered_at = n.heartbeat_at = kT0 + 20;
  ASSERT_TRUE(store_->nodes().RegisterNode(n).ok());  // epoch 2

  // The previous registration's worker is still heartbeating: refused, and its period stays.
  EXPECT_EQ(store_->nodes().TouchNode(n.id, 1, kT0 + 30).code(), StatusCode::kAborted);
  ASSERT_TRUE(store_->nodes().TouchNode(n.id, 2, kT0 + 40).ok());
  // A heartbeat that arrives late does not take the period back.
  ASSERT_TRUE(store_->nodes().TouchNode(n.id, 2, kT0 + 35).ok());

  std::vector<NodePeriod> periods = MyPeriods(0, kT0 + 1'000);
  ASSERT_EQ(periods.size(), 2u);
  EXPECT_EQ(periods[0].epoch, 1);
  EXPECT_EQ(periods[0].last_seen_at, kT0 + 10);
  EXPECT_EQ(periods[1].epoch, 2);
  EXPECT_EQ(periods[1].started_at, kT0 + 20);
  EXPECT_EQ(periods[1].last_seen_at, kT0 + 40);

  EXPECT_EQ(store_->nodes().TouchNode("node_" + stem_ + "z", 1, kT0).code(), StatusCode::kNotFound);
  EXPECT_EQ(MyPeriods(0, kT0 + 1'000).size(), 2u);
}

TEST_P(CostStoreContractTest, APeriodIsBackdatedToWhenItsMachineWasAskedForNeverForward) {
  NodeRecord n = MakeNode("a", kT0 + 90'000, "{}");
  ASSERT_TRUE(store_->nodes().RegisterNode(n).ok());
  ASSERT_TRUE(store_->nodes().BackdateNodePeriod(n.id, 1, kT0).ok());
  ASSERT_TRUE(store_->nodes().BackdateNodePeriod(n.id, 1, kT0 + 50'000).ok());  // later: kept
  std::vector<NodePeriod> periods = MyPeriods(0, kT0 + 1'000'000);
  ASSERT_EQ(periods.size(), 1u);
  EXPECT_EQ(periods[0].started_at, kT0);
  EXPECT_EQ(periods[0].last_seen_at, kT0 + 90'000);
  EXPECT_EQ(store_->nodes().BackdateNodePeriod(n.id, 2, kT0).code(), StatusCode::kNotFound);
}

TEST_P(CostStoreContractTest, PeriodsAreListedWhenTheyOverlapTheWindowByNodeAndEpoch) {
  // b: up over [T+100, T+200]; a: over [T+150, T+300], then again from T+400 to T+400.
  NodeRecord b = MakeNode("b", kT0 + 100, "{}");
  ASSERT_TRUE(store_->nodes().RegisterNode(b).ok());
  ASSERT_TRUE(store_->nodes().TouchNode(b.id, 1, kT0 + 200).ok());
  NodeRecord a = MakeNode("a", kT0 + 150, "{}");
  ASSERT_TRUE(store_->nodes().RegisterNode(a).ok());
  ASSERT_TRUE(store_->nodes().TouchNode(a.id, 1, kT0 + 300).ok());
  a.registered_at = a.heartbeat_at = kT0 + 400;
  ASSERT_TRUE(store_->nodes().RegisterNode(a).ok());

  auto keys = [&](TimeMs since, TimeMs until) {
    std::vector<std::string> out;
    for (const NodePeriod& p : MyPeriods(kT0 + since, kT0 + until)) {
      out.push_back(p.node_id.substr(p.node_id.size() - 1) + std::to_string(p.epoch));
    }
    return out;
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(keys(0, 1'000), (V{"a1", "a2", "b1"}));
  EXPECT_EQ(keys(0, 100), V{});  // starts exactly at the window's end: outside
  EXPECT_EQ(keys(0, 101), V{"b1"});
  EXPECT_EQ(keys(200, 201), (V{"a1", "b1"}));  // last seen exactly at the window's start: inside
  EXPECT_EQ(keys(201, 400), V{"a1"});
  EXPECT_EQ(keys(301, 400), V{});
  EXPECT_EQ(keys(301, 401), V{"a2"});
  EXPECT_EQ(keys(500, 600), V{});
}

// --- Budgets --------------------------------------------------------------------------------

TEST_P(CostStoreContractTest, BudgetsAreUniqueByNameInTheirProject) {
  BudgetRecord b = MakeBudget(project_, "monthly");
  ASSERT_TRUE(store_->budgets().CreateBudget(b).ok());

  BudgetRecord same_name = MakeBudget(project_, "monthly");
  Status dup = store_->budgets().CreateBudget(same_name);
  EXPECT_EQ(dup.code(), StatusCode::kAlreadyExists);
  EXPECT_NE(dup.message().find("monthly"), std::string::npos) << dup.ToString();
  EXPECT_NE(dup.message().find(project_), std::string::npos) << dup.ToString();

  BudgetRecord same_id = MakeBudget(project_, "weekly");
  same_id.id = b.id;
  EXPECT_EQ(store_->budgets().CreateBudget(same_id).code(), StatusCode::kAlreadyExists);

  // Another project may use the name.
  EXPECT_TRUE(store_->budgets().CreateBudget(MakeBudget("prj_" + stem_ + "b", "monthly")).ok());

  auto got = store_->budgets().GetBudget(project_, "monthly");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->id, b.id);
  EXPECT_EQ(got->doc_json, b.doc_json);
  EXPECT_EQ(got->created_at, kT0);
  EXPECT_EQ(store_->budgets().GetBudget(project_, "weekly").status().code(), StatusCode::kNotFound);
}

TEST_P(CostStoreContractTest, UpdateReplacesTheDocumentAndKeepsTheRest) {
  BudgetRecord b = MakeBudget(project_, "monthly");
  ASSERT_TRUE(store_->budgets().CreateBudget(b).ok());
  BudgetRecord changed = b;
  changed.doc_json = R"({"amount":250})";
  changed.updated_at = kT0 + 5'000;
  changed.name = "renamed";  // not what an update changes
  changed.created_at = 1;
  ASSERT_TRUE(store_->budgets().UpdateBudget(changed).ok());

  auto got = store_->budgets().GetBudget(project_, "monthly");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->doc_json, R"({"amount":250})");
  EXPECT_EQ(got->updated_at, kT0 + 5'000);
  EXPECT_EQ(got->created_at, kT0);

  BudgetRecord unknown = MakeBudget(project_, "ghost");
  Status missing = store_->budgets().UpdateBudget(unknown);
  EXPECT_EQ(missing.code(), StatusCode::kNotFound);
  EXPECT_NE(missing.message().find(unknown.id), std::string::npos) << missing.ToString();
}

TEST_P(CostStoreContractTest, BudgetsAreListedByProjectThenName) {
  const std::string other = "prj_" + stem_ + "b";
  BudgetRecord zeta = MakeBudget(project_, "zeta");
  BudgetRecord alpha = MakeBudget(project_, "alpha");
  BudgetRecord beta = MakeBudget(other, "beta");
  BudgetRecord aa = MakeBudget(other, "aa");
  for (const BudgetRecord* b : {&beta, &zeta, &aa, &alpha}) {
    ASSERT_TRUE(store_->budgets().CreateBudget(*b).ok());
  }
  auto names = [&](const std::string& project) {
    std::vector<std::string> out;
    auto listed = store_->budgets().ListBudgets(project);
    EXPECT_TRUE(listed.ok()) << listed.status().ToString();
    if (!listed.ok()) return out;
    for (const BudgetRecord& b : *listed) {
      if (b.project_id.find(stem_) != std::string::npos) out.push_back(b.name);
    }
    return out;
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(names(project_), (V{"alpha", "zeta"}));
  EXPECT_EQ(names(other), (V{"aa", "beta"}));
  EXPECT_EQ(names(""), (V{"alpha", "zeta", "aa", "beta"}));
  EXPECT_EQ(names("prj_" + stem_ + "c"), V{});
}

TEST_P(CostStoreContractTest, DeletingABudgetDeletesItsAlerts) {
  BudgetRecord gone = MakeBudget(project_, "gone");
  BudgetRecord kept = MakeBudget(project_, "kept");
  ASSERT_TRUE(store_->budgets().CreateBudget(gone).ok());
  ASSERT_TRUE(store_->budgets().CreateBudget(kept).ok());
  ASSERT_TRUE(*store_->budgets().AddBudgetAlert(MakeAlert(gone, 50)));
  ASSERT_TRUE(*store_->budgets().AddBudgetAlert(MakeAlert(kept, 50)));
  ASSERT_TRUE(*store_->budgets().AddBudgetAlert(MakeAlert(gone, 80)));

  ASSERT_TRUE(store_->budgets().DeleteBudget(gone.id).ok());
  EXPECT_EQ(store_->budgets().GetBudget(project_, "gone").status().code(), StatusCode::kNotFound);
  std::vector<BudgetAlert> left = Alerts(project_);
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0].budget_id, kept.id);

  Status again = store_->budgets().DeleteBudget(gone.id);
  EXPECT_EQ(again.code(), StatusCode::kNotFound);
  EXPECT_NE(again.message().find(gone.id), std::string::npos) << again.ToString();
  // The name is free again, and the new budget starts with no alerts.
  EXPECT_TRUE(store_->budgets().CreateBudget(MakeBudget(project_, "gone")).ok());
}

// --- Alerts ---------------------------------------------------------------------------------

TEST_P(CostStoreContractTest, AnAlertFiresOncePerBudgetPeriodKindAndThreshold) {
  BudgetRecord b = MakeBudget(project_, "monthly");
  ASSERT_TRUE(store_->budgets().CreateBudget(b).ok());

  BudgetAlert first = MakeAlert(b, 80);
  first.spend = 0.1 + 0.2;  // every digit kept
  first.amount = 1.0 / 3;
  first.next_delivery_at = kT0 + 7;
  auto added = store_->budgets().AddBudgetAlert(first);
  ASSERT_TRUE(added.ok()) << added.status().ToString();
  EXPECT_TRUE(*added);

  BudgetAlert again = MakeAlert(b, 80);
  again.spend = 95;
  again.message = "later, higher";
  EXPECT_FALSE(*store_->budgets().AddBudgetAlert(again));

  EXPECT_TRUE(*store_->budgets().AddBudgetAlert(MakeAlert(b, 80.5)));
  EXPECT_TRUE(*store_->budgets().AddBudgetAlert(MakeAlert(b, 80, "forecast")));
  EXPECT_TRUE(*store_->budgets().AddBudgetAlert(MakeAlert(b, 80, "actual", kT0 + kDayMs)));
  EXPECT_FALSE(*store_->budgets().AddBudgetAlert(MakeAlert(b, 80, "forecast")));

  std::vector<BudgetAlert> alerts = Alerts(project_);
  ASSERT_EQ(alerts.size(), 4u);
  for (size_t i = 1; i < alerts.size(); ++i) EXPECT_GT(alerts[i].seq, alerts[i - 1].seq);
  const BudgetAlert& got = alerts[0];
  EXPECT_GT(got.seq, 0);
  EXPECT_EQ(got.budget_id, b.id);
  EXPECT_EQ(got.project_id, project_);
  EXPECT_EQ(got.period_start, kT0);
  EXPECT_EQ(got.kind, "actual");
  EXPECT_EQ(got.threshold, 80);
  EXPECT_EQ(got.fired_at, kT0 + 1);
  EXPECT_EQ(got.spend, 0.1 + 0.2);
  EXPECT_EQ(got.amount, 1.0 / 3);
  EXPECT_EQ(got.message, "spent $80.25 of $100");
  EXPECT_EQ(got.next_delivery_at, kT0 + 7);
  EXPECT_EQ(got.delivery_attempts, 0);
  EXPECT_EQ(got.delivered_at, std::nullopt);
  EXPECT_EQ(got.last_error, "");
  EXPECT_EQ(alerts[1].threshold, 80.5);
  EXPECT_EQ(alerts[2].kind, "forecast");
  EXPECT_EQ(alerts[3].period_start, kT0 + kDayMs);
}

TEST_P(CostStoreContractTest, ConcurrentCallersFireAnAlertOnce) {
  BudgetRecord b = MakeBudget(project_, "monthly");
  ASSERT_TRUE(store_->budgets().CreateBudget(b).ok());
  std::atomic<int> recorded{0};
  std::atomic<int> failed{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&] {
      auto added = store_->budgets().AddBudgetAlert(MakeAlert(b, 100));
      if (!added.ok()) {
        ++failed;
      } else if (*added) {
        ++recorded;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failed.load(), 0);
  EXPECT_EQ(recorded.load(), 1);
  EXPECT_EQ(Alerts(project_).size(), 1u);
}

TEST_P(CostStoreContractTest, AlertsAreListedAfterASeqPerProjectAtMostLimit) {
  const std::string other = "prj_" + stem_ + "b";
  BudgetRecord mine = MakeBudget(project_, "monthly");
  BudgetRecord theirs = MakeBudget(other, "monthly");
  ASSERT_TRUE(store_->budgets().CreateBudget(mine).ok());
  ASSERT_TRUE(store_->budgets().CreateBudget(theirs).ok());
  for (double threshold : {50, 80, 90, 100}) {
    ASSERT_TRUE(*store_->budgets().AddBudgetAlert(MakeAlert(mine, threshold)));
    ASSERT_TRUE(*store_->budgets().AddBudgetAlert(MakeAlert(theirs, threshold)));
  }
  auto thresholds = [](const std::vector<BudgetAlert>& alerts) {
    std::vector<double> out;
    for (const BudgetAlert& a : alerts) out.push_back(a.threshold);
    return out;
  };
  using V = std::vector<double>;
  std::vector<BudgetAlert> all = Alerts(project_);
  ASSERT_EQ(thresholds(all), (V{50, 80, 90, 100}));
  EXPECT_EQ(thresholds(Alerts(project_, all[1].seq)), (V{90, 100}));
  EXPECT_EQ(thresholds(Alerts(project_, all[1].seq, 1)), V{90});
  EXPECT_EQ(thresholds(Alerts(project_, all[3].seq)), V{});
  for (const BudgetAlert& a : Alerts(other)) EXPECT_EQ(a.budget_id, theirs.id);

  // Every project's: both budgets' alerts, interleaved as they fired.
  std::vector<BudgetAlert> everyone = Alerts("", all[0].seq - 1, 4);
  ASSERT_EQ(everyone.size(), 4u);
  EXPECT_EQ(everyone[0].budget_id, mine.id);
  EXPECT_EQ(everyone[1].budget_id, theirs.id);
  EXPECT_EQ(everyone[2].budget_id, mine.id);
}

// DueBudgetAlerts sees every project's alerts. The times here (the first seconds of 1970) are
// ones no other test uses, and the budget is deleted at the end so that a repeated run starts
// clean.
TEST_P(CostStoreContractTest, DueAlertsAreThoseWhoseDeliveryTimeHasCome) {
  constexpr TimeMs kEarly = 1'000;
  BudgetRecord b = MakeBudget(project_, "monthly");
  ASSERT_TRUE(store_->budgets().CreateBudget(b).ok());
  auto add = [&](double threshold, std::optional<TimeMs> next) {
    BudgetAlert a = MakeAlert(b, threshold);
    a.next_delivery_at = next;
    ASSERT_TRUE(*store_->budgets().AddBudgetAlert(a));
  };
  add(50, kEarly + 10);
  add(60, std::nullopt);  // nothing to send
  add(70, kEarly + 5);
  add(80, kEarly + 20);
  add(90, kEarly + 11);

  auto due = [&](TimeMs now, int limit) {
    std::vector<double> out;
    auto listed = store_->budgets().DueBudgetAlerts(now, limit);
    EXPECT_TRUE(listed.ok()) << listed.status().ToString();
    if (!listed.ok()) return out;
    for (const BudgetAlert& a : *listed) out.push_back(a.threshold);
    return out;
  };
  using V = std::vector<double>;
  EXPECT_EQ(due(kEarly + 4, 10), V{});
  EXPECT_EQ(due(kEarly + 5, 10), V{70});
  EXPECT_EQ(due(kEarly + 10, 10), (V{50, 70}));  // oldest first, not soonest due
  EXPECT_EQ(due(kEarly + 20, 10), (V{50, 70, 80, 90}));
  EXPECT_EQ(due(kEarly + 20, 2), (V{50, 70}));

  ASSERT_TRUE(store_->budgets().DeleteBudget(b.id).ok());
  EXPECT_EQ(due(kEarly + 20, 10), V{});
}

TEST_P(CostStoreContractTest, DeliveryOutcomesAreRecorded) {
  BudgetRecord b = MakeBudget(project_, "monthly");
  ASSERT_TRUE(store_->budgets().CreateBudget(b).ok());
  BudgetAlert a = MakeAlert(b, 100);
  a.next_delivery_at = kT0 + 1;
  ASSERT_TRUE(*store_->budgets().AddBudgetAlert(a));
  a = Alerts(project_).at(0);

  // A failure: tried once, to be tried again later.
  a.delivery_attempts = 1;
  a.last_error = "POST https://hooks.example/x: 503";
  a.next_delivery_at = kT0 + 60'000;
  a.message = "not what a delivery changes";
  ASSERT_TRUE(store_->budgets().UpdateBudgetAlertDelivery(a).ok());
  BudgetAlert got = Alerts(project_).at(0);
  EXPECT_EQ(got.delivery_attempts, 1);
  EXPECT_EQ(got.last_error, "POST https://hooks.example/x: 503");
  EXPECT_EQ(got.next_delivery_at, kT0 + 60'000);
  EXPECT_EQ(got.delivered_at, std::nullopt);
  EXPECT_EQ(got.message, "spent $80.25 of $100");

  // Then delivered: nothing left to send.
  a.delivery_attempts = 2;
  a.last_error = "";
  a.next_delivery_at = std::nullopt;
  a.delivered_at = kT0 + 60'500;
  ASSERT_TRUE(store_->budgets().UpdateBudgetAlertDelivery(a).ok());
  got = Alerts(project_).at(0);
  EXPECT_EQ(got.delivery_attempts, 2);
  EXPECT_EQ(got.last_error, "");
  EXPECT_EQ(got.next_delivery_at, std::nullopt);
  EXPECT_EQ(got.delivered_at, kT0 + 60'500);
  auto due = store_->budgets().DueBudgetAlerts(kT0 + 1'000'000'000, 1'000'000);
  ASSERT_TRUE(due.ok()) << due.status().ToString();
  for (const BudgetAlert& d : *due) EXPECT_NE(d.seq, a.seq);

  BudgetAlert unknown = a;
  unknown.seq = int64_t{1} << 60;
  Status missing = store_->budgets().UpdateBudgetAlertDelivery(unknown);
  EXPECT_EQ(missing.code(), StatusCode::kNotFound);
  EXPECT_NE(missing.message().find(std::to_string(unknown.seq)), std::string::npos)
      << missing.ToString();
}

// --- Upgrading ------------------------------------------------------------------------------

// A database at schema 4, with a node registered then, is opened by this version: migrations 5
// and later run, the node's current registration gets its period and everything new works on it.
TEST_P(CostStoreContractTest, AStoreMigratedFromSchema4KeepsWorking) {
  UpgradeDatabase database(GetParam(), dir_, "tf_upgrade_");
  ASSERT_TRUE(database.created().ok()) << database.created().ToString();
  const std::string& url = database.url();
  NodeRecord n = MakeNode("a", kT0, R"({"price":3})");
  int latest = 0;
  {
    std::unique_ptr<Store> fresh = Open(url);
    ASSERT_NE(fresh, nullptr);
    latest = fresh->schema_version();
    EXPECT_GE(latest, 7);
    ASSERT_TRUE(fresh->nodes().RegisterNode(n).ok());
    ASSERT_TRUE(fresh->nodes().TouchNode(n.id, 1, kT0 + 50).ok());
  }
  // Back to schema 4: what migrations 5 to 7 added is gone, the node stays.
  Status down =
      RunSql(GetParam(), url,
             "DROP TABLE node_periods; DROP TABLE budget_alerts; DROP TABLE budgets; "
             "DROP TABLE dataset_shards; DROP TABLE datasets; "
             "DROP TABLE multipart_parts; DROP TABLE multipart_uploads; "
             "DROP TABLE object_segments; "
             "ALTER TABLE objects DROP COLUMN headers; "
             "ALTER TABLE objects DROP COLUMN checksum; "
             "DROP TABLE endpoints; DROP TABLE endpoint_loads; DROP TABLE pools; "
             "DROP TABLE join_tokens; DROP TABLE node_credentials; DROP TABLE endpoint_traffic; "
             "DROP TABLE documents; "
             "DELETE FROM schema_migrations WHERE version >= 5;");
  ASSERT_TRUE(down.ok()) << down.ToString();

  std::unique_ptr<Store> upgraded = Open(url);
  ASSERT_NE(upgraded, nullptr);
  EXPECT_EQ(upgraded->schema_version(), latest);
  auto periods = upgraded->nodes().ListNodePeriods(0, kT0 + 1'000);
  ASSERT_TRUE(periods.ok()) << periods.status().ToString();
  ASSERT_EQ(periods->size(), 1u);
  EXPECT_EQ((*periods)[0].node_id, n.id);
  EXPECT_EQ((*periods)[0].epoch, 1);
  EXPECT_EQ((*periods)[0].started_at, kT0);
  EXPECT_EQ((*periods)[0].last_seen_at, kT0 + 50);
  EXPECT_EQ((*periods)[0].info_json, R"({"price":3})");

  ASSERT_TRUE(upgraded->nodes().TouchNode(n.id, 1, kT0 + 60).ok());
  n.registered_at = n.heartbeat_at = kT0 + 70;
  auto again = upgraded->nodes().RegisterNode(n);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->epoch, 2);
  periods = upgraded->nodes().ListNodePeriods(0, kT0 + 1'000);
  ASSERT_TRUE(periods.ok());
  ASSERT_EQ(periods->size(), 2u);
  EXPECT_EQ((*periods)[0].last_seen_at, kT0 + 60);
  EXPECT_EQ((*periods)[1].started_at, kT0 + 70);

  BudgetRecord b = MakeBudget(project_, "monthly");
  ASSERT_TRUE(upgraded->budgets().CreateBudget(b).ok());
  EXPECT_TRUE(*upgraded->budgets().AddBudgetAlert(MakeAlert(b, 50)));
  EXPECT_EQ(upgraded->budgets().ListBudgetAlerts(project_, 0, 10)->size(), 1u);
}

INSTANTIATE_TEST_SUITE_P(Backends, CostStoreContractTest, ::testing::ValuesIn(StoreBackends()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace tf::store
