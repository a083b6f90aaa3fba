// Metering (cost/metering.h): the pure core by tables on explicit times, the report times, and
// the prices a rank records when the job service places it, read back through MeterStore.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "cost/metering/metering.h"
#include "cost/metering/metering_service.h"
#include "cost/metering/metering_time.h"
#include "job_service_fixture.h"
#include "jobs/job_doc.h"
#include "jobs/job_service.h"

namespace tf::cost {
namespace {

using jobs::Attempt;
using jobs::RankState;

constexpr TimeMs kT0 = testing::kJobServiceT0;  // 2025-11-30T00:00:00Z
constexpr double kEps = 1e-9;

RankState Rank(const std::string& node, int gpus, double price, double share,
               const std::string& state, TimeMs ended_at) {
  RankState r;
  r.node_id = node;
  for (int g = 0; g < gpus; ++g) r.gpus.push_back(g);
  r.price_per_hour = price;
  r.share = share;
  r.state = state;
  r.ended_at = ended_at;
  return r;
}

Attempt AttemptOf(int number, TimeMs created_at, std::vector<RankState> ranks,
                  TimeMs ended_at = 0) {
  Attempt a;
  a.number = number;
  a.token = 7;
  a.state = ended_at > 0 ? "succeeded" : "running";
  a.created_at = created_at;
  a.ended_at = ended_at;
  a.ranks = std::move(ranks);
  return a;
}

store::JobRecord JobOf(const std::string& id, const std::string& project,
                       std::vector<Attempt> attempts, int cpus = 2) {
  jobs::JobSpec spec;
  spec.name = "train-" + id;
  spec.command = {"true"};
  spec.resources.gpus = 1;
  spec.resources.cpus = cpus;
  jobs::JobDoc doc;
  doc.spec = jobs::JobSpecToJson(spec);
  doc.attempts = std::move(attempts);
  store::JobRecord r;
  r.id = id;
  r.project_id = project;
  r.name = spec.name;
  r.state = "running";
  r.doc_json = jobs::JobDocToJson(doc).dump();
  return r;
}

store::NodePeriod PeriodOf(const std::string& node, TimeMs from, TimeMs to, double price,
                           int gpus = 2, int cpus = 8) {
  fleet::NodeInfo info;
  info.address = "10.0.0.9";
  info.cpus = cpus;
  for (int g = 0; g < gpus; ++g) info.gpus.push_back({g, "simulated", 0, ""});
  info.price_per_hour = price;
  store::NodePeriod p;
  p.node_id = node;
  p.epoch = 1;
  p.started_at = from;
  p.last_seen_at = to;
  p.info_json = fleet::NodeInfoToJson(info).dump();
  return p;
}

TEST(RankShare, ByGpusWhenBothHaveThemElseByCpusCappedAtOne) {
  struct Case {
    int rank_gpus, rank_cpus, node_gpus, node_cpus;
    double share;
  } cases[] = {
      {1, 1, 2, 8, 0.5},    // one of two GPUs; CPUs do not matter
      {8, 1, 8, 96, 1.0},   // the whole node
      {0, 2, 4, 8, 0.25},   // a CPU job on a GPU node: its CPUs
      {0, 2, 0, 8, 0.25},   // a CPU node
      {0, 16, 0, 8, 1.0},   // asks more CPUs than the node declares: capped
      {2, 4, 0, 16, 0.25},  // GPUs asked of a node that declares none: its CPUs
      {0, 1, 0, 0, 0.0},    // a node that declares nothing
  };
  for (const Case& c : cases) {
    EXPECT_NEAR(jobs::RankShare(c.rank_gpus, c.rank_cpus, c.node_gpus, c.node_cpus), c.share, kEps)
        << c.rank_gpus << " GPUs, " << c.rank_cpus << " CPUs of " << c.node_gpus << " GPUs, "
        << c.node_cpus << " CPUs";
  }
}

TEST(RankDoc, PriceShareAndSpotRoundTripAndOldDocumentsReadAsZero) {
  jobs::JobDoc doc;
  doc.spec = nlohmann::json::object();
  RankState r = Rank("n1", 1, 12.5, 0.25, "running", 0);
  r.spot = true;
  doc.attempts.push_back(AttemptOf(1, kT0, {r}));
  auto back = jobs::JobDocFromJson(jobs::JobDocToJson(doc).dump());
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  const RankState& b = back->attempts[0].ranks[0];
  EXPECT_EQ(b.price_per_hour, 12.5);
  EXPECT_EQ(b.share, 0.25);
  EXPECT_TRUE(b.spot);

  auto old = jobs::JobDocFromJson(
      R"({"spec": {}, "attempts": [{"number": 1, "token": "7", "ranks": [{"node_id": "n1"}]}]})");
  ASSERT_TRUE(old.ok()) << old.status().ToString();
  EXPECT_EQ(old->attempts[0].ranks[0].price_per_hour, 0);
  EXPECT_EQ(old->attempts[0].ranks[0].share, 0);
  EXPECT_FALSE(old->attempts[0].ranks[0].spot);
}

TEST(Meter, ARankCostsPriceTimesShareTimesHoursWithGpuAndCpuSeconds) {
  auto job = JobOf(
      "j1", "p1",
      {AttemptOf(1, kT0, {Rank("n1", 1, 8.0, 0.5, "succeeded", kT0 + kHourMs)}, kT0 + kHourMs)},
      /*cpus=*/3);
  Metering m = Meter({job}, {}, kT0 - kDayMs, kT0 + kDayMs, kT0 + kDayMs);
  ASSERT_EQ(m.usage.size(), 1u);
  const UsageLine& u = m.usage[0];
  EXPECT_EQ(u.project_id, "p1");
  EXPECT_EQ(u.job_id, "j1");
  EXPECT_EQ(u.job_name, "train-j1");
  EXPECT_EQ(u.attempt, 1);
  EXPECT_EQ(u.node_id, "n1");
  EXPECT_EQ(u.from, kT0);
  EXPECT_EQ(u.to, kT0 + kHourMs);
  EXPECT_NEAR(u.cost, 4.0, kEps);
  EXPECT_NEAR(u.gpu_seconds, 3600, kEps);
  EXPECT_NEAR(u.cpu_seconds, 3 * 3600, kEps);
  EXPECT_FALSE(u.running);
  EXPECT_EQ(m.burn_rate_per_hour, 0);
  EXPECT_TRUE(m.unreadable.empty());
}

TEST(Meter, LinesAreClippedToTheWindow) {
  // A rank from 10:00 to 14:00 at $6/h on the whole node.
  auto job = JobOf(
      "j1", "p1",
      {AttemptOf(1, kT0 + 10 * kHourMs, {Rank("n1", 2, 6.0, 1.0, "succeeded", kT0 + 14 * kHourMs)},
                 kT0 + 14 * kHourMs)});
  struct Case {
    TimeMs since, until;
    double hours;
  } cases[] = {
      {kT0 + 11 * kHourMs, kT0 + 13 * kHourMs, 2},  // inside
      {kT0, kT0 + 12 * kHourMs, 2},                 // the start
      {kT0 + 13 * kHourMs, kT0 + kDayMs, 1},        // the end
      {kT0, kT0 + kDayMs, 4},                       // all of it
      {kT0, kT0 + 10 * kHourMs, 0},                 // before: until is not included
      {kT0 + 14 * kHourMs, kT0 + kDayMs, 0},        // after
  };
  for (const Case& c : cases) {
    Metering m = Meter({job}, {}, c.since, c.until, kT0 + 2 * kDayMs);
    double cost = 0, seconds = 0;
    for (const UsageLine& u : m.usage) {
      cost += u.cost;
      seconds += u.seconds();
    }
    EXPECT_NEAR(seconds, c.hours * 3600, kEps) << "window of " << c.hours << " hours";
    EXPECT_NEAR(cost, c.hours * 6.0, kEps);
    if (c.hours == 0) {
      EXPECT_TRUE(m.usage.empty());
    }
  }
}

TEST(Meter, RanksThatMayStillRunCountUntilNowAndMakeTheBurnRate) {
  auto job = JobOf(
      "j1", "p1",
      {AttemptOf(1, kT0,
                 {Rank("n1", 1, 10.0, 0.5, "running", 0), Rank("n2", 1, 4.0, 1.0, "stopping", 0),
                  Rank("n3", 1, 100.0, 1.0, "succeeded", kT0 + kHourMs)})});
  auto other = JobOf("j2", "p2", {AttemptOf(1, kT0, {Rank("n4", 1, 2.0, 1.0, "assigned", 0)})});
  TimeMs now = kT0 + 2 * kHourMs;
  Metering m = Meter({job, other}, {}, kT0, kT0 + kDayMs, now);
  ASSERT_EQ(m.usage.size(), 4u);
  EXPECT_EQ(m.usage[0].to, now);
  EXPECT_TRUE(m.usage[0].running);
  EXPECT_NEAR(m.usage[0].cost, 10.0, kEps);  // $10/h × 0.5 × 2 h
  EXPECT_NEAR(m.usage[1].cost, 8.0, kEps);   // stopping still holds its node
  EXPECT_FALSE(m.usage[2].running);
  EXPECT_NEAR(m.usage[2].cost, 100.0, kEps);
  EXPECT_NEAR(m.burn_rate_per_hour, 5.0 + 4.0 + 2.0, kEps);
  EXPECT_NEAR(m.burn_rate_by_project["p1"], 9.0, kEps);
  EXPECT_NEAR(m.burn_rate_by_project["p2"], 2.0, kEps);

  // A window that ended before now clips the running ranks, but the burn rate is now's.
  Metering earlier = Meter({job}, {}, kT0, kT0 + kHourMs / 2, now);
  EXPECT_EQ(earlier.usage[0].to, kT0 + kHourMs / 2);
  EXPECT_NEAR(earlier.burn_rate_per_hour, 9.0, kEps);
}

TEST(Meter, EveryAttemptIsPricedAtWhatItsNodeCostWhenPlaced) {
  // Attempt 1 on a spot node, interrupted after an hour; attempt 2 on an on-demand node.
  RankState spot = Rank("spot-1", 1, 3.0, 1.0, "interrupted", kT0 + kHourMs);
  spot.spot = true;
  Attempt a1 = AttemptOf(1, kT0, {spot}, kT0 + kHourMs);
  a1.state = "interrupted";
  Attempt a2 =
      AttemptOf(2, kT0 + kHourMs + 10 * kMinuteMs,
                {Rank("od-1", 1, 9.0, 1.0, "succeeded", kT0 + 3 * kHourMs + 10 * kMinuteMs)},
                kT0 + 3 * kHourMs + 10 * kMinuteMs);
  Metering m = Meter({JobOf("j1", "p1", {a1, a2})}, {}, kT0, kT0 + kDayMs, kT0 + kDayMs);
  ASSERT_EQ(m.usage.size(), 2u);
  EXPECT_EQ(m.usage[0].attempt, 1);
  EXPECT_TRUE(m.usage[0].spot);
  EXPECT_NEAR(m.usage[0].cost, 3.0, kEps);
  EXPECT_EQ(m.usage[1].attempt, 2);
  EXPECT_FALSE(m.usage[1].spot);
  EXPECT_NEAR(m.usage[1].cost, 18.0, kEps);
  Summary s = Summarize(m, GroupBy::kJob);
  ASSERT_EQ(s.rows.size(), 1u);
  EXPECT_EQ(s.rows[0].label, "train-j1");
  EXPECT_EQ(s.rows[0].lines, 2);
  EXPECT_NEAR(s.rows[0].cost, 21.0, kEps);
}

TEST(Meter, ARankEndedWithoutATimeEndsWithItsAttempt) {
  // "stopped" without ended_at, as documents from before ended_at was kept.
  Attempt a = AttemptOf(1, kT0, {Rank("n1", 1, 6.0, 1.0, "stopped", 0)}, kT0 + kHourMs);
  Metering m = Meter({JobOf("j1", "p1", {a})}, {}, kT0, kT0 + kDayMs, kT0 + kDayMs);
  ASSERT_EQ(m.usage.size(), 1u);
  EXPECT_EQ(m.usage[0].to, kT0 + kHourMs);
  EXPECT_FALSE(m.usage[0].running);
}

TEST(Meter, UnreadableDocumentsAreCountedAndTheRestStillMetered) {
  store::JobRecord bad;
  bad.id = "j-bad";
  bad.project_id = "p1";
  bad.doc_json = "{not json";
  store::JobRecord bad_spec = JobOf("j-spec", "p1", {});
  bad_spec.doc_json = R"({"spec": {"name": 5}, "attempts": []})";
  auto good = JobOf(
      "j1", "p1",
      {AttemptOf(1, kT0, {Rank("n1", 1, 2.0, 1.0, "succeeded", kT0 + kHourMs)}, kT0 + kHourMs)});
  store::NodePeriod bad_node = PeriodOf("n9", kT0, kT0 + kHourMs, 1.0);
  bad_node.info_json = "[]";
  Metering m = Meter({bad, good, bad_spec}, {bad_node}, kT0, kT0 + kDayMs, kT0 + kDayMs);
  ASSERT_EQ(m.usage.size(), 1u);
  EXPECT_NEAR(m.usage[0].cost, 2.0, kEps);
  ASSERT_EQ(m.unreadable.size(), 3u);
  EXPECT_EQ(m.unreadable[0].kind, "job");
  EXPECT_EQ(m.unreadable[0].id, "j-bad");
  EXPECT_FALSE(m.unreadable[0].error.empty());
  EXPECT_EQ(m.unreadable[1].id, "j-spec");
  EXPECT_EQ(m.unreadable[2].kind, "node");
  EXPECT_EQ(m.unreadable[2].id, "n9#1");
}

TEST(Meter, IdleCapacityIsWhatRanksDidNotUseAndNeverNegative) {
  // Node n1 up 4 hours at $10/h; a rank holds half of it for 2 hours: 1 share-hour used.
  auto half =
      JobOf("j1", "p1",
            {AttemptOf(1, kT0 + kHourMs, {Rank("n1", 1, 10.0, 0.5, "succeeded", kT0 + 3 * kHourMs)},
                       kT0 + 3 * kHourMs)});
  // Node n2 up 1 hour, over-booked by two whole-node ranks (shares above 1 in total).
  auto over = JobOf("j2", "p1",
                    {AttemptOf(1, kT0,
                               {Rank("n2", 2, 5.0, 1.0, "succeeded", kT0 + kHourMs),
                                Rank("n2", 2, 5.0, 1.0, "succeeded", kT0 + kHourMs)},
                               kT0 + kHourMs)});
  // Node n3 up with nothing on it, partly before the window.
  std::vector<store::NodePeriod> periods = {PeriodOf("n1", kT0, kT0 + 4 * kHourMs, 10.0),
                                            PeriodOf("n2", kT0, kT0 + kHourMs, 5.0),
                                            PeriodOf("n3", kT0 - kHourMs, kT0 + kHourMs, 1.0)};
  Metering m = Meter({half, over}, periods, kT0, kT0 + kDayMs, kT0 + kDayMs);
  EXPECT_TRUE(m.unreadable.empty());
  ASSERT_EQ(m.idle.size(), 3u);
  EXPECT_NEAR(m.idle[0].up_seconds, 4 * 3600, kEps);
  EXPECT_NEAR(m.idle[0].used_share_seconds, 3600, kEps);
  EXPECT_NEAR(m.idle[0].idle_seconds, 3 * 3600, kEps);
  EXPECT_NEAR(m.idle[0].cost, 30.0, kEps);
  EXPECT_NEAR(m.idle[1].used_share_seconds, 2 * 3600, kEps);
  EXPECT_EQ(m.idle[1].idle_seconds, 0);
  EXPECT_EQ(m.idle[1].cost, 0);
  EXPECT_EQ(m.idle[2].from, kT0);  // clipped to the window
  EXPECT_NEAR(m.idle[2].cost, 1.0, kEps);

  Summary s = Summarize(m, GroupBy::kNode);
  EXPECT_NEAR(s.idle.cost, 31.0, kEps);
  EXPECT_EQ(s.idle.lines, 3);
  EXPECT_NEAR(s.usage_cost, 10.0 + 10.0, kEps);
  EXPECT_NEAR(s.total_cost, 51.0, kEps);

  // Without periods (one project's report) there is no idle capacity.
  EXPECT_TRUE(Meter({half}, {}, kT0, kT0 + kDayMs, kT0 + kDayMs).idle.empty());
}

TEST(Summarize, ByDayARankSpanningMidnightSplitsAcrossTheDays) {
  // 23:00 to 01:30 the next day, $4/h whole node: 1 h on the 30th, 1.5 h on Dec 1st.
  TimeMs start = kT0 + 23 * kHourMs;
  TimeMs end = kT0 + kDayMs + 90 * kMinuteMs;
  auto job =
      JobOf("j1", "p1", {AttemptOf(1, start, {Rank("n1", 1, 4.0, 1.0, "succeeded", end)}, end)});
  Summary s = Summarize(Meter({job}, {}, kT0, kT0 + 3 * kDayMs, kT0 + 3 * kDayMs), GroupBy::kDay);
  ASSERT_EQ(s.rows.size(), 2u);
  EXPECT_EQ(s.rows[0].key, "2025-11-30");
  EXPECT_NEAR(s.rows[0].seconds, 3600, 1e-6);
  EXPECT_NEAR(s.rows[0].gpu_seconds, 3600, 1e-6);
  EXPECT_NEAR(s.rows[0].cost, 4.0, 1e-9);
  EXPECT_EQ(s.rows[1].key, "2025-12-01");
  EXPECT_NEAR(s.rows[1].cost, 6.0, 1e-9);
  EXPECT_NEAR(s.usage_cost, 10.0, 1e-9);
}

TEST(Summarize, GroupsByProjectJobAndNodeWithTotals) {
  auto a = JobOf("j1", "p1",
                 {AttemptOf(1, kT0,
                            {Rank("n1", 1, 2.0, 1.0, "succeeded", kT0 + kHourMs),
                             Rank("n2", 1, 3.0, 1.0, "succeeded", kT0 + kHourMs)},
                            kT0 + kHourMs)});
  auto b = JobOf("j2", "p2",
                 {AttemptOf(1, kT0, {Rank("n1", 1, 2.0, 1.0, "succeeded", kT0 + 2 * kHourMs)},
                            kT0 + 2 * kHourMs)});
  Metering m = Meter({a, b}, {}, kT0, kT0 + kDayMs, kT0 + kDayMs);
  Summary by_project = Summarize(m, GroupBy::kProject);
  ASSERT_EQ(by_project.rows.size(), 2u);
  EXPECT_EQ(by_project.rows[0].key, "p1");
  EXPECT_NEAR(by_project.rows[0].cost, 5.0, kEps);
  EXPECT_NEAR(by_project.rows[1].cost, 4.0, kEps);
  Summary by_node = Summarize(m, GroupBy::kNode);
  ASSERT_EQ(by_node.rows.size(), 2u);
  EXPECT_EQ(by_node.rows[0].key, "n1");
  EXPECT_NEAR(by_node.rows[0].cost, 6.0, kEps);
  EXPECT_NEAR(by_node.rows[0].gpu_seconds, 3 * 3600, kEps);
  EXPECT_NEAR(by_node.total_cost, 9.0, kEps);
  EXPECT_NEAR(by_node.gpu_seconds, 4 * 3600, kEps);
  EXPECT_EQ(Summarize(m, GroupBy::kJob).rows.size(), 2u);
}

TEST(GroupBy, ParsesTheFourNamesAndNamesThemWhenWrong) {
  for (GroupBy by : {GroupBy::kProject, GroupBy::kJob, GroupBy::kNode, GroupBy::kDay}) {
    auto parsed = ParseGroupBy(GroupByName(by));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, by);
  }
  auto bad = ParseGroupBy("team");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("project, job, node or day"), std::string::npos);
}

TEST(ReportTime, ReadsRfc3339DatesTimesAndEpochMilliseconds) {
  struct Case {
    const char* text;
    TimeMs want;
  } cases[] = {
      {"2025-11-30", kT0},
      {"2025-11-30T00:00:00Z", kT0},
      {"2025-11-30T01:02:03Z", kT0 + kHourMs + 2 * kMinuteMs + 3 * kSecondMs},
      {"2025-11-30T01:02:03.25Z", kT0 + kHourMs + 2 * kMinuteMs + 3250},
      {"2025-11-30t01:00:00z", kT0 + kHourMs},
      {"2025-11-30T02:00:00+01:00", kT0 + kHourMs},
      {"2025-11-29T23:30:00-00:30", kT0},
      {"2024-02-29", 1'709'164'800'000},
      {"1764460800000", kT0},
      {"0", 0},
  };
  for (const Case& c : cases) {
    auto t = ParseReportTime(c.text, "since");
    ASSERT_TRUE(t.ok()) << c.text << ": " << t.status().ToString();
    EXPECT_EQ(*t, c.want) << c.text;
  }
  for (const char* bad :
       {"", "yesterday", "2025-13-01", "2025-02-29", "2025-11-30T25:00:00Z", "2025-11-30T01:00:00",
        "2025-11-30T01:00Z", "2025-11-30 extra", "-5", "12345678901234567890"}) {
    auto t = ParseReportTime(bad, "until");
    ASSERT_FALSE(t.ok()) << bad;
    EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(t.status().message().rfind("until: ", 0), 0u) << t.status().message();
    EXPECT_NE(t.status().message().find("RFC 3339"), std::string::npos);
  }
  EXPECT_EQ(MonthStart(kT0 + 5 * kHourMs), 1'761'955'200'000);  // 2025-11-01
  EXPECT_EQ(MonthStart(1'761'955'200'000), 1'761'955'200'000);
  EXPECT_EQ(UtcDay(kT0 - 1), "2025-11-29");
}

// A SQLite store with one project ("team") and the job service over it, on a fake clock at
// kT0: where placement records what metering later reads.
using PlacementTest = testing::JobServiceFixture;

// A job with a share of one GPU (resources.gpu_memory) is charged that part of the GPU: 6 GiB
// of a 24 GiB GPU on a 2-GPU node is an eighth of the node.
TEST_F(PlacementTest, AShareOfOneGpuIsChargedItsPartOfIt) {
  jobs::JobService& jobs = *jobs_;
  fleet::NodeInfo info;
  info.address = "10.0.0.1";
  info.cpus = 8;
  info.gpus = {{0, "simulated", int64_t{24} << 30, ""}, {1, "simulated", int64_t{24} << 30, ""}};
  ASSERT_TRUE(jobs.RegisterNode("node-a", "a", info).ok());
  auto job = jobs.Submit(project_,
                         "name: small\ncommand: sleep 1\nresources: {gpu_memory: 6Gi, cpus: 1}\n",
                         "test.yaml", "");
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  auto tick = jobs.Tick();
  ASSERT_TRUE(tick.ok()) << tick.status().ToString();
  ASSERT_EQ(tick->placed, 1);
  auto placed = jobs.Get("", job->id());
  ASSERT_TRUE(placed.ok());
  const Attempt& a = placed->doc.attempts.at(0);
  EXPECT_EQ(a.ranks[0].gpus, std::vector<int>{0});
  EXPECT_DOUBLE_EQ(a.ranks[0].share, 0.125);
}

// The job service records the node's price, the rank's share and spot at placement; MeterStore
// reads them back, with the node's idle capacity from its registration and heartbeats.
TEST_F(PlacementTest, PricesRecordedAtPlacementSurviveALaterPriceChange) {
  store::Store& st = *store_;
  FakeClock& clock = clock_;
  jobs::JobService& jobs = *jobs_;
  const std::string& project_id = project_;

  fleet::NodeInfo info;
  info.address = "10.0.0.1";
  info.cpus = 8;
  info.gpus = {{0, "simulated", 0, ""}, {1, "simulated", 0, ""}};
  info.price_per_hour = 6.0;
  info.spot = true;
  auto node = jobs.RegisterNode("node-a", "a", info);
  ASSERT_TRUE(node.ok()) << node.status().ToString();
  auto job =
      jobs.Submit(project_id, "name: meter-me\ncommand: sleep 1\nresources: {gpus: 1, cpus: 2}\n",
                  "test.yaml", "");
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  auto tick = jobs.Tick();
  ASSERT_TRUE(tick.ok()) << tick.status().ToString();
  ASSERT_EQ(tick->placed, 1);

  auto placed = jobs.Get("", job->id());
  ASSERT_TRUE(placed.ok());
  const Attempt& a = placed->doc.attempts.at(0);
  ASSERT_EQ(a.ranks.size(), 1u);
  EXPECT_EQ(a.ranks[0].price_per_hour, 6.0);
  EXPECT_EQ(a.ranks[0].share, 0.5);
  EXPECT_TRUE(a.ranks[0].spot);

  jobs::RankReport report;
  report.attempt = a.number;
  report.token = a.token;
  report.state = "running";
  ASSERT_TRUE(jobs.Report(job->id(), report).ok());
  clock.Advance(30 * kMinuteMs);
  ASSERT_TRUE(jobs.Heartbeat("node-a", node->epoch).ok());
  TimeMs now = clock.Now();
  auto running = ProjectSpend(st, project_id, kT0, now + kDayMs, now);
  ASSERT_TRUE(running.ok()) << running.status().ToString();
  EXPECT_NEAR(*running, 1.5, kEps);  // $6/h × 0.5 × 0.5 h, counted until now

  report.state = "succeeded";
  report.exit_code = 0;
  ASSERT_TRUE(jobs.Report(job->id(), report).ok());
  // The node registers again at twice the price: what the job cost does not change.
  clock.Advance(30 * kMinuteMs);
  ASSERT_TRUE(jobs.Heartbeat("node-a", node->epoch).ok());
  info.price_per_hour = 12.0;
  ASSERT_TRUE(jobs.RegisterNode("node-a", "a", info).ok());
  clock.Advance(kHourMs);
  now = clock.Now();

  auto spend = ProjectSpend(st, project_id, kT0, now, now);
  ASSERT_TRUE(spend.ok()) << spend.status().ToString();
  EXPECT_NEAR(*spend, 1.5, kEps);
  auto m = MeterStore(st, "", kT0, now, now);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ASSERT_EQ(m->usage.size(), 1u);
  EXPECT_EQ(m->usage[0].job_name, "meter-me");
  EXPECT_NEAR(m->usage[0].cpu_seconds, 2 * 1800, kEps);
  // The first registration was up an hour with 0.25 share-hours used: 0.75 h idle at $6.
  ASSERT_GE(m->idle.size(), 1u);
  EXPECT_EQ(m->idle[0].node_id, "node-a");
  EXPECT_NEAR(m->idle[0].up_seconds, 3600, kEps);
  EXPECT_NEAR(m->idle[0].cost, 4.5, kEps);
  // A project's own report has no idle capacity.
  auto mine = MeterStore(st, project_id, kT0, now, now);
  ASSERT_TRUE(mine.ok());
  EXPECT_TRUE(mine->idle.empty());
  EXPECT_EQ(MeterStore(st, "", now, kT0, now).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tf::cost
