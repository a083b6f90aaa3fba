// Sweeps' search core (sweeps/search_space.h, sweeps/strategy.h): the space read with every
// mistake named by file, line and parameter; random search reproducible from its history and
// inside its bounds; grid search through every point once; and `sweep suggest` as a process,
// trials in on stdin, suggestions out on stdout.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>

#include "file_test_util.h"
#include "program_run.h"
#include "store_test_env.h"
#include "sweeps/search_space.h"
#include "sweeps/strategy.h"
#include "sweeps/tpe.h"

namespace tf::sweeps {
namespace {

using Json = nlohmann::json;

constexpr const char* kSpace =
    "parameters:\n"
    "  lr: {type: loguniform, low: 1e-5, high: 1e-2}\n"
    "  dropout: {type: uniform, low: 0, high: 0.5}\n"
    "  layers: {type: int, low: 2, high: 8}\n"
    "  width: {type: int_log, low: 16, high: 1024}\n"
    "  optimizer: {type: categorical, choices: [adamw, sgd, lion]}\n"
    "  warmup: {type: fixed, value: 100}\n";

TEST(SweepSpaceTest, ReadsEveryKindOfParameter) {
  auto space = ParseSearchSpace(kSpace, "space.yaml");
  ASSERT_TRUE(space.ok()) << space.status().ToString();
  ASSERT_EQ(space->params.size(), 6u);
  EXPECT_EQ(space->params[0].name, "lr");
  EXPECT_EQ(space->params[0].kind, ParamKind::kLogUniform);
  EXPECT_DOUBLE_EQ(space->params[0].low, 1e-5);
  EXPECT_EQ(space->params[2].kind, ParamKind::kInt);
  EXPECT_EQ(space->params[4].choices, (std::vector<Json>{"adamw", "sgd", "lion"}));
  EXPECT_EQ(space->params[5].value, 100);
}

TEST(SweepSpaceTest, MistakesAreNamedWithTheirLine) {
  const std::pair<const char*, const char*> cases[] = {
      {"parameters:\n  lr: {type: uniform, low: 1, high: 0.5}\n",
       "space.yaml:2: parameters.lr.high: must be above low (1)"},
      {"parameters:\n  lr: {type: loguniform, low: 0, high: 1}\n",
       "space.yaml:2: parameters.lr.low: must be above 0 on a log scale"},
      {"parameters:\n  lr: {type: normal, low: 0, high: 1}\n",
       "space.yaml:2: parameters.lr.type: unknown type 'normal'"},
      {"parameters:\n  n: {type: int, low: 1.5, high: 4}\n",
       "space.yaml:2: parameters.n.low: must be an integer"},
      {"parameters:\n  o:\n    type: categorical\n    choices: [a, b, a]\n",
       "space.yaml:4: parameters.o.choices[2]: repeats the value \"a\""},
      {"parameters:\n  o: {type: categorical, choices: []}\n", "must list 1 to 1000 values"},
      {"parameters:\n  lr: {type: uniform, low: 0}\n", "parameters.lr: uniform needs 'high'"},
      {"parameters:\n  lr: {type: fixed, value: 1, low: 0}\n",
       "parameters.lr.low: is not a field of a fixed parameter"},
      {"parameters:\n  lr: {kind: uniform}\n", "parameters.lr: unknown field \"kind\""},
      {"parameters:\n  bad name: {type: fixed, value: 1}\n",
       "space.yaml:2: parameters.bad name: is not a valid name"},
      {"other: 1\n", "space.yaml:1: 'parameters' is missing"},
      {"", "no parameters: the file is empty"},
  };
  for (const auto& [text, error] : cases) {
    auto space = ParseSearchSpace(text, "space.yaml");
    ASSERT_FALSE(space.ok()) << text;
    EXPECT_NE(space.status().message().find(error), std::string::npos) << text << "\n"
                                                                       << space.status().message();
  }
}

TEST(SweepStrategyTest, RandomIsInsideItsBoundsAndReproducibleFromItsHistory) {
  auto space = ParseSearchSpace(kSpace, "space.yaml");
  ASSERT_TRUE(space.ok());
  auto random = NewRandomStrategy(*space, 7);
  std::vector<Trial> trials;
  std::set<std::string> optimizers;
  double log_lr_sum = 0;
  constexpr int kTrials = 400;
  for (int i = 0; i < kTrials; ++i) {
    auto p = random->Suggest(trials);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    const Json& x = *p;
    EXPECT_GE(x["lr"].get<double>(), 1e-5);
    EXPECT_LE(x["lr"].get<double>(), 1e-2);
    EXPECT_GE(x["dropout"].get<double>(), 0);
    EXPECT_LT(x["dropout"].get<double>(), 0.5);
    ASSERT_TRUE(x["layers"].is_number_integer()) << x.dump();
    EXPECT_GE(x["layers"].get<int>(), 2);
    EXPECT_LE(x["layers"].get<int>(), 8);
    ASSERT_TRUE(x["width"].is_number_integer());
    EXPECT_GE(x["width"].get<int>(), 16);
    EXPECT_LE(x["width"].get<int>(), 1024);
    EXPECT_EQ(x["warmup"], 100);
    optimizers.insert(x["optimizer"].get<std::string>());
    log_lr_sum += std::log10(x["lr"].get<double>());
    trials.push_back({x, 0.5, "complete"});
  }
  EXPECT_EQ(optimizers.size(), 3u);
  // Log-uniform: the mean of log10(lr) near the middle of [-5, -2].
  EXPECT_NEAR(log_lr_sum / kTrials, -3.5, 0.15);
  // Neighbouring trials are independent draws: no correlation between one's lr and the next's.
  double sx = 0, sy = 0, sxx = 0, syy = 0, sxy = 0;
  const int n = kTrials - 1;
  for (int i = 0; i < n; ++i) {
    const double x = std::log(trials[i].params["lr"].get<double>());
    const double y = std::log(trials[i + 1].params["lr"].get<double>());
    sx += x, sy += y, sxx += x * x, syy += y * y, sxy += x * y;
  }
  const double correlation =
      (n * sxy - sx * sy) / std::sqrt((n * sxx - sx * sx) * (n * syy - sy * sy));
  EXPECT_LT(std::fabs(correlation), 0.15) << correlation;

  // The same history gives the same suggestion (a sweep restarted carries on as it would
  // have); another seed another one.
  std::vector<Trial> first(trials.begin(), trials.begin() + 10);
  EXPECT_EQ(*random->Suggest(first), *NewRandomStrategy(*space, 7)->Suggest(first));
  EXPECT_EQ(*random->Suggest(first), trials[10].params);
  EXPECT_NE(*random->Suggest(first), *NewRandomStrategy(*space, 8)->Suggest(first));
}

TEST(SweepStrategyTest, GridGoesThroughEveryPointOnce) {
  auto space = ParseSearchSpace(
      "parameters:\n"
      "  lr: {type: loguniform, low: 1e-4, high: 1e-2, grid_points: 3}\n"
      "  layers: {type: int, low: 2, high: 3}\n"
      "  optimizer: {type: categorical, choices: [adamw, sgd]}\n",
      "grid.yaml");
  ASSERT_TRUE(space.ok()) << space.status().ToString();
  auto grid = NewGridStrategy(*space);
  ASSERT_TRUE(grid.ok()) << grid.status().ToString();
  std::vector<Trial> trials;
  std::set<std::string> seen;
  for (int i = 0; i < 12; ++i) {
    auto p = (*grid)->Suggest(trials);
    ASSERT_TRUE(p.ok()) << i << ": " << p.status().ToString();
    EXPECT_TRUE(seen.insert(p->dump()).second) << "twice: " << p->dump();
    trials.push_back({*p, std::nullopt, "running"});
  }
  // The first parameter varies slowest; log-spaced values with the bounds included.
  EXPECT_NEAR(trials[0].params["lr"].get<double>(), 1e-4, 1e-12);
  EXPECT_NEAR(trials[4].params["lr"].get<double>(), 1e-3, 1e-12);
  EXPECT_NEAR(trials[11].params["lr"].get<double>(), 1e-2, 1e-12);
  EXPECT_EQ(trials[1].params["optimizer"], "sgd");
  auto done = (*grid)->Suggest(trials);
  ASSERT_FALSE(done.ok());
  EXPECT_NE(done.status().message().find("all 12 of its points have been tried"),
            std::string::npos);
  // A point tried already (given in any order) is not suggested again.
  std::vector<Trial> one = {trials[0]};
  EXPECT_EQ(*(*grid)->Suggest(one), trials[1].params);

  auto continuous = NewGridStrategy(*ParseSearchSpace(kSpace, "space.yaml"));
  ASSERT_FALSE(continuous.ok());
  EXPECT_NE(continuous.status().message().find("'lr' is continuous: give it grid_points"),
            std::string::npos)
      << continuous.status().message();
  EXPECT_FALSE(NewStrategy("bayes", *space, 0).ok());
  EXPECT_TRUE(NewStrategy("bayesian", *space, 0).ok());
}

// Branin's function on its usual domain, minimum 0.397887 at three points.
double Branin(const Json& x) {
  const double x1 = x["x1"].get<double>(), x2 = x["x2"].get<double>();
  const double b = 5.1 / (4 * M_PI * M_PI), c = 5 / M_PI, t = 1 / (8 * M_PI);
  const double a = x2 - b * x1 * x1 + c * x1 - 6;
  return a * a + 10 * (1 - t) * std::cos(x1) + 10;
}

constexpr const char* kBraninSpace =
    "parameters:\n"
    "  x1: {type: uniform, low: -5, high: 10}\n"
    "  x2: {type: uniform, low: 0, high: 15}\n";

// The best value `strategy` finds in `n` trials, asking one at a time.
double BestOf(const Strategy& strategy, int n, const std::function<double(const Json&)>& f,
              bool maximize = false) {
  std::vector<Trial> trials;
  double best = maximize ? -1e300 : 1e300;
  for (int i = 0; i < n; ++i) {
    auto p = strategy.Suggest(trials);
    EXPECT_TRUE(p.ok()) << p.status().ToString();
    const double v = f(*p);
    best = maximize ? std::max(best, v) : std::min(best, v);
    trials.push_back({*p, v, "complete"});
  }
  return best;
}

// TPE finds better points than random search in the same number of trials, on Branin over 15
// seeds (the medians of their regrets), and goes the way the goal says.
TEST(SweepStrategyTest, BayesianBeatsRandomAndFollowsTheGoal) {
  auto space = ParseSearchSpace(kBraninSpace, "space.yaml");
  ASSERT_TRUE(space.ok());
  std::vector<double> tpe, random;
  for (uint64_t seed = 1; seed <= 15; ++seed) {
    tpe.push_back(BestOf(*NewTpeStrategy(*space, seed, Goal::kMinimize), 60, Branin) - 0.397887);
    random.push_back(BestOf(*NewRandomStrategy(*space, seed), 60, Branin) - 0.397887);
  }
  std::sort(tpe.begin(), tpe.end());
  std::sort(random.begin(), random.end());
  EXPECT_LT(tpe[7], random[7] / 2)
      << "median regret: bayesian " << tpe[7] << ", random " << random[7];
  // Maximizing -Branin is the same search.
  auto negated = [](const Json& x) { return -Branin(x); };
  EXPECT_NEAR(BestOf(*NewTpeStrategy(*space, 3, Goal::kMaximize), 60, negated, /*maximize=*/true),
              -BestOf(*NewTpeStrategy(*space, 3, Goal::kMinimize), 60, Branin), 1e-12);
}

// Every kind of parameter stays in its bounds and type; the same history gives the same
// suggestion; a categorical choice that is better is chosen more as trials go on; trials still
// running push the next suggestion elsewhere; failed trials and trials of another space are
// left out; the first ten are the random strategy's.
TEST(SweepStrategyTest, BayesianOnEveryKindOfParameter) {
  auto space = ParseSearchSpace(kSpace, "space.yaml");
  ASSERT_TRUE(space.ok());
  auto tpe = NewTpeStrategy(*space, 5, Goal::kMinimize);
  auto f = [](const Json& x) {
    return std::fabs(std::log10(x["lr"].get<double>()) + 3) + x["dropout"].get<double>() +
           0.1 * std::abs(x["layers"].get<int>() - 5) + (x["optimizer"] == "lion" ? 0 : 1);
  };
  std::vector<Trial> trials;
  int lion_late = 0;
  for (int i = 0; i < 80; ++i) {
    auto p = tpe->Suggest(trials);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    const Json& x = *p;
    if (i < kStartupTrials) {
      EXPECT_EQ(x, *NewRandomStrategy(*space, 5)->Suggest(trials));
    }
    EXPECT_GE(x["lr"].get<double>(), 1e-5);
    EXPECT_LE(x["lr"].get<double>(), 1e-2);
    ASSERT_TRUE(x["layers"].is_number_integer()) << x.dump();
    EXPECT_GE(x["layers"].get<int>(), 2);
    EXPECT_LE(x["layers"].get<int>(), 8);
    ASSERT_TRUE(x["width"].is_number_integer()) << x.dump();
    EXPECT_GE(x["width"].get<int>(), 16);
    EXPECT_LE(x["width"].get<int>(), 1024);
    EXPECT_EQ(x["warmup"], 100);
    if (i >= 60 && x["optimizer"] == "lion") ++lion_late;
    trials.push_back({x, f(x), "complete"});
  }
  EXPECT_GE(lion_late, 14) << "of the last 20, against about 7 at random";
  std::vector<Trial> some(trials.begin(), trials.begin() + 30);
  const Json next = *tpe->Suggest(some);
  EXPECT_EQ(next, *NewTpeStrategy(*space, 5, Goal::kMinimize)->Suggest(some));
  EXPECT_NE(next, *NewTpeStrategy(*space, 6, Goal::kMinimize)->Suggest(some));
  // The suggestion itself, running: the next one is another point.
  std::vector<Trial> pending = some;
  pending.push_back({next, std::nullopt, "running"});
  EXPECT_NE(*tpe->Suggest(pending), next);
  // Failed trials, and trials with parameters from another space, change nothing but the count
  // (which moves the random stream: compare with a history of the same length).
  std::vector<Trial> noisy = some, plain = some;
  noisy.push_back({trials[40].params, std::nullopt, "failed"});
  noisy.push_back({Json{{"other", 1}}, 0.0, "complete"});
  plain.push_back({trials[40].params, std::nullopt, "failed"});
  plain.push_back({trials[41].params, std::nullopt, "failed"});
  EXPECT_EQ(*tpe->Suggest(noisy), *tpe->Suggest(plain));
}

TEST(SweepSuggestCli, TrialsInOnStdinSuggestionsOutOnStdout) {
  testing::TempDir dir;
  const std::string space = testing::WriteFile(dir.path() / "space.yaml", kSpace);
  const std::string trials = testing::WriteFile(
      dir.path() / "trials.jsonl",
      R"({"params": {"lr": 0.001, "dropout": 0.1, "layers": 4, "width": 64, "optimizer": "sgd", "warmup": 100}, "value": 0.31})"
      "\n\n"
      R"({"params": {"lr": 0.0001, "dropout": 0.2, "layers": 2, "width": 32, "optimizer": "adamw", "warmup": 100}, "state": "failed"})"
      "\n");
  auto suggest = [&](const std::string& input, const std::string& flags) {
    return testing::RunProgram({"/bin/sh", "-c",
                                std::string(TENSORFLEET_BINARY) + " sweep suggest --space " +
                                    space + " " + flags + " < " + input});
  };
  auto run = suggest(trials, "--seed 3 --count 2");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  std::vector<Json> lines;
  size_t start = 0;
  for (size_t end; (end = run.output.find('\n', start)) != std::string::npos; start = end + 1) {
    lines.push_back(Json::parse(run.output.substr(start, end - start)));
  }
  ASSERT_EQ(lines.size(), 2u) << run.output;
  EXPECT_EQ(lines[0]["trial"], 3);
  EXPECT_EQ(lines[1]["trial"], 4);
  EXPECT_EQ(lines[0]["params"].size(), 6u);
  EXPECT_NE(lines[0]["params"], lines[1]["params"]);
  // Again: the same answer.
  EXPECT_EQ(suggest(trials, "--seed 3 --count 2").output, run.output);

  const std::string bad = testing::WriteFile(dir.path() / "bad.jsonl", "{\"params\": 3}\n");
  auto refused = suggest(bad, "");
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.output.find("stdin:1: 'params' must be an object"), std::string::npos)
      << refused.output;
}

}  // namespace
}  // namespace tf::sweeps
