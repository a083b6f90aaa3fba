// Early stopping against full budgets (sweeps/early_stopping.h): the compute that each rule
// needs before one of its trials, run to the full budget, is within 1% of the best that any
// configuration reaches, on a family of synthetic learning curves.
//
//   early_stopping_bench [--seeds 20] [--workers 4] [--max-resource 81] [--min-resource 1]
//                        [--eta 3]
//                        [--noise 0.005] [--pool 1000] [--rules random,asha,hyperband,median]
//                        [--families parallel,mild,crossing]
//
// The curves (docs/benchmarks/sweeps.md): a configuration is a learning rate (log-uniform,
// 1e-4 to 1), a regularisation u and a width w (uniform, 0 to 1); its loss after t steps is
//   final(x) + (2.5 - final(x)) * (1 + t / tau(x))^-2
// with final(x) = 0.2 + 0.02 (log10 lr + 2)^2 + 0.05 (u - 0.3)^2 + 0.03 (1 - w)^2 and
//   tau(x) = 3 * (10^-(log10 lr + 2) * (0.5 + w) / 1.5)^c
// and Gaussian noise on each report. The family's c says how much the curves cross: parallel
// (c = 0) has every curve the same shape, so early ranks are the final ones up to noise; mild
// (c = 0.5) and crossing (c = 1) make a high learning rate or a small width converge faster
// to a worse loss and a low rate too slowly, so that early ranks mislead.
//
// Each seed draws one sequence of configurations that every rule takes in the same order.
// `workers` trials run at once, a step each per tick; a free worker resumes the first trial
// asha promotes, else starts the next configuration. Compute is the steps that all workers ran
// until a trial reaches max_resource with a true loss within 1% of the best of the family
// (found on a dense grid). One JSON line per rule: the median and quartiles over the seeds,
// and the median's ratio to random search with full budgets.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "bench_util.h"
#include "sweeps/early_stopping.h"
#include "sweeps/random_stream.h"

namespace tf::bench {
namespace {

using Json = nlohmann::json;

struct Config {
  double log_lr, u, w;
};

struct Family {
  std::string name;
  double crossing;  // c
  double noise;
  double Final(const Config& c) const {
    const double a = c.log_lr + 2;
    return 0.2 + 0.02 * a * a + 0.05 * (c.u - 0.3) * (c.u - 0.3) + 0.03 * (1 - c.w) * (1 - c.w);
  }
  double Loss(const Config& c, double t) const {
    const double tau = 3 * std::pow(std::pow(10.0, -(c.log_lr + 2)) * (0.5 + c.w) / 1.5, crossing);
    const double f = Final(c);
    return f + (2.5 - f) / ((1 + t / tau) * (1 + t / tau));
  }
  // The best true loss at the full budget over a dense grid of the space.
  double Best(double max_resource) const {
    double best = std::numeric_limits<double>::infinity();
    for (int i = 0; i <= 400; ++i) {
      for (int j = 0; j <= 50; ++j) {
        for (int k = 0; k <= 50; ++k) {
          best = std::min(best, Loss({-4 + i * 0.01, j * 0.02, k * 0.02}, max_resource));
        }
      }
    }
    return best;
  }
};

Config Draw(uint64_t seed, size_t index) {
  sweeps::RandomStream s(seed, index);
  return {-4 + 4 * s.Uniform(), s.Uniform(), s.Uniform()};
}

struct Outcome {
  double compute = 0;  // steps run by every worker until the find
  size_t started = 0;  // configurations started
  bool found = false;
};

// One sweep of one rule (none: every trial runs its full budget).
Outcome Simulate(const Family& family, const sweeps::EarlyStopping* rule, double max_resource,
                 uint64_t seed, int workers, double target, size_t pool) {
  std::vector<sweeps::TrialProgress> trials;
  std::vector<Config> configs;
  std::vector<sweeps::RandomStream> noise;
  std::vector<int> running;  // trial indices, one per busy worker
  Outcome out;
  auto fill = [&] {
    while (static_cast<int>(running.size()) < workers) {
      int next = -1;
      if (rule) {
        for (size_t p : sweeps::Promotable(*rule, sweeps::Goal::kMinimize, trials)) {
          next = static_cast<int>(p);
          break;
        }
      }
      if (next >= 0) {
        trials[static_cast<size_t>(next)].phase = sweeps::TrialPhase::kRunning;
      } else {
        if (configs.size() >= pool) return;
        configs.push_back(Draw(seed, configs.size()));
        noise.emplace_back(seed ^ 0x5eed, configs.size());
        trials.push_back({});
        next = static_cast<int>(trials.size() - 1);
        ++out.started;
      }
      running.push_back(next);
    }
  };
  fill();
  while (!running.empty()) {
    std::vector<int> still;
    for (int i : running) {
      auto& t = trials[static_cast<size_t>(i)];
      const double step = t.reports.empty() ? 1 : t.reports.back().resource + 1;
      const Config& c = configs[static_cast<size_t>(i)];
      const double value =
          family.Loss(c, step) + family.noise * noise[static_cast<size_t>(i)].Normal();
      t.reports.push_back({step, value});
      out.compute += 1;
      if (step >= max_resource) {
        t.phase = sweeps::TrialPhase::kComplete;
        if (family.Loss(c, max_resource) <= target) {
          out.found = true;
          return out;
        }
        continue;
      }
      if (rule &&
          sweeps::Judge(*rule, sweeps::Goal::kMinimize, trials, static_cast<size_t>(i)).stop) {
        t.phase = rule->rule == sweeps::StopRule::kAsha ? sweeps::TrialPhase::kPaused
                                                        : sweeps::TrialPhase::kComplete;
        continue;
      }
      still.push_back(i);
    }
    running = std::move(still);
    fill();
  }
  return out;
}

double Quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(v.size() - 1, lo + 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

int Main(int argc, char** argv) {
  Flags flags(argc, argv);
  const int seeds = std::stoi(flags.Get("seeds", "20"));
  const int workers = std::stoi(flags.Get("workers", "4"));
  const double max_resource = std::stod(flags.Get("max-resource", "81"));
  const double eta = std::stod(flags.Get("eta", "3"));
  const double min_resource = std::stod(flags.Get("min-resource", "1"));
  const auto pool = static_cast<size_t>(std::stoul(flags.Get("pool", "1000")));
  const double noise = std::stod(flags.Get("noise", "0.005"));
  std::vector<std::string> rules, families;
  std::stringstream rule_list(flags.Get("rules", "random,asha,hyperband,median"));
  for (std::string item; std::getline(rule_list, item, ',');) rules.push_back(item);
  std::stringstream family_list(flags.Get("families", "parallel,mild,crossing"));
  for (std::string item; std::getline(family_list, item, ',');) families.push_back(item);

  for (const std::string& family_name : families) {
    const double crossing = family_name == "parallel" ? 0 : family_name == "mild" ? 0.5 : 1;
    if (family_name != "parallel" && family_name != "mild" && family_name != "crossing") {
      std::fprintf(stderr, "unknown family '%s' (parallel, mild, crossing)\n", family_name.c_str());
      return 2;
    }
    const Family family{family_name, crossing, noise};
    const double best = family.Best(max_resource);
    const double target = best * 1.01;
    size_t within = 0;
    constexpr size_t kSample = 100000;
    for (size_t i = 0; i < kSample; ++i) within += family.Loss(Draw(7, i), max_resource) <= target;
    std::printf("%s\n", Json{{"family", family_name},
                             {"best", best},
                             {"target", target},
                             {"share_within_target", static_cast<double>(within) / kSample}}
                            .dump()
                            .c_str());
    double random_median = 0;
    for (const std::string& name : rules) {
      sweeps::EarlyStopping rule;
      rule.max_resource = max_resource;
      rule.reduction_factor = eta;
      rule.min_resource = min_resource;
      if (name == "hyperband") rule.brackets = sweeps::HyperbandBrackets(rule);
      if (name == "median") {
        rule.rule = sweeps::StopRule::kMedian;
        rule.min_resource = std::max(min_resource, max_resource / 9);  // no stop in the first ninth
      }
      if (name != "random" && name != "asha" && name != "hyperband" && name != "median") {
        std::fprintf(stderr, "unknown rule '%s' (random, asha, hyperband, median)\n", name.c_str());
        return 2;
      }
      std::vector<double> compute, started;
      int missed = 0;
      for (int s = 0; s < seeds; ++s) {
        const Outcome o = Simulate(family, name == "random" ? nullptr : &rule, max_resource,
                                   static_cast<uint64_t>(s) + 1, workers, target, pool);
        if (!o.found) ++missed;
        compute.push_back(o.found ? o.compute : std::numeric_limits<double>::infinity());
        started.push_back(static_cast<double>(o.started));
      }
      const double median = Quantile(compute, 0.5);
      if (name == "random") random_median = median;
      Json line = {{"family", family_name},
                   {"min_resource", rule.min_resource},
                   {"rule", name},
                   {"seeds", seeds},
                   {"workers", workers},
                   {"compute_median", median},
                   {"compute_q1", Quantile(compute, 0.25)},
                   {"compute_q3", Quantile(compute, 0.75)},
                   {"trials_started_median", Quantile(started, 0.5)},
                   {"not_found", missed}};
      if (random_median > 0) line["ratio_to_random"] = median / random_median;
      std::printf("%s\n", line.dump().c_str());
      std::fflush(stdout);
    }
  }
  return 0;
}

}  // namespace
}  // namespace tf::bench

int main(int argc, char** argv) {
  try {
    return tf::bench::Main(argc, argv);
  } catch (const std::exception& e) {  // a flag that is not a number
    std::fprintf(stderr, "early_stopping_bench: %s\n", e.what());
    return 2;
  }
}
