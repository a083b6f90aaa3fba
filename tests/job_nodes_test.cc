// A lost node is kept for lost_node_retention_ms after its last heartbeat, then forgotten by
// the controller's tick; a worker that comes back registers it again. A JobService over a real
// SQLite store with a fake clock (job_service_fixture.h).
#include <gtest/gtest.h>

#include "api/job_json.h"
#include "job_service_fixture.h"

namespace tf::jobs {
namespace {

class NodeRetentionTest : public testing::JobServiceFixture {
 protected:
  JobServiceOptions Options() const override {
    JobServiceOptions options;
    options.heartbeat_timeout_ms = 10 * kSecondMs;
    options.lost_node_retention_ms = kHourMs;
    return options;
  }

  void SetUp() override {
    JobServiceFixture::SetUp();
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

// `nodes` names a project's own ranks to it, and every rank to an admin: another project's job
// ids are not its business.
TEST_F(NodeRetentionTest, ANodeShowsAProjectOnlyItsOwnRanks) {
  ASSERT_TRUE(jobs_->RegisterNode("node-a", "a", info_).ok());
  auto other = auth_->CreateProject("other");
  ASSERT_TRUE(other.ok()) << other.status().ToString();
  auto job = jobs_->Submit(project_, "name: mine\ncommand: sleep 1\n", "job.yaml", "");
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  Tick();
  auto nodes = jobs_->ListNodes();
  ASSERT_TRUE(nodes.ok()) << nodes.status().ToString();
  ASSERT_EQ(nodes->size(), 1u);
  const std::string rank = job->id() + "/attempt-1/rank-0";
  EXPECT_EQ(api::NodeViewToJson((*nodes)[0], project_)["running"], nlohmann::json::array({rank}));
  EXPECT_EQ(api::NodeViewToJson((*nodes)[0], "")["running"], nlohmann::json::array({rank}));
  EXPECT_EQ(api::NodeViewToJson((*nodes)[0], other->id)["running"], nlohmann::json::array());
}

}  // namespace
}  // namespace tf::jobs
