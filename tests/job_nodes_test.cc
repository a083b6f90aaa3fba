// A lost node is kept for lost_node_retention_ms after its last heartbeat, then forgotten by
// the controller's tick; a worker that comes back registers it again. A JobService over a real
// SQLite store with a fake clock.
#include <gtest/gtest.h>

#include "auth/auth_service.h"
#include "jobs/job_service.h"
#include "store_test_env.h"

namespace tf::jobs {
namespace {

constexpr TimeMs kT0 = 1'764'460'800'000;  // 2025-11-30T00:00:00Z

class NodeRetentionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = store::OpenStore((dir_.path() / "tensorfleet.db").string());
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    store_ = std::move(opened).value();
    auth_ = std::make_unique<auth::AuthService>(store_->auth(), clock_);
    JobServiceOptions options;
    options.heartbeat_timeout_ms = 10 * kSecondMs;
    options.lost_node_retention_ms = kHourMs;
    jobs_ = std::make_unique<JobService>(*store_, *auth_, clock_, options);
    info_.address = "10.0.0.1";
    info_.cpus = 8;
  }

  TickStats Tick() {
    auto stats = jobs_->Tick();
    EXPECT_TRUE(stats.ok()) << stats.status().ToString();
    return stats.ok() ? *stats : TickStats{};
  }

  // Each node's id and state.
  std::vector<std::string> Nodes() {
    std::vector<std::string> out;
    auto nodes = jobs_->ListNodes();
    EXPECT_TRUE(nodes.ok()) << nodes.status().ToString();
    if (!nodes.ok()) return out;
    for (const NodeView& n : *nodes) out.push_back(n.record.id + " " + n.record.state);
    return out;
  }

  testing::TempDir dir_;
  std::unique_ptr<store::Store> store_;
  FakeClock clock_{kT0};
  std::unique_ptr<auth::AuthService> auth_;
  std::unique_ptr<JobService> jobs_;
  fleet::NodeInfo info_;
};

using Want = std::vector<std::string>;

TEST_F(NodeRetentionTest, ALostNodeIsForgottenAfterTheRetentionAndComesBackByRegistering) {
  ASSERT_TRUE(jobs_->RegisterNode("node-a", "a", info_).ok());
  ASSERT_TRUE(jobs_->RegisterNode("node-b", "b", info_).ok());
  clock_.Advance(11 * kSecondMs);
  EXPECT_EQ(Tick().nodes_lost, 2);
  EXPECT_EQ(Nodes(), (Want{"node-a lost", "node-b lost"}));

  // node-b's worker comes back before the retention ends; node-a's never does.
  clock_.Advance(kHourMs - 20 * kSecondMs);
  ASSERT_TRUE(jobs_->RegisterNode("node-b", "b", info_).ok());
  EXPECT_EQ(Tick().nodes_forgotten, 0);
  EXPECT_EQ(Nodes(), (Want{"node-a lost", "node-b ready"}));
  clock_.Advance(10 * kSecondMs);  // node-a's last heartbeat is now over an hour old
  ASSERT_TRUE(jobs_->Heartbeat("node-b", 2).ok());
  EXPECT_EQ(Tick().nodes_forgotten, 1);
  EXPECT_EQ(Nodes(), (Want{"node-b ready"}));

  // Forgotten is not banned: its worker registers it again.
  auto back = jobs_->RegisterNode("node-a", "a", info_);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(Nodes(), (Want{"node-a ready", "node-b ready"}));
}

TEST_F(NodeRetentionTest, OnlyALostNodeIsRemovedAndOnlyADrainingOneUndrained) {
  ASSERT_TRUE(jobs_->RegisterNode("node-a", "a", info_).ok());
  Status live = jobs_->RemoveNode("node-a");
  EXPECT_EQ(live.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(live.message(),
            "node 'node-a' is ready, not lost: only a lost node can be removed (drain it and "
            "stop its worker; it is lost once its heartbeats stop for the timeout)");
  Status ready = jobs_->Undrain("node-a");
  EXPECT_EQ(ready.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(ready.message(),
            "node 'node-a' is ready, not draining: only a draining node can be undrained");

  ASSERT_TRUE(jobs_->Drain("node-a", 60'000, "maintenance").ok());
  EXPECT_EQ(Nodes(), (Want{"node-a draining"}));
  ASSERT_TRUE(jobs_->Undrain("node-a").ok());
  EXPECT_EQ(Nodes(), (Want{"node-a ready"}));

  clock_.Advance(11 * kSecondMs);
  Tick();
  ASSERT_TRUE(jobs_->RemoveNode("node-a").ok());
  EXPECT_TRUE(Nodes().empty());
  EXPECT_EQ(jobs_->RemoveNode("node-a").code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace tf::jobs
