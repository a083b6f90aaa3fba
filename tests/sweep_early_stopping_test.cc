// Early stopping (sweeps/early_stopping.h): ASHA's rungs, who goes on at each and who is
// promoted later, Hyperband's brackets, and the median rule, each as a pure function of the
// trials' reports.
#include <gtest/gtest.h>

#include <cmath>
#include <initializer_list>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "file_test_util.h"
#include "program_run.h"
#include "store_test_env.h"
#include "sweeps/early_stopping.h"

namespace tf::sweeps {
namespace {

EarlyStopping Asha(double min_resource = 1, double max_resource = 81, double eta = 3) {
  EarlyStopping rule;
  rule.rule = StopRule::kAsha;
  rule.min_resource = min_resource;
  rule.max_resource = max_resource;
  rule.reduction_factor = eta;
  return rule;
}

EarlyStopping Median(double min_resource = 3, int min_trials = 3) {
  EarlyStopping rule;
  rule.rule = StopRule::kMedian;
  rule.min_resource = min_resource;
  rule.max_resource = 100;
  rule.min_trials = min_trials;
  return rule;
}

TrialProgress Curve(std::initializer_list<Report> reports,
                    TrialPhase phase = TrialPhase::kRunning) {
  return TrialProgress{reports, phase};
}

TEST(SweepEarlyStoppingTest, RungsAreMinTimesPowersOfEtaBelowTheFullBudget) {
  EXPECT_EQ(Rungs(Asha(), 0), (std::vector<double>{1, 3, 9, 27}));
  EXPECT_EQ(Rungs(Asha(), 2), (std::vector<double>{9, 27}));
  EXPECT_EQ(Rungs(Asha(1, 100), 0), (std::vector<double>{1, 3, 9, 27, 81}));
  EXPECT_EQ(Rungs(Asha(10, 1000, 4), 0), (std::vector<double>{10, 40, 160, 640}));
  EXPECT_EQ(HyperbandBrackets(Asha()), 5);
  EXPECT_EQ(HyperbandBrackets(Asha(1, 100)), 5);
  EXPECT_EQ(HyperbandBrackets(Asha(1, 80)), 4);
  EXPECT_TRUE(Rungs(Asha(), 4).empty()) << "Hyperband's last bracket runs every trial in full";
}

TEST(SweepEarlyStoppingTest, ValidateNamesTheFieldThatIsWrong) {
  EXPECT_TRUE(Validate(Asha()).ok());
  auto message = [](const EarlyStopping& r) { return Validate(r).ToString(); };
  EXPECT_NE(message(Asha(0, 81)).find("min_resource must be above 0"), std::string::npos);
  EXPECT_NE(message(Asha(10, 10)).find("max_resource must be above min_resource (10)"),
            std::string::npos);
  EXPECT_NE(message(Asha(1, 81, 1.5)).find("reduction_factor must be at least 2, got 1.5"),
            std::string::npos);
  EarlyStopping too_many = Asha();
  too_many.brackets = 6;
  EXPECT_NE(message(too_many).find("brackets must be from 1 to 5"), std::string::npos);
  EXPECT_NE(message(Median(3, 0)).find("min_trials must be at least 1"), std::string::npos);
  EXPECT_EQ(ParseStopRule("median").value(), StopRule::kMedian);
  EXPECT_NE(ParseStopRule("hyperband").status().ToString().find("(asha, median)"),
            std::string::npos);
}

TEST(SweepEarlyStoppingTest, AshaLetsTheBestThirdOfARungGoOn) {
  const EarlyStopping rule = Asha();
  std::vector<TrialProgress> trials = {Curve({{1, 0.50}})};
  Verdict first = Judge(rule, Goal::kMinimize, trials, 0);
  EXPECT_EQ(first.rung, 0);
  EXPECT_FALSE(first.stop) << "the first to reach a rung goes on: " << first.reason;

  trials.push_back(Curve({{1, 0.60}}));
  Verdict worse = Judge(rule, Goal::kMinimize, trials, 1);
  EXPECT_TRUE(worse.stop) << "of fewer than eta only the best goes on: " << worse.reason;
  EXPECT_EQ(worse.reason, "step 1 (rung 1 of 4): 0.6 is 2nd of 2 there, the best 1 go on: paused");

  trials.push_back(Curve({{1, 0.40}}));
  EXPECT_FALSE(Judge(rule, Goal::kMinimize, trials, 2).stop);
  for (double v : {0.7, 0.8, 0.9}) trials.push_back(Curve({{1, v}}));
  trials.push_back(Curve({{1, 0.45}}));
  Verdict second = Judge(rule, Goal::kMinimize, trials, 6);
  EXPECT_FALSE(second.stop) << "2nd of 7 is within the best 2: " << second.reason;
  trials.push_back(Curve({{1, 0.48}}));
  EXPECT_TRUE(Judge(rule, Goal::kMinimize, trials, 7).stop) << "3rd of 8 is not";
}

TEST(SweepEarlyStoppingTest, AshaJudgesOnlyWhenAReportReachesANewRung) {
  const EarlyStopping rule = Asha();
  std::vector<TrialProgress> trials = {Curve({{1, 0.1}, {3, 0.05}}), Curve({{1, 0.2}, {2, 0.9}})};
  Verdict between = Judge(rule, Goal::kMinimize, trials, 1);
  EXPECT_EQ(between.rung, -1);
  EXPECT_FALSE(between.stop);
  // One sparse report that passes two rungs is judged at the higher, with its own value there.
  trials.push_back(Curve({{10, 0.3}}));
  Verdict sparse = Judge(rule, Goal::kMinimize, trials, 2);
  EXPECT_EQ(sparse.rung, 2);
  EXPECT_FALSE(sparse.stop) << "alone at step 9: " << sparse.reason;
  // A report at the full budget is no rung: the trial is done, not judged.
  trials.push_back(Curve({{27, 0.9}, {81, 0.9}}));
  EXPECT_EQ(Judge(rule, Goal::kMinimize, trials, 3).rung, -1);
}

TEST(SweepEarlyStoppingTest, AshaFollowsTheGoalAndRanksNotANumberLast) {
  const EarlyStopping rule = Asha();
  std::vector<TrialProgress> trials = {Curve({{1, 0.9}}), Curve({{1, 0.5}})};
  EXPECT_FALSE(Judge(rule, Goal::kMinimize, trials, 1).stop);
  EXPECT_TRUE(Judge(rule, Goal::kMaximize, trials, 1).stop) << "0.5 is worse when maximizing";
  EXPECT_FALSE(Judge(rule, Goal::kMaximize, trials, 0).stop);
  EXPECT_TRUE(Judge(rule, Goal::kMinimize, trials, 0).stop)
      << "judged again, 0.9 stands against the 0.5 that came after it";
  trials.push_back(Curve({{1, std::nan("")}}));
  EXPECT_TRUE(Judge(rule, Goal::kMinimize, trials, 2).stop);
  EXPECT_TRUE(Judge(rule, Goal::kMaximize, trials, 2).stop);
}

TEST(SweepEarlyStoppingTest, APausedTrialIsPromotedOnceEnoughWorseValuesArrive) {
  const EarlyStopping rule = Asha();
  std::vector<TrialProgress> trials = {
      Curve({{1, 0.40}, {3, 0.30}}),                      // went on
      Curve({{1, 0.50}}, TrialPhase::kPaused),            // 2nd of 2: paused
      Curve({{1, 0.45}, {3, 0.35}}, TrialPhase::kPaused)  // paused at the second rung
  };
  EXPECT_TRUE(Promotable(rule, Goal::kMinimize, trials).empty());
  for (double v : {0.7, 0.8, 0.9}) trials.push_back(Curve({{1, v}}, TrialPhase::kComplete));
  // Rung 1 now holds 6 values: the best 2 go on, and 0.45 (trial 3, paused at rung 2) and
  // 0.40 (trial 1, still running) are those two; trial 2's 0.50 is third.
  EXPECT_TRUE(Promotable(rule, Goal::kMinimize, trials).empty());
  for (double v : {0.6, 0.65, 0.75}) trials.push_back(Curve({{1, v}, {3, v}}, TrialPhase::kFailed));
  // 9 values at rung 1 (best 3 go on: 0.40, 0.45, 0.50) and 5 at rung 2 (best 1: 0.30).
  EXPECT_EQ(Promotable(rule, Goal::kMinimize, trials), (std::vector<size_t>{1}));
  trials.push_back(Curve({{1, 0.2}, {3, 0.99}}, TrialPhase::kComplete));
  trials.push_back(Curve({{1, 0.2}, {3, 0.98}}, TrialPhase::kComplete));
  trials.push_back(Curve({{1, 0.2}, {3, 0.97}}, TrialPhase::kComplete));
  trials.push_back(Curve({{1, 0.2}, {3, 0.96}}, TrialPhase::kComplete));
  // Rung 2: 9 values now, the best 3 go on: 0.30, 0.35 (trial 3) and 0.60. Rung 1: 13 values,
  // the best 4 are the new 0.2s: trial 2's 0.50 fell out.
  EXPECT_EQ(Promotable(rule, Goal::kMinimize, trials), (std::vector<size_t>{2}));
  EXPECT_TRUE(Promotable(Median(), Goal::kMinimize, trials).empty());
}

TEST(SweepEarlyStoppingTest, HyperbandDealsTrialsToBracketsInItsProportions) {
  EarlyStopping rule = Asha();
  rule.brackets = HyperbandBrackets(rule);
  ASSERT_TRUE(Validate(rule).ok());
  // Bracket b has 4 - b halvings s and ceil(5 / (s + 1) * 3^s) shares: 81, 34, 15, 8, 5.
  std::map<int, int> counts;
  for (size_t t = 0; t < 143; ++t) ++counts[BracketOf(rule, t)];
  EXPECT_EQ(counts, (std::map<int, int>{{0, 81}, {1, 34}, {2, 15}, {3, 8}, {4, 5}}));
  std::set<int> first_ten;
  for (size_t t = 0; t < 10; ++t) first_ten.insert(BracketOf(rule, t));
  EXPECT_GE(first_ten.size(), 3u) << "a short sweep reaches several brackets";
  EXPECT_EQ(BracketOf(Asha(), 7), 0) << "plain ASHA has one bracket";
}

TEST(SweepEarlyStoppingTest, HyperbandComparesATrialOnlyWithItsBracket) {
  EarlyStopping rule = Asha();
  rule.brackets = HyperbandBrackets(rule);
  std::vector<TrialProgress> trials;
  for (size_t t = 0; t < 20; ++t)
    trials.push_back(Curve({{1, 0.1 + 0.01 * static_cast<double>(t)}}));
  for (size_t t = 0; t < trials.size(); ++t) {
    Verdict v = Judge(rule, Goal::kMinimize, trials, t);
    if (BracketOf(rule, t) != 0) {
      EXPECT_EQ(v.rung, -1) << "trial " << t << "'s bracket has no rung at step 1";
    } else {
      EXPECT_EQ(v.rung, 0);
      EXPECT_NE(v.reason.find("bracket 1)"), std::string::npos) << v.reason;
    }
  }
  // In bracket 1 (first rung at 3) a trial stands against its bracket's values only.
  size_t in_one = 0;
  while (BracketOf(rule, in_one) != 1) ++in_one;
  trials[in_one].reports.push_back({3, 5.0});
  Verdict alone = Judge(rule, Goal::kMinimize, trials, in_one);
  EXPECT_EQ(alone.rung, 0);
  EXPECT_FALSE(alone.stop) << alone.reason;
}

TEST(SweepEarlyStoppingTest, MedianStopsATrialWorseThanWhatTheOthersHadByThen) {
  const EarlyStopping rule = Median(/*min_resource=*/3, /*min_trials=*/3);
  std::vector<TrialProgress> trials = {
      Curve({{1, 1.0}, {2, 0.8}, {3, 0.6}, {4, 0.5}}, TrialPhase::kComplete),  // best@3: 0.6
      Curve({{1, 0.9}, {2, 0.5}, {3, 0.7}}, TrialPhase::kComplete),            // best@3: 0.5
      Curve({{1, 2.0}, {3, 1.6}}),                                             // best@3: 1.6
      Curve({{1, 1.0}, {2, 0.9}, {3, 0.85}}),  // best 0.85 against the median 0.6
  };
  Verdict v = Judge(rule, Goal::kMinimize, trials, 3);
  EXPECT_TRUE(v.stop) << v.reason;
  EXPECT_EQ(v.reason,
            "step 3: the best so far, 0.85, is worse than the median 0.6 of the best that 3 "
            "other trials had by then: stopped");
  trials[3].reports.back().value = 0.6;
  EXPECT_FALSE(Judge(rule, Goal::kMinimize, trials, 3).stop) << "as good as the median goes on";
  EXPECT_FALSE(Judge(rule, Goal::kMaximize, trials, 3).stop)
      << "maximizing, 1.0 (its best) is above the median 1.0";
  trials[3].reports.back().value = 0.85;
  // The others' later reports do not count: trial 1's 0.5 and 0.01 come after step 3.
  trials[0].reports.push_back({5, 0.01});
  EXPECT_TRUE(Judge(rule, Goal::kMinimize, trials, 3).stop);
  // Before min_resource, or with fewer than min_trials others that got as far: no stop.
  std::vector<TrialProgress> early(trials.begin(), trials.end());
  early[3].reports.pop_back();
  EXPECT_FALSE(Judge(rule, Goal::kMinimize, early, 3).stop);
  EXPECT_FALSE(Judge(Median(3, 4), Goal::kMinimize, trials, 3).stop);
  trials[2].reports.pop_back();  // it has not reached step 3 any more
  EXPECT_FALSE(Judge(rule, Goal::kMinimize, trials, 3).stop);
}

TEST(SweepJudgeCli, TrialsInOnStdinVerdictsAndPromotionsOut) {
  testing::TempDir dir;
  const std::string rules =
      testing::WriteFile(dir.path() / "rules.yaml",
                         "parameters: {lr: {type: uniform, low: 0, high: 1}}\n"
                         "early_stopping: {type: asha, min_resource: 1, max_resource: 27}\n");
  auto judge = [&](const std::string& input, const std::string& rules_path) {
    const std::string in = testing::WriteFile(dir.path() / "in.jsonl", input);
    return testing::RunProgram(
        {"/bin/sh", "-c",
         std::string(TENSORFLEET_BINARY) + " sweep judge --rules " + rules_path + " < " + in});
  };
  auto run = judge(
      "{\"reports\": [[1, 0.5], [3, 0.4]], \"state\": \"running\"}\n"
      "{\"reports\": [[1, 0.6]], \"state\": \"paused\"}\n"
      "{\"reports\": [[1, 0.7]]}\n"
      "{\"reports\": [[1, 0.8]], \"state\": \"complete\"}\n"
      "{\"reports\": [[1, 0.9]], \"state\": \"complete\"}\n"
      "{\"reports\": [[1, 0.95]], \"state\": \"failed\"}\n",
      rules);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(run.output,
            "{\"reason\":\"step 3 (rung 2 of 3): 0.4 is 1st of 1 there, the best 1 go "
            "on\",\"stop\":false,\"trial\":1}\n"
            "{\"reason\":\"step 1 (rung 1 of 3): 0.7 is 3rd of 6 there, the best 2 go on: "
            "paused\",\"stop\":true,\"trial\":3}\n"
            "{\"promote\":[2]}\n");

  auto unordered = judge("{\"reports\": [[3, 1], [1, 2]]}\n", rules);
  EXPECT_EQ(unordered.exit_code, 1);
  EXPECT_NE(
      unordered.output.find("stdin:1: reports must come in increasing resource, got 1 after 3"),
      std::string::npos)
      << unordered.output;
  const std::string none = testing::WriteFile(dir.path() / "none.yaml", "strategy: random\n");
  auto missing = judge("", none);
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.output.find("none.yaml:1: 'early_stopping' is missing"), std::string::npos)
      << missing.output;
}

}  // namespace
}  // namespace tf::sweeps
