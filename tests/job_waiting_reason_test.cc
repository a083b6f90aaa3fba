// Why a queued job waits: the job service keeps the scheduler's reason in the job (written only
// when it changes), the API shows it while the job waits, and placing or cancelling the job
// clears it. A JobService over a real SQLite store with a fake clock.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/job_json.h"
#include "base/time_format.h"
#include "job_service_fixture.h"
#include "jobs/job_doc.h"
#include "jobs/job_service.h"

namespace tf::jobs {
namespace {

using ::testing::HasSubstr;

constexpr TimeMs kT0 = testing::kJobServiceT0;

std::string Spec(const std::string& name, int gpus, const std::string& extra = "") {
  return "name: " + name + "\ncommand: sleep 1\nresources: {gpus: " + std::to_string(gpus) +
         ", cpus: 1}\n" + extra;
}

// One node with two GPUs, and the services over a fresh SQLite file.
class WaitingReasonTest : public testing::JobServiceFixture {
 protected:
  void SetUp() override {
    JobServiceFixture::SetUp();
    fleet::NodeInfo info;
    info.address = "10.0.0.1";
    info.cpus = 8;
    info.gpus = {{0, "simulated", 0, ""}, {1, "simulated", 0, ""}};
    auto node = jobs_->RegisterNode("node-a", "a", info);
    ASSERT_TRUE(node.ok()) << node.status().ToString();
    epoch_ = node->epoch;
  }

  std::string Submit(const std::string& yaml) {
    auto job = jobs_->Submit(project_, yaml, "test.yaml", "");
    EXPECT_TRUE(job.ok()) << job.status().ToString();
    return job.ok() ? job->id() : "";
  }

  TickStats Tick() {
    EXPECT_TRUE(jobs_->Heartbeat("node-a", epoch_).ok());
    auto stats = jobs_->Tick();
    EXPECT_TRUE(stats.ok()) << stats.status().ToString();
    return stats.ok() ? *stats : TickStats{};
  }

  Job Get(const std::string& id) {
    auto job = jobs_->Get(project_, id);
    EXPECT_TRUE(job.ok()) << job.status().ToString();
    return job.ok() ? *job : Job{};
  }

  // Reports every rank of the job's current attempt as `state`.
  void ReportAll(const std::string& id, const std::string& state, int exit_code) {
    Job job = Get(id);
    const Attempt* a = job.doc.current();
    ASSERT_NE(a, nullptr) << id << " has no attempt";
    for (size_t rank = 0; rank < a->ranks.size(); ++rank) {
      RankReport report;
      report.attempt = a->number;
      report.token = a->token;
      report.node_rank = static_cast<int>(rank);
      report.state = state;
      report.exit_code = exit_code;
      Status s = jobs_->Report(id, report);
      ASSERT_TRUE(s.ok()) << s.ToString();
    }
  }

  int64_t epoch_ = 0;
};

TEST_F(WaitingReasonTest, KeptOnceWhileTheFleetStaysAsItIsAndClearedWhenPlaced) {
  std::string small_a = Submit(Spec("small-a", 1));
  std::string small_b = Submit(Spec("small-b", 1));
  ASSERT_EQ(Tick().placed, 2);
  std::string big = Submit(Spec("big", 2));

  clock_.Advance(kSecondMs);
  TickStats stats = Tick();
  EXPECT_EQ(stats.placed, 0);
  EXPECT_EQ(stats.waiting, 1);
  Job waiting = Get(big);
  EXPECT_EQ(waiting.state(), kQueued);
  EXPECT_THAT(waiting.doc.waiting_reason, HasSubstr("needs 2 GPUs on one node"));
  EXPECT_THAT(waiting.doc.waiting_reason, HasSubstr("the largest free is 0"));
  EXPECT_EQ(waiting.doc.waiting_since, kT0 + kSecondMs);
  nlohmann::json shown = api::JobToJson(waiting);
  EXPECT_EQ(shown.value("waiting_reason", ""), waiting.doc.waiting_reason);
  EXPECT_EQ(shown.value("waiting_since", ""), FormatTime(kT0 + kSecondMs));

  // Nothing changed: the same reason, and no write.
  clock_.Advance(5 * kSecondMs);
  EXPECT_EQ(Tick().waiting, 1);
  Job again = Get(big);
  EXPECT_EQ(again.record.version, waiting.record.version);
  EXPECT_EQ(again.doc.waiting_since, kT0 + kSecondMs);

  // One GPU frees up: the reason changes, and so does when it was first given.
  ReportAll(small_a, "succeeded", 0);
  clock_.Advance(kSecondMs);
  EXPECT_EQ(Tick().placed, 0);
  Job changed = Get(big);
  EXPECT_THAT(changed.doc.waiting_reason, HasSubstr("the largest free is 1"));
  EXPECT_EQ(changed.doc.waiting_since, kT0 + 7 * kSecondMs);
  EXPECT_GT(changed.record.version, again.record.version);

  // Both free: placed, and the reason is gone from the job and from the API.
  ReportAll(small_b, "succeeded", 0);
  clock_.Advance(kSecondMs);
  EXPECT_EQ(Tick().placed, 1);
  Job placed = Get(big);
  EXPECT_EQ(placed.state(), kStarting);
  EXPECT_EQ(placed.doc.waiting_reason, "");
  EXPECT_EQ(placed.doc.waiting_since, 0);
  EXPECT_FALSE(api::JobToJson(placed).contains("waiting_reason"));
}

TEST_F(WaitingReasonTest, CancellingAWaitingJobClearsItsReason) {
  std::string big = Submit(Spec("big", 2));
  ASSERT_EQ(Tick().placed, 1);
  std::string later = Submit(Spec("later", 1));
  EXPECT_EQ(Tick().waiting, 1);
  ASSERT_NE(Get(later).doc.waiting_reason, "");

  auto cancelled = jobs_->Cancel(project_, later);
  ASSERT_TRUE(cancelled.ok()) << cancelled.status().ToString();
  Job job = Get(later);
  EXPECT_EQ(job.state(), kCancelled);
  EXPECT_EQ(job.doc.waiting_reason, "");
  EXPECT_EQ(job.doc.waiting_since, 0);
  EXPECT_FALSE(api::JobToJson(job).contains("waiting_reason"));
  EXPECT_EQ(Get(big).doc.waiting_reason, "");
}

// The scheduler counts a backoff down; the job keeps when it ends, so waiting it out costs no
// write per tick.
TEST_F(WaitingReasonTest, ABackoffIsKeptAsWhenItEndsNotCountedDown) {
  std::string flaky =
      Submit(Spec("flaky", 1, "retry: {on: [error], max_attempts: 3, backoff: 30s}\n"));
  ASSERT_EQ(Tick().placed, 1);
  ReportAll(flaky, "failed", 1);
  ASSERT_EQ(Get(flaky).state(), kRetrying);
  TimeMs until = Get(flaky).doc.not_before;
  ASSERT_GT(until, clock_.Now());

  clock_.Advance(kSecondMs);
  EXPECT_EQ(Tick().waiting, 1);
  Job first = Get(flaky);
  EXPECT_EQ(first.doc.waiting_reason, "backing off until " + FormatTime(until));
  EXPECT_EQ(api::JobToJson(first).value("waiting_reason", ""), first.doc.waiting_reason);

  clock_.Advance(5 * kSecondMs);
  EXPECT_EQ(Tick().waiting, 1);
  EXPECT_EQ(Get(flaky).record.version, first.record.version);

  clock_.Advance(30 * kSecondMs);
  EXPECT_EQ(Tick().placed, 1);
  EXPECT_EQ(Get(flaky).doc.waiting_reason, "");
}

TEST(JobDocWaiting, RoundTripsAndOldDocumentsReadWithoutIt) {
  JobDoc doc;
  doc.spec = nlohmann::json::object();
  doc.waiting_reason = "needs 8 GPUs on one node; the largest free is 4";
  doc.waiting_since = kT0;
  auto back = JobDocFromJson(JobDocToJson(doc).dump());
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->waiting_reason, doc.waiting_reason);
  EXPECT_EQ(back->waiting_since, kT0);

  auto old = JobDocFromJson(R"({"spec": {}, "reason": "submitted"})");
  ASSERT_TRUE(old.ok()) << old.status().ToString();
  EXPECT_EQ(old->waiting_reason, "");
  EXPECT_EQ(old->waiting_since, 0);
}

// WouldPlaceNow answers for a job not submitted: placed at the next pass, behind every job that
// already waits (the endpoint controller asks it before moving a replica back to spot).
TEST_F(WaitingReasonTest, WouldPlaceNowCountsWhatAlreadyWaits) {
  JobSpec spot;
  spot.name = "probe";
  spot.command = {"true"};
  spot.resources.gpus = 1;
  spot.resources.cpus = 1;
  spot.capacity = CapacityType::kSpot;
  auto none = jobs_->WouldPlaceNow(spot);
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_FALSE(*none) << "node-a is on-demand";

  fleet::NodeInfo info;
  info.address = "10.0.0.2";
  info.cpus = 8;
  info.spot = true;
  info.gpus = {{0, "simulated", 0, ""}};
  ASSERT_TRUE(jobs_->RegisterNode("node-spot", "spot", info).ok());
  EXPECT_TRUE(*jobs_->WouldPlaceNow(spot));
  spot.capacity = CapacityType::kOnDemand;
  spot.resources.gpus = 2;
  EXPECT_TRUE(*jobs_->WouldPlaceNow(spot)) << "node-a's two GPUs";
  spot.capacity = CapacityType::kSpot;
  EXPECT_FALSE(*jobs_->WouldPlaceNow(spot)) << "no spot node has two";
  spot.resources.gpus = 1;

  // A job already waiting for the spot GPU comes first.
  Submit(Spec("first", 1, "capacity: spot\n"));
  EXPECT_FALSE(*jobs_->WouldPlaceNow(spot));
  EXPECT_EQ(jobs_->Get(project_, "probe").status().code(), StatusCode::kNotFound)
      << "nothing was submitted";
}

}  // namespace
}  // namespace tf::jobs
