// The NodeStore and JobStore contract, run against every back end (tests/store_test_env.h).
#include <gtest/gtest.h>

#include <algorithm>

#include "base/crypto.h"
#include "store/store.h"
#include "store_test_env.h"
#include "store_test_fixture.h"

namespace tf::store {
namespace {

using testing::StoreBackends;

constexpr TimeMs kT0 = 1'700'000'000'000;

// The PostgreSQL database is shared by every test: each test uses ids of its own.
class JobStoreContractTest : public testing::StoreTest {
 protected:
  JobRecord MakeJob(const std::string& state = "queued", TimeMs created = kT0) {
    JobRecord j;
    j.id = "job_" + RandomHex(8);
    j.project_id = project_;
    j.name = "train";
    j.state = state;
    j.version = 1;
    j.priority = 5;
    j.created_at = j.updated_at = created;
    j.doc_json = R"({"spec":{"name":"train"}})";
    return j;
  }

  JobEvent Event(const JobRecord& j, const std::string& kind, TimeMs at = kT0) {
    return JobEvent{0, j.id, at, kind, "because " + kind};
  }
};

TEST_P(JobStoreContractTest, RegisteringANodeAgainBumpsItsEpochAndMakesItReady) {
  NodeRecord n;
  n.id = "node_" + RandomHex(8);
  n.name = "gpu-box";
  n.info_json = R"({"cpus":8})";
  n.registered_at = n.heartbeat_at = kT0;
  auto first = store_->nodes().RegisterNode(n);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->epoch, 1);
  EXPECT_EQ(first->state, "ready");

  ASSERT_TRUE(store_->nodes().SetNodeState(n.id, "draining", R"({"deadline_ms":1})").ok());
  auto draining = store_->nodes().GetNode(n.id);
  ASSERT_TRUE(draining.ok());
  EXPECT_EQ(draining->state, "draining");
  EXPECT_EQ(draining->drain_json, R"({"deadline_ms":1})");

  n.info_json = R"({"cpus":16})";
  auto second = store_->nodes().RegisterNode(n);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->epoch, 2);
  auto got = store_->nodes().GetNode(n.id);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->state, "ready");
  EXPECT_EQ(got->drain_json, "");
  EXPECT_EQ(got->info_json, R"({"cpus":16})");
  EXPECT_EQ(got->name, "gpu-box");

  auto all = store_->nodes().ListNodes();
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(std::count_if(all->begin(), all->end(), [&](auto& x) { return x.id == n.id; }), 1);
}

TEST_P(JobStoreContractTest, HeartbeatsFromAnOlderEpochAreRefused) {
  NodeRecord n;
  n.id = "node_" + RandomHex(8);
  n.info_json = "{}";
  ASSERT_TRUE(store_->nodes().RegisterNode(n).ok());
  ASSERT_TRUE(store_->nodes().RegisterNode(n).ok());  // epoch 2
  EXPECT_EQ(store_->nodes().TouchNode(n.id, 1, kT0 + 5).code(), StatusCode::kAborted);
  ASSERT_TRUE(store_->nodes().TouchNode(n.id, 2, kT0 + 7).ok());
  EXPECT_EQ(store_->nodes().GetNode(n.id)->heartbeat_at, kT0 + 7);
  EXPECT_EQ(store_->nodes().TouchNode("node_missing" + RandomHex(4), 1, kT0).code(),
            StatusCode::kNotFound);
  EXPECT_EQ(store_->nodes().SetNodeState("node_missing" + RandomHex(4), "lost", "").code(),
            StatusCode::kNotFound);
  EXPECT_EQ(store_->nodes().GetNode("node_missing" + RandomHex(4)).status().code(),
            StatusCode::kNotFound);
}

TEST_P(JobStoreContractTest, ConditionalStateChangesAndDeletesNameTheStateTheyFound) {
  NodeRecord n;
  n.id = "node_" + RandomHex(8);
  n.info_json = "{}";
  n.registered_at = n.heartbeat_at = kT0;
  ASSERT_TRUE(store_->nodes().RegisterNode(n).ok());
  Status not_draining = store_->nodes().ChangeNodeState(n.id, "draining", "ready", "");
  EXPECT_EQ(not_draining.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(not_draining.message(), "node '" + n.id + "' is ready, not draining");
  Status live = store_->nodes().DeleteLostNode(n.id);
  EXPECT_EQ(live.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(live.message(), "node '" + n.id + "' is ready, not lost");

  ASSERT_TRUE(store_->nodes().SetNodeState(n.id, "draining", R"({"deadline_ms":1})").ok());
  ASSERT_TRUE(store_->nodes().ChangeNodeState(n.id, "draining", "ready", "").ok());
  auto ready = store_->nodes().GetNode(n.id);
  ASSERT_TRUE(ready.ok());
  EXPECT_EQ(ready->state, "ready");
  EXPECT_EQ(ready->drain_json, "");

  ASSERT_TRUE(store_->nodes().SetNodeState(n.id, "lost", "").ok());
  ASSERT_TRUE(store_->nodes().DeleteLostNode(n.id).ok());
  EXPECT_EQ(store_->nodes().GetNode(n.id).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(store_->nodes().DeleteLostNode(n.id).code(), StatusCode::kNotFound);
  EXPECT_EQ(store_->nodes().ChangeNodeState(n.id, "draining", "ready", "").code(),
            StatusCode::kNotFound);
  // Its period stays: metering still prices the time it was up. Registered again, it goes on
  // from its last epoch, with a period of its own.
  auto back = store_->nodes().RegisterNode(n);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->epoch, 2);
  auto periods = store_->nodes().ListNodePeriods(kT0, kT0 + 1);
  ASSERT_TRUE(periods.ok());
  EXPECT_EQ(std::count_if(periods->begin(), periods->end(),
                          [&](const NodePeriod& p) { return p.node_id == n.id; }),
            2);
}

TEST_P(JobStoreContractTest, JobsAreCreatedOnceAndListedByProjectAndState) {
  JobRecord a = MakeJob("queued", kT0);
  JobRecord b = MakeJob("running", kT0 + 1);
  JobRecord c = MakeJob("succeeded", kT0 + 2);
  for (auto* j : {&a, &b, &c}) ASSERT_TRUE(store_->jobs().CreateJob(*j, Event(*j, "queued")).ok());
  EXPECT_EQ(store_->jobs().CreateJob(a, Event(a, "queued")).code(), StatusCode::kAlreadyExists);

  auto got = store_->jobs().GetJob(b.id);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->state, "running");
  EXPECT_EQ(got->doc_json, b.doc_json);
  EXPECT_EQ(got->priority, 5);

  auto active = store_->jobs().ListJobs(project_, {"queued", "running"}, 100);
  ASSERT_TRUE(active.ok());
  ASSERT_EQ(active->size(), 2u);
  EXPECT_EQ((*active)[0].id, a.id);  // oldest first
  EXPECT_EQ((*active)[1].id, b.id);
  auto all = store_->jobs().ListJobs(project_, {}, 100);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), 3u);
  auto limited = store_->jobs().ListJobs(project_, {}, 1);
  ASSERT_TRUE(limited.ok());
  EXPECT_EQ(limited->size(), 1u);
  auto other = store_->jobs().ListJobs("prj_other" + RandomHex(4), {}, 100);
  ASSERT_TRUE(other.ok());
  EXPECT_TRUE(other->empty());
  EXPECT_EQ(store_->jobs().GetJob("job_missing").status().code(), StatusCode::kNotFound);
}

TEST_P(JobStoreContractTest, AnUpdateFromAStaleVersionIsRefusedAndWritesNothing) {
  JobRecord j = MakeJob();
  ASSERT_TRUE(store_->jobs().CreateJob(j, Event(j, "queued")).ok());

  JobRecord starting = j;
  starting.state = "starting";
  starting.version = 2;
  starting.doc_json = R"({"attempt":1})";
  ASSERT_TRUE(store_->jobs().UpdateJob(starting, 1, {Event(j, "starting", kT0 + 1)}).ok());

  // A second writer that read version 1 loses, and its event is not kept either.
  JobRecord cancelled = j;
  cancelled.state = "cancelled";
  cancelled.version = 2;
  EXPECT_EQ(store_->jobs().UpdateJob(cancelled, 1, {Event(j, "cancelled", kT0 + 2)}).code(),
            StatusCode::kAborted);

  auto got = store_->jobs().GetJob(j.id);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->state, "starting");
  EXPECT_EQ(got->version, 2);
  EXPECT_EQ(got->doc_json, R"({"attempt":1})");

  auto events = store_->jobs().ListJobEvents(j.id, 0);
  ASSERT_TRUE(events.ok());
  ASSERT_EQ(events->size(), 2u);
  EXPECT_EQ((*events)[0].kind, "queued");
  EXPECT_EQ((*events)[1].kind, "starting");
  EXPECT_EQ((*events)[1].message, "because starting");
  EXPECT_LT((*events)[0].seq, (*events)[1].seq);
  auto later = store_->jobs().ListJobEvents(j.id, (*events)[0].seq);
  ASSERT_TRUE(later.ok());
  ASSERT_EQ(later->size(), 1u);
  EXPECT_EQ((*later)[0].kind, "starting");

  JobRecord ghost = MakeJob();
  ghost.version = 2;
  EXPECT_EQ(store_->jobs().UpdateJob(ghost, 1, {}).code(), StatusCode::kNotFound);
}

TEST_P(JobStoreContractTest, MetricsKeepTheirOrderAndTheLatestAreListed) {
  std::string job = "job_" + RandomHex(8);
  std::vector<MetricPoint> points;
  for (int i = 0; i < 5; ++i)
    points.push_back({job, 1, "loss", int64_t{i} * 10, 4.0 - i * 0.25, kT0 + i});
  points.push_back({job, 2, "accuracy", -1, 0.125, kT0 + 9});
  ASSERT_TRUE(store_->jobs().AddMetrics(points).ok());
  auto all = store_->jobs().ListMetrics(job, 100);
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 6u);
  EXPECT_EQ((*all)[0].name, "loss");
  EXPECT_EQ((*all)[0].value, 4.0);
  EXPECT_EQ((*all)[4].step, 40);
  EXPECT_EQ((*all)[5].attempt, 2);
  EXPECT_EQ((*all)[5].value, 0.125);
  EXPECT_EQ((*all)[5].step, -1);
  auto latest = store_->jobs().ListMetrics(job, 2);
  ASSERT_TRUE(latest.ok());
  ASSERT_EQ(latest->size(), 2u);
  EXPECT_EQ((*latest)[0].step, 40);
  EXPECT_EQ((*latest)[1].name, "accuracy");
}

INSTANTIATE_TEST_SUITE_P(Backends, JobStoreContractTest, ::testing::ValuesIn(StoreBackends()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace tf::store
