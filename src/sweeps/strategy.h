// How a sweep picks the next trial's hyperparameters from the trials so far (docs/sweeps.md).
// A strategy is a pure function of the space, its seed and the trials it is shown: the same
// history gives the same suggestion, so that a sweep restarted from its stored trials carries
// on with the suggestions it would have made.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "sweeps/search_space.h"

namespace tf::sweeps {

// A trial as a strategy sees it: its hyperparameters and, once it has one, its objective value.
struct Trial {
  nlohmann::json params = nlohmann::json::object();
  std::optional<double> value;     // absent while running, or when it failed
  std::string state = "complete";  // complete, running, failed
};

// Which way the objective should go.
enum class Goal { kMinimize, kMaximize };
// "minimize" or "maximize"; kInvalidArgument naming them.
Result<Goal> ParseGoal(std::string_view name);

class Strategy {
 public:
  virtual ~Strategy() = default;
  // The next trial's hyperparameters (an object of every parameter's value). kFailedPrecondition
  // when the strategy has nothing left to try (a grid whose points have all been suggested).
  virtual Result<nlohmann::json> Suggest(const std::vector<Trial>& trials) const = 0;
};

// random: each parameter drawn independently (log-uniform on a log scale), from a stream
// seeded by `seed` and the number of trials so far.
std::unique_ptr<Strategy> NewRandomStrategy(const SearchSpace& space, uint64_t seed);

// grid: every combination of the parameters' values, in order (the first parameter varying
// slowest), the first one no trial has had. Categorical and fixed parameters give their values,
// integers every integer between their bounds (at most 1,000), continuous ones `grid_points`
// values evenly spaced (on a log scale for loguniform), bounds included. kInvalidArgument
// naming a continuous parameter without grid_points, an integer range over 1,000 values, or a
// grid of more than 1,000,000 points.
Result<std::unique_ptr<Strategy>> NewGridStrategy(const SearchSpace& space);

// How many points the grid of `space` has; NewGridStrategy's errors.
Result<int64_t> GridPoints(const SearchSpace& space);

// "random", "grid", "bayesian" (sweeps/tpe.h) or "hyperband" (random draws; a sweep with it
// stops trials by Hyperband's brackets, sweeps/early_stopping.h); kInvalidArgument naming the
// strategies there are. `goal` matters to bayesian only.
Result<std::unique_ptr<Strategy>> NewStrategy(std::string_view name, const SearchSpace& space,
                                              uint64_t seed, Goal goal = Goal::kMinimize);

}  // namespace tf::sweeps
