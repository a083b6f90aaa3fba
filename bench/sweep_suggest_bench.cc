// Time per suggestion of the sweeps' strategies (sweeps/strategy.h) with many completed trials:
// the search core alone, in this process, as a managed sweep or `sweep suggest` calls it.
//
//   sweep_suggest_bench [--trials 100,1000] [--dims 6] [--reps 50] [--strategy bayesian]
//
// For each history size n: n completed trials of a `dims`-dimensional uniform space (values of
// a smooth function of the point, so that the good and bad groups differ), then `reps`
// suggestions for trial n + 1, each timed; prints the median and the 90th percentile in
// milliseconds, one JSON line per size (docs/benchmarks/sweeps.md).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <sstream>
#include <string>
#include <vector>

#include "bench_util.h"
#include "sweeps/strategy.h"

namespace tf::bench {
namespace {

using Json = nlohmann::json;

int Main(int argc, char** argv) {
  Flags flags(argc, argv);
  const int dims = std::stoi(flags.Get("dims", "6"));
  const int reps = std::stoi(flags.Get("reps", "50"));
  const std::string strategy_name = flags.Get("strategy", "bayesian");
  std::vector<int> sizes;
  std::stringstream list(flags.Get("trials", "100,1000"));
  for (std::string item; std::getline(list, item, ',');) sizes.push_back(std::stoi(item));

  std::string yaml = "parameters:\n";
  for (int d = 0; d < dims; ++d) {
    yaml += "  x" + std::to_string(d) + ": {type: uniform, low: 0, high: 1}\n";
  }
  auto space = sweeps::ParseSearchSpace(yaml, "bench");
  if (!space.ok()) {
    std::fprintf(stderr, "%s\n", space.status().ToString().c_str());
    return 1;
  }
  auto strategy = sweeps::NewStrategy(strategy_name, *space, 1);
  if (!strategy.ok()) {
    std::fprintf(stderr, "%s\n", strategy.status().ToString().c_str());
    return 2;
  }
  auto random = sweeps::NewRandomStrategy(*space, 99);
  for (int n : sizes) {
    std::vector<sweeps::Trial> trials;
    for (int i = 0; i < n; ++i) {
      Json x = *random->Suggest(trials);
      double value = 0;
      for (int d = 0; d < dims; ++d) {
        const double v = x["x" + std::to_string(d)].get<double>() - 0.3;
        value += v * v + 0.1 * std::sin(7 * v);
      }
      trials.push_back({std::move(x), value, "complete"});
    }
    std::vector<double> ms;
    for (int r = 0; r < reps; ++r) {
      const auto start = std::chrono::steady_clock::now();
      auto suggestion = (*strategy)->Suggest(trials);
      const double took =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count();
      if (!suggestion.ok()) return 3;
      ms.push_back(took);
    }
    std::sort(ms.begin(), ms.end());
    const double median = ms[ms.size() / 2];
    const double p90 = ms[std::min(ms.size() - 1, ms.size() * 9 / 10)];
    std::printf("%s\n", Json{{"strategy", strategy_name},
                             {"dims", dims},
                             {"completed_trials", n},
                             {"median_ms", median},
                             {"p90_ms", p90}}
                            .dump()
                            .c_str());
  }
  return 0;
}

}  // namespace
}  // namespace tf::bench

int main(int argc, char** argv) {
  try {
    return tf::bench::Main(argc, argv);
  } catch (const std::exception& e) {  // a flag that is not a number
    std::fprintf(stderr, "sweep_suggest_bench: %s\n", e.what());
    return 2;
  }
}
