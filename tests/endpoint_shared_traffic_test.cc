// Recent traffic across servers that share a store (endpoints/shared_traffic.h): two servers'
// gateways answer requests, each publishes its closed intervals into a real SQLite store, and
// `describe` on either counts both. On a fake clock.
#include <gtest/gtest.h>

#include "endpoints/shared_traffic.h"
#include "store_test_env.h"

namespace tf::endpoints {
namespace {

using testing::TempDir;

constexpr TimeMs kT0 = 1'000'000'000;  // a multiple of kTrafficIntervalMs

TEST(LatencyHistogramTest, PercentilesWithinTwoPercentAndMergeable) {
  LatencyHistogram a, b;
  for (int i = 1; i <= 1000; ++i) (i % 2 ? a : b).Add(i / 1000.0);  // 1 ms .. 1 s
  LatencyHistogram merged = a;
  merged.Merge(b);
  EXPECT_EQ(merged.count(), 1000);
  for (double p : {50.0, 90.0, 99.0}) {
    const double exact = p / 100.0;  // the nearest rank of 1..1000 ms
    EXPECT_NEAR(merged.Percentile(p), exact, exact * 0.02) << p;
  }
  auto back = LatencyHistogram::FromJson(merged.ToJson());
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->Percentile(90), merged.Percentile(90));
  EXPECT_EQ(LatencyHistogram().Percentile(50), 0);
  EXPECT_FALSE(LatencyHistogram::FromJson(nlohmann::json{{"x", 1}}).ok());
  EXPECT_FALSE(LatencyHistogram::FromJson(nlohmann::json{{"3", -1}}).ok());
  EXPECT_FALSE(TrafficSlice::FromJson("{\"requests\": 1}").ok());
}

class SharedTrafficTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = store::OpenStore((dir_.path() / "store.db").string());
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    store_ = std::move(opened).value();
    clock_.Set(kT0);
  }

  TempDir dir_;
  std::unique_ptr<store::Store> store_;
  FakeClock clock_;
  RecentRequests recent_a_, recent_b_;
};

TEST_F(SharedTrafficTest, DescribeOnEitherServerCountsBoth) {
  TrafficPublisher publish_a(store_->endpoints(), recent_a_, clock_, "srv_a");
  TrafficPublisher publish_b(store_->endpoints(), recent_b_, clock_, "srv_b");
  TrafficView view_a(recent_a_, &store_->endpoints(), "srv_a");
  TrafficView view_b(recent_b_, &store_->endpoints(), "srv_b");
  ASSERT_TRUE(publish_a.Publish().ok());
  ASSERT_TRUE(publish_b.Publish().ok());

  // Server a answers 10 requests of 100 ms, b 30 of 300 ms (two failed), 5 tokens each.
  for (int i = 0; i < 10; ++i) recent_a_.Add("ep_1", {kT0 + 100 + i, 200, 0.1, 0.01, 5});
  for (int i = 0; i < 30; ++i) {
    recent_b_.Add("ep_1", {kT0 + 200 + i, i < 2 ? 503 : 200, 0.3, 0.03, 5});
  }
  // Before the interval closes, each sees only its own, exactly.
  clock_.Set(kT0 + kTrafficIntervalMs - 1);
  ASSERT_TRUE(publish_b.Publish().ok());
  int servers = 0;
  auto own = view_a.Summary("ep_1", clock_.Now(), &servers);
  ASSERT_TRUE(own.ok()) << own.status().ToString();
  EXPECT_EQ(own->requests, 10);
  EXPECT_DOUBLE_EQ(own->p50_seconds, 0.1);
  EXPECT_EQ(servers, 1);
  auto listed = store_->endpoints().ListEndpointTraffic("ep_1", 0);
  ASSERT_TRUE(listed.ok());
  EXPECT_TRUE(listed->empty()) << "nothing is written before its interval closes";

  clock_.Set(kT0 + kTrafficIntervalMs);
  ASSERT_TRUE(publish_a.Publish().ok());
  ASSERT_TRUE(publish_b.Publish().ok());
  for (TrafficView* view : {&view_a, &view_b}) {
    auto both = view->Summary("ep_1", clock_.Now(), &servers);
    ASSERT_TRUE(both.ok()) << both.status().ToString();
    EXPECT_EQ(servers, 2);
    EXPECT_EQ(both->requests, 40);
    EXPECT_EQ(both->errors, 2);
    EXPECT_EQ(both->completion_tokens, 200);
    EXPECT_DOUBLE_EQ(both->requests_per_second, 40.0 / 300);
    // 38 answered: 10 at 100 ms, 28 at 300 ms.
    EXPECT_NEAR(both->p50_seconds, 0.3, 0.3 * 0.02);
    EXPECT_NEAR(both->p90_seconds, 0.3, 0.3 * 0.02);
    EXPECT_NEAR(both->p50_first_byte_seconds, 0.03, 0.03 * 0.02);
  }
  listed = store_->endpoints().ListEndpointTraffic("ep_1", 0);
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(listed->size(), 2u) << "one row per server and interval";

  // An idle server writes nothing; a publication that closed nothing new writes nothing.
  clock_.Set(kT0 + 3 * kTrafficIntervalMs);
  ASSERT_TRUE(publish_a.Publish().ok());
  EXPECT_EQ(store_->endpoints().ListEndpointTraffic("ep_1", 0)->size(), 2u);

  // Out of the window, the other server's intervals no longer count.
  clock_.Set(kT0 + kRecentWindowMs + kTrafficIntervalMs);
  auto later = view_a.Summary("ep_1", clock_.Now(), &servers);
  ASSERT_TRUE(later.ok());
  EXPECT_EQ(later->requests, 0);
  EXPECT_EQ(servers, 0);
}

TEST_F(SharedTrafficTest, WithoutASharedStoreOnlyThisServerCounts) {
  recent_a_.Add("ep_1", {kT0 + 1, 200, 0.1, 0.01, 5});
  TrafficView view(recent_a_, nullptr, "srv_a");
  int servers = 0;
  auto s = view.Summary("ep_1", kT0 + 2, &servers);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->requests, 1);
  EXPECT_EQ(servers, 1);
}

}  // namespace
}  // namespace tf::endpoints
