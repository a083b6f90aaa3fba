// Each attempt of a job has its own API token (the TENSORFLEET_TOKEN of its processes, and what
// its worker ships logs and checkpoints with). Placing a newer attempt revokes the tokens of
// the ones before, so a rank left running on a node declared lost (cut off, then back) can
// write nothing; the last attempt's token is revoked once the job has ended. A JobService over
// a real SQLite store with a fake clock (job_service_fixture.h).
#include <gtest/gtest.h>

#include "job_service_fixture.h"
#include "jobs/job_doc.h"

namespace tf::jobs {
namespace {

class AttemptTokenTest : public testing::JobServiceFixture {
 protected:
  JobServiceOptions Options() const override {
    JobServiceOptions options;
    options.heartbeat_timeout_ms = 10 * kSecondMs;
    return options;
  }

  void Register(const std::string& node) {
    fleet::NodeInfo info;
    info.address = "10.0.0." + std::to_string(epochs_.size() + 1);
    info.cpus = 8;
    auto registered = jobs_->RegisterNode(node, node, info);
    ASSERT_TRUE(registered.ok()) << registered.status().ToString();
    epochs_[node] = registered->epoch;
  }

  // Heartbeats from `alive` only, then one controller tick.
  void Tick(const std::vector<std::string>& alive) {
    for (const std::string& node : alive) {
      ASSERT_TRUE(jobs_->Heartbeat(node, epochs_[node]).ok()) << node;
    }
    auto stats = jobs_->Tick();
    ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  }

  Job Get(const std::string& id) {
    auto job = jobs_->Get(project_, id);
    EXPECT_TRUE(job.ok()) << job.status().ToString();
    return job.ok() ? *job : Job{};
  }

  // The token the node's assignment hands the job's rank; "" when it runs none.
  std::string TokenOnNode(const std::string& node) {
    auto assignments = jobs_->Assignments(node);
    EXPECT_TRUE(assignments.ok()) << assignments.status().ToString();
    if (!assignments.ok() || assignments->ranks.empty()) return "";
    return assignments->ranks[0].job_token;
  }

  // Whether the server would take a request made with `secret`, and for which project.
  std::string ProjectOf(const std::string& secret) {
    auto principal = auth_->Authenticate(secret);
    if (!principal.ok()) {
      EXPECT_EQ(principal.status().code(), StatusCode::kUnauthenticated)
          << principal.status().ToString();
      return "refused";
    }
    EXPECT_FALSE(principal->admin);
    return principal->project_id;
  }

  std::map<std::string, int64_t> epochs_;
};

TEST_F(AttemptTokenTest, ANewAttemptRevokesTheOnesBeforeAndTheLastIsRevokedWhenTheJobEnds) {
  Register("node-a");
  Register("node-b");
  auto submitted = jobs_->Submit(project_, "name: train\ncommand: sleep 1\nresources: {cpus: 8}\n",
                                 "t.yaml", "");
  ASSERT_TRUE(submitted.ok()) << submitted.status().ToString();
  std::string id = submitted->id();
  Tick({"node-a", "node-b"});

  Job first = Get(id);
  ASSERT_EQ(first.doc.attempts.size(), 1u);
  std::string stale_node = first.doc.attempts[0].ranks[0].node_id;
  std::string other_node = stale_node == "node-a" ? "node-b" : "node-a";
  std::string first_token = TokenOnNode(stale_node);
  ASSERT_FALSE(first_token.empty());
  EXPECT_EQ(first_token, first.doc.attempts[0].api_token);
  EXPECT_EQ(ProjectOf(first_token), project_) << "a token of the job's project";

  // The first node goes silent: it is declared lost and the job placed again on the other.
  for (int i = 0; i < 30 && Get(id).doc.attempts.size() < 2; ++i) {
    clock_.Advance(kSecondMs);
    Tick({other_node});
  }
  Job second = Get(id);
  ASSERT_EQ(second.doc.attempts.size(), 2u) << "the job was not placed again";
  std::string second_token = TokenOnNode(other_node);
  ASSERT_FALSE(second_token.empty());
  EXPECT_NE(second_token, first_token);
  EXPECT_EQ(ProjectOf(second_token), project_);
  // Whatever still runs on the lost node (its worker cut off, not dead) can write nothing.
  EXPECT_EQ(ProjectOf(first_token), "refused");

  const Attempt& current = *second.doc.current();
  RankReport report;
  report.attempt = current.number;
  report.token = current.token;
  report.state = "succeeded";
  report.exit_code = 0;
  ASSERT_TRUE(jobs_->Report(id, report).ok());
  EXPECT_EQ(Get(id).state(), kSucceeded);
  EXPECT_EQ(ProjectOf(second_token), "refused") << "the job ended and its last process is gone";

  // No token of the job is left usable.
  auto tokens = auth_->ListTokens(project_);
  ASSERT_TRUE(tokens.ok()) << tokens.status().ToString();
  EXPECT_EQ(tokens->size(), 2u);
  for (const store::Token& t : *tokens)
    EXPECT_TRUE(t.revoked_at.has_value()) << t.name << " is live";
}

}  // namespace
}  // namespace tf::jobs
