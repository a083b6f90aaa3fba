// The job state machine (jobs/lifecycle.h): every transition, on explicit times.
#include <gtest/gtest.h>

#include "jobs/lifecycle.h"

namespace tf::jobs {
namespace {

constexpr TimeMs kT0 = 1'700'000'000'000;

Job MakeJob(int nodes = 1, RetryPolicy retry = {}) {
  Job job;
  job.record.id = "job_test";
  job.record.state = kQueued;
  job.record.created_at = kT0;
  job.spec.name = "train";
  job.spec.command = {"true"};
  job.spec.nodes = nodes;
  job.spec.resources.gpus = 1;
  job.spec.retry = retry;
  job.doc.spec = JobSpecToJson(job.spec);
  return job;
}

fleet::Placement PlaceOn(const std::vector<std::string>& node_ids) {
  fleet::Placement p;
  p.job_id = "job_test";
  for (const std::string& n : node_ids) p.ranks.push_back({n, {0}});
  return p;
}

RankReport Report(const Job& job, int rank, const std::string& state, int exit_code = -1) {
  RankReport r;
  r.attempt = job.doc.current()->number;
  r.token = job.doc.current()->token;
  r.node_rank = rank;
  r.state = state;
  r.exit_code = exit_code;
  return r;
}

std::vector<std::string> Kinds(const Events& events) {
  std::vector<std::string> out;
  for (const auto& e : events) out.push_back(e.kind);
  return out;
}

TEST(JobLifecycle, PlacedRunningSucceeded) {
  Job job = MakeJob(2);
  Events events;
  ASSERT_TRUE(WantsPlacement(job));
  StartAttempt(job, PlaceOn({"node-a", "node-b"}), {"10.0.0.1", "10.0.0.2"}, 77, 29501, kT0,
               events);
  EXPECT_EQ(job.state(), kStarting);
  EXPECT_FALSE(WantsPlacement(job));
  ASSERT_EQ(job.doc.current()->ranks.size(), 2u);
  EXPECT_EQ(job.doc.current()->ranks[1].address, "10.0.0.2");

  ASSERT_TRUE(ApplyRankReport(job, Report(job, 0, "running"), kT0 + 1, events).ok());
  EXPECT_EQ(job.state(), kStarting);  // rank 1 not yet
  ASSERT_TRUE(ApplyRankReport(job, Report(job, 1, "running"), kT0 + 2, events).ok());
  EXPECT_EQ(job.state(), kRunning);
  EXPECT_EQ(job.doc.current()->started_at, kT0 + 2);

  ASSERT_TRUE(ApplyRankReport(job, Report(job, 1, "succeeded", 0), kT0 + 3, events).ok());
  EXPECT_EQ(job.state(), kRunning);
  ASSERT_TRUE(ApplyRankReport(job, Report(job, 0, "succeeded", 0), kT0 + 4, events).ok());
  EXPECT_EQ(job.state(), kSucceeded);
  EXPECT_EQ(job.doc.exit_code, 0);
  EXPECT_EQ(Kinds(events), (std::vector<std::string>{"starting", "running", "succeeded"}));
}

TEST(JobLifecycle, AStaleTokenChangesNothing) {
  Job job = MakeJob();
  Events events;
  StartAttempt(job, PlaceOn({"node-a"}), {"a"}, 5, 29500, kT0, events);
  RankReport stale = Report(job, 0, "failed", 1);
  stale.token = 6;
  Job before = job;
  EXPECT_EQ(ApplyRankReport(job, stale, kT0 + 1, events).code(), StatusCode::kAborted);
  EXPECT_EQ(JobDocToJson(job.doc), JobDocToJson(before.doc));
  RankReport wrong_attempt = Report(job, 0, "failed", 1);
  wrong_attempt.attempt = 2;
  EXPECT_EQ(ApplyRankReport(job, wrong_attempt, kT0 + 1, events).code(), StatusCode::kAborted);
  RankReport bad_rank = Report(job, 3, "running");
  EXPECT_EQ(ApplyRankReport(job, bad_rank, kT0 + 1, events).code(), StatusCode::kInvalidArgument);
  RankReport bad_state = Report(job, 0, "exploded");
  EXPECT_EQ(ApplyRankReport(job, bad_state, kT0 + 1, events).code(), StatusCode::kInvalidArgument);
}

TEST(JobLifecycle, ANodeReportsOnlyTheRanksPlacedOnIt) {
  Job job = MakeJob(2);
  Events events;
  StartAttempt(job, PlaceOn({"node-a", "node-b"}), {"a", "b"}, 5, 29500, kT0, events);
  RankReport from_b = Report(job, 0, "failed", 1);
  from_b.from_node = "node-b";
  Job before = job;
  Status refused = ApplyRankReport(job, from_b, kT0 + 1, events);
  EXPECT_EQ(refused.code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(refused.message(), "rank 0 of attempt 1 of job job_test is not placed on node node-b");
  EXPECT_EQ(JobDocToJson(job.doc), JobDocToJson(before.doc));
  RankReport from_a = Report(job, 0, "running");
  from_a.from_node = "node-a";
  ASSERT_TRUE(ApplyRankReport(job, from_a, kT0 + 1, events).ok());
  EXPECT_EQ(job.doc.current()->ranks[0].state, "running");
}

TEST(JobLifecycle, ErrorsAreRetriedOnlyAsThePolicySays) {
  struct Case {
    bool on_error;
    int max_attempts;
    std::string want;
  };
  for (const Case& c :
       {Case{false, 3, kFailed}, Case{true, 3, kRetrying}, Case{true, 1, kFailed}}) {
    RetryPolicy policy;
    policy.on_error = c.on_error;
    policy.max_attempts = c.max_attempts;
    Job job = MakeJob(1, policy);
    Events events;
    StartAttempt(job, PlaceOn({"node-a"}), {"a"}, 9, 29500, kT0, events);
    RankReport failed = Report(job, 0, "failed", 1);
    failed.log_tail = "Traceback: boom";
    ASSERT_TRUE(ApplyRankReport(job, failed, kT0 + 10, events).ok());
    EXPECT_EQ(job.state(), c.want) << "on_error=" << c.on_error << " max=" << c.max_attempts;
    EXPECT_EQ(job.doc.current()->ranks[0].log_tail, "Traceback: boom");
    if (c.want == kFailed) {
      EXPECT_EQ(job.doc.exit_code, 1);
      EXPECT_NE(job.doc.reason.find("exit code 1"), std::string::npos) << job.doc.reason;
    } else {
      EXPECT_EQ(job.doc.not_before, kT0 + 10 + policy.backoff_ms);
      EXPECT_TRUE(WantsPlacement(job));  // its only rank has ended
    }
  }
}

TEST(JobLifecycle, BackoffDoublesUpToItsCap) {
  RetryPolicy p;
  p.backoff_ms = 1000;
  p.max_backoff_ms = 5000;
  EXPECT_EQ(RetryBackoff(p, 1), 1000);
  EXPECT_EQ(RetryBackoff(p, 2), 2000);
  EXPECT_EQ(RetryBackoff(p, 3), 4000);
  EXPECT_EQ(RetryBackoff(p, 4), 5000);
  EXPECT_EQ(RetryBackoff(p, 40), 5000);
}

TEST(JobLifecycle, AnInterruptedGangWaitsForEveryRankToStopBeforeTheNextAttempt) {
  Job job = MakeJob(2);
  Events events;
  StartAttempt(job, PlaceOn({"node-a", "node-b"}), {"a", "b"}, 1, 29500, kT0, events);
  ASSERT_TRUE(ApplyRankReport(job, Report(job, 0, "running"), kT0, events).ok());
  ASSERT_TRUE(ApplyRankReport(job, Report(job, 1, "running"), kT0, events).ok());
  RankReport drained = Report(job, 1, "interrupted", 143);
  drained.message = "drained: spot interruption notice";
  ASSERT_TRUE(ApplyRankReport(job, drained, kT0 + 5, events).ok());
  EXPECT_EQ(job.state(), kRetrying);
  EXPECT_EQ(job.doc.current()->state, kInterrupted);
  EXPECT_EQ(job.doc.current()->ranks[0].state, "stopping");
  EXPECT_EQ(job.doc.recoveries, 1);
  EXPECT_EQ(job.doc.not_before, kT0 + 5);  // no backoff after an interruption
  EXPECT_FALSE(WantsPlacement(job));       // rank 0 still runs
  ASSERT_TRUE(ApplyRankReport(job, Report(job, 0, "stopped", 0), kT0 + 6, events).ok());
  EXPECT_EQ(job.doc.current()->ranks[0].state, "stopped");
  EXPECT_TRUE(WantsPlacement(job));

  StartAttempt(job, PlaceOn({"node-c", "node-b"}), {"c", "b"}, 2, 29501, kT0 + 7, events);
  EXPECT_EQ(job.doc.current()->number, 2);
  // A late report from attempt 1's token is refused now that attempt 2 holds the job.
  RankReport late;
  late.attempt = 2;
  late.token = 1;
  late.state = "failed";
  EXPECT_EQ(ApplyRankReport(job, late, kT0 + 8, events).code(), StatusCode::kAborted);
}

TEST(JobLifecycle, ALostNodeEndsTheAttemptAndFreesTheGangForRetry) {
  Job job = MakeJob(2);
  Events events;
  StartAttempt(job, PlaceOn({"node-a", "node-b"}), {"a", "b"}, 1, 29500, kT0, events);
  MarkNodeLost(job, "node-b", kT0 + 20, events);
  EXPECT_EQ(job.state(), kRetrying);
  EXPECT_EQ(job.doc.current()->state, "lost");
  EXPECT_EQ(job.doc.current()->ranks[1].state, "lost");
  EXPECT_EQ(job.doc.current()->ranks[0].state, "stopping");
  EXPECT_FALSE(WantsPlacement(job));
  ASSERT_TRUE(ApplyRankReport(job, Report(job, 0, "stopped", 143), kT0 + 21, events).ok());
  EXPECT_TRUE(WantsPlacement(job));
}

TEST(JobLifecycle, NodeLossIsNotRetriedWhenThePolicySaysSo) {
  RetryPolicy policy;
  policy.on_node_lost = false;
  Job job = MakeJob(1, policy);
  Events events;
  StartAttempt(job, PlaceOn({"node-a"}), {"a"}, 1, 29500, kT0, events);
  MarkNodeLost(job, "node-a", kT0 + 20, events);
  EXPECT_EQ(job.state(), kFailed);
}

TEST(JobLifecycle, CancelWorksInEveryStateThatHasNotEnded) {
  for (const std::string state : {kQueued, kStarting, kRunning, kRetrying}) {
    Job job = MakeJob();
    Events events;
    if (state != kQueued) StartAttempt(job, PlaceOn({"node-a"}), {"a"}, 1, 29500, kT0, events);
    if (state == kRunning) {
      ASSERT_TRUE(ApplyRankReport(job, Report(job, 0, "running"), kT0, events).ok());
    }
    if (state == kRetrying) {
      ASSERT_TRUE(ApplyRankReport(job, Report(job, 0, "interrupted", 0), kT0, events).ok());
    }
    ASSERT_EQ(job.state(), state);
    ASSERT_TRUE(CancelJob(job, "cancelled by request", kT0 + 1, events).ok()) << state;
    EXPECT_EQ(job.state(), kCancelled);
    if (state == kStarting || state == kRunning) {
      EXPECT_EQ(job.doc.current()->state, kCancelled);
      EXPECT_EQ(job.doc.current()->ranks[0].state, "stopping");
    }
    EXPECT_EQ(CancelJob(job, "again", kT0 + 2, events).code(), StatusCode::kFailedPrecondition);
  }
}

TEST(JobLifecycle, MaxRuntimeEndsTheAttemptWithoutRetry) {
  Job job = MakeJob();
  job.spec.max_runtime_ms = 60'000;
  Events events;
  StartAttempt(job, PlaceOn({"node-a"}), {"a"}, 1, 29500, kT0, events);
  EnforceMaxRuntime(job, kT0 + 59'999, events);
  EXPECT_EQ(job.state(), kStarting);
  EnforceMaxRuntime(job, kT0 + 60'000, events);
  EXPECT_EQ(job.state(), kFailed);
  EXPECT_EQ(job.doc.current()->state, "timed-out");
}

TEST(JobLifecycle, TheDocumentRoundTripsThroughJson) {
  Job job = MakeJob(2);
  Events events;
  StartAttempt(job, PlaceOn({"node-a", "node-b"}), {"a", "b"}, 0xfedcba9876543210ull, 29500, kT0,
               events);
  auto decoded = JobDocFromJson(JobDocToJson(job.doc).dump());
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(decoded->current()->token, 0xfedcba9876543210ull);
  EXPECT_EQ(JobDocToJson(*decoded), JobDocToJson(job.doc));
}

// The store keeps the document as JSON between the controller's ticks: a gang's pending failure
// verdict must survive the trip, or the attempt would wait for it for ever.
TEST(JobLifecycle, AGangsPendingFailureVerdictSurvivesTheStore) {
  Job job = MakeJob(2);
  Events events;
  StartAttempt(job, PlaceOn({"node-a", "node-b"}), {"a", "b"}, 1, 29500, kT0, events);
  ASSERT_TRUE(ApplyRankReport(job, Report(job, 0, "failed", 3), kT0 + 100, events).ok());
  ASSERT_EQ(job.doc.current()->failure_seen_at, kT0 + 100);

  auto decoded = JobDocFromJson(JobDocToJson(job.doc).dump());
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(decoded->current()->failure_seen_at, kT0 + 100);
  EXPECT_EQ(decoded->current()->failure_exit_code, 3);
  EXPECT_EQ(decoded->current()->failure_reason, job.doc.current()->failure_reason);

  job.doc = *std::move(decoded);
  ResolveGangFailure(job, kT0 + 5100, 5000, events);
  EXPECT_EQ(job.state(), kFailed);
  EXPECT_EQ(job.doc.exit_code, 3);
}

TEST(JobLifecycle, AGangsFailedRankWaitsForTheVerdictALostNodeMakesItLost) {
  Job job = MakeJob(2);
  Events events;
  StartAttempt(job, PlaceOn({"node-a", "node-b"}), {"a", "b"}, 1, 29500, kT0, events);
  ASSERT_TRUE(ApplyRankReport(job, Report(job, 0, "running"), kT0, events).ok());
  ASSERT_TRUE(ApplyRankReport(job, Report(job, 1, "running"), kT0, events).ok());
  // node-b died: rank 0's all_reduce breaks at once, before node-b is declared lost.
  ASSERT_TRUE(ApplyRankReport(job, Report(job, 0, "failed", 1), kT0 + 100, events).ok());
  EXPECT_EQ(job.state(), kRunning);
  ResolveGangFailure(job, kT0 + 2000, 5000, events);
  EXPECT_EQ(job.state(), kRunning);
  MarkNodeLost(job, "node-b", kT0 + 3000, events);
  EXPECT_EQ(job.state(), kRetrying);
  EXPECT_EQ(job.doc.current()->state, "lost");
  EXPECT_EQ(job.doc.recoveries, 1);
  EXPECT_TRUE(WantsPlacement(job));
}

TEST(JobLifecycle, AGangsFailedRankFailsTheAttemptWhenNoNodeIsLost) {
  Job job = MakeJob(2);
  Events events;
  StartAttempt(job, PlaceOn({"node-a", "node-b"}), {"a", "b"}, 1, 29500, kT0, events);
  ASSERT_TRUE(ApplyRankReport(job, Report(job, 0, "failed", 2), kT0 + 100, events).ok());
  ResolveGangFailure(job, kT0 + 5099, 5000, events);
  EXPECT_EQ(job.state(), kStarting);
  ResolveGangFailure(job, kT0 + 5100, 5000, events);
  EXPECT_EQ(job.state(), kFailed);
  EXPECT_EQ(job.doc.exit_code, 2);

  // Both ranks failing decides at once.
  Job both = MakeJob(2);
  Events more;
  StartAttempt(both, PlaceOn({"node-a", "node-b"}), {"a", "b"}, 1, 29500, kT0, more);
  ASSERT_TRUE(ApplyRankReport(both, Report(both, 1, "failed", 1), kT0 + 100, more).ok());
  ASSERT_TRUE(ApplyRankReport(both, Report(both, 0, "failed", 1), kT0 + 200, more).ok());
  EXPECT_EQ(both.state(), kFailed);
}

TEST(JobLifecycle, RanksThatNeverReportAreTakenAsStoppedAfterTheirLimit) {
  Job job = MakeJob(2);
  Events events;
  StartAttempt(job, PlaceOn({"node-a", "node-b"}), {"a", "b"}, 1, 29500, kT0, events);
  ASSERT_TRUE(ApplyRankReport(job, Report(job, 0, "running"), kT0, events).ok());
  ASSERT_TRUE(CancelJob(job, "cancelled", kT0 + 10, events).ok());
  // Rank 1 was never started by its worker; rank 0 ran and is being stopped.
  ForgetSilentRanks(job, kT0 + 10 + 999, 1000, 5000);
  EXPECT_EQ(job.doc.current()->ranks[1].state, "stopping");
  ForgetSilentRanks(job, kT0 + 10 + 1000, 1000, 5000);
  EXPECT_EQ(job.doc.current()->ranks[1].state, "stopped");
  EXPECT_EQ(job.doc.current()->ranks[0].state, "stopping");
  ForgetSilentRanks(job, kT0 + 10 + 5000, 1000, 5000);
  EXPECT_EQ(job.doc.current()->ranks[0].state, "stopped");
}

}  // namespace
}  // namespace tf::jobs
