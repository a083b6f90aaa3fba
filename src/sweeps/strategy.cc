#include "sweeps/strategy.h"

#include <cmath>
#include <set>

#include "sweeps/random_stream.h"
#include "sweeps/tpe.h"

namespace tf::sweeps {
namespace {

constexpr int64_t kMaxIntegerGridValues = 1000;
constexpr int64_t kMaxGridCombinations = 1'000'000;

nlohmann::json Draw(const Param& p, RandomStream& s) {
  const double u = s.Uniform();
  switch (p.kind) {
    case ParamKind::kUniform:
      return p.low + u * (p.high - p.low);
    case ParamKind::kLogUniform:
      return std::exp(std::log(p.low) + u * (std::log(p.high) - std::log(p.low)));
    case ParamKind::kInt:
      return std::min(p.high, p.low + std::floor(u * (p.high - p.low + 1)));
    case ParamKind::kIntLog: {
      // Log-uniform over [low, high + 1), rounded down: each integer weighed by its share.
      double x = std::exp(std::log(p.low) + u * (std::log(p.high + 1) - std::log(p.low)));
      return static_cast<int64_t>(std::min(p.high, std::floor(x)));
    }
    case ParamKind::kCategorical:
      return p.choices[std::min(p.choices.size() - 1,
                                static_cast<size_t>(u * static_cast<double>(p.choices.size())))];
    case ParamKind::kFixed:
      return p.value;
  }
  return nullptr;
}

class RandomStrategy final : public Strategy {
 public:
  RandomStrategy(SearchSpace space, uint64_t seed) : space_(std::move(space)), seed_(seed) {}

  Result<nlohmann::json> Suggest(const std::vector<Trial>& trials) const override {
    RandomStream stream(seed_, trials.size());
    nlohmann::json out = nlohmann::json::object();
    for (const Param& p : space_.params) {
      nlohmann::json v = Draw(p, stream);
      // Integers as integers, whatever the arithmetic that made them.
      if ((p.kind == ParamKind::kInt || p.kind == ParamKind::kIntLog) && v.is_number()) {
        v = static_cast<int64_t>(v.get<double>());
      }
      out[p.name] = std::move(v);
    }
    return out;
  }

 private:
  SearchSpace space_;
  uint64_t seed_;
};

class GridStrategy final : public Strategy {
 public:
  explicit GridStrategy(std::vector<std::pair<std::string, std::vector<nlohmann::json>>> axes)
      : axes_(std::move(axes)) {}

  Result<nlohmann::json> Suggest(const std::vector<Trial>& trials) const override {
    std::set<std::string> tried;
    for (const Trial& t : trials) tried.insert(t.params.dump());
    int64_t points = 1;
    for (const auto& axis : axes_) points *= static_cast<int64_t>(axis.second.size());
    for (int64_t i = 0; i < points; ++i) {
      nlohmann::json point = nlohmann::json::object();
      int64_t rest = i;
      for (auto it = axes_.rbegin(); it != axes_.rend(); ++it) {  // the last varies fastest
        const int64_t n = static_cast<int64_t>(it->second.size());
        point[it->first] = it->second[static_cast<size_t>(rest % n)];
        rest /= n;
      }
      if (!tried.count(point.dump())) return point;
    }
    return FailedPrecondition("the grid is done: all " + std::to_string(points) +
                              " of its points have been tried");
  }

 private:
  std::vector<std::pair<std::string, std::vector<nlohmann::json>>> axes_;
};

}  // namespace

std::unique_ptr<Strategy> NewRandomStrategy(const SearchSpace& space, uint64_t seed) {
  return std::make_unique<RandomStrategy>(space, seed);
}

namespace {

using GridAxes = std::vector<std::pair<std::string, std::vector<nlohmann::json>>>;

Result<GridAxes> MakeGridAxes(const SearchSpace& space) {
  GridAxes axes;
  int64_t points = 1;
  for (const Param& p : space.params) {
    std::vector<nlohmann::json> values;
    switch (p.kind) {
      case ParamKind::kCategorical:
        values = p.choices;
        break;
      case ParamKind::kFixed:
        values = {p.value};
        break;
      case ParamKind::kInt:
      case ParamKind::kIntLog: {
        const int64_t count = static_cast<int64_t>(p.high - p.low) + 1;
        if (count > kMaxIntegerGridValues) {
          return InvalidArgument("grid: parameter '" + p.name + "' has " + std::to_string(count) +
                                 " values, more than a grid takes (" +
                                 std::to_string(kMaxIntegerGridValues) +
                                 "): make it categorical, or use random search");
        }
        for (int64_t v = static_cast<int64_t>(p.low); v <= static_cast<int64_t>(p.high); ++v) {
          values.emplace_back(v);
        }
        break;
      }
      case ParamKind::kUniform:
      case ParamKind::kLogUniform: {
        if (p.grid_points < 2) {
          return InvalidArgument("grid: parameter '" + p.name + "' is continuous: give it " +
                                 "grid_points: N, or make it categorical");
        }
        const bool log = p.kind == ParamKind::kLogUniform;
        const double a = log ? std::log(p.low) : p.low, b = log ? std::log(p.high) : p.high;
        for (int i = 0; i < p.grid_points; ++i) {
          double x = a + (b - a) * i / (p.grid_points - 1);
          values.emplace_back(log ? std::exp(x) : x);
        }
        break;
      }
    }
    points *= static_cast<int64_t>(values.size());
    if (points > kMaxGridCombinations) {
      return InvalidArgument("grid: more than " + std::to_string(kMaxGridCombinations) +
                             " points; use random search or fewer values");
    }
    axes.emplace_back(p.name, std::move(values));
  }
  return axes;
}

}  // namespace

Result<std::unique_ptr<Strategy>> NewGridStrategy(const SearchSpace& space) {
  TF_ASSIGN_OR_RETURN(GridAxes axes, MakeGridAxes(space));
  return std::unique_ptr<Strategy>(std::make_unique<GridStrategy>(std::move(axes)));
}

Result<int64_t> GridPoints(const SearchSpace& space) {
  TF_ASSIGN_OR_RETURN(GridAxes axes, MakeGridAxes(space));
  int64_t points = 1;
  for (const auto& axis : axes) points *= static_cast<int64_t>(axis.second.size());
  return points;
}

Result<std::unique_ptr<Strategy>> NewStrategy(std::string_view name, const SearchSpace& space,
                                              uint64_t seed, Goal goal) {
  if (name == "random") return NewRandomStrategy(space, seed);
  if (name == "grid") return NewGridStrategy(space);
  if (name == "bayesian") return NewTpeStrategy(space, seed, goal);
  // Hyperband draws at random; its brackets are the sweep's early stopping (early_stopping.h).
  if (name == "hyperband") return NewRandomStrategy(space, seed);
  return InvalidArgument("unknown strategy '" + std::string(name) +
                         "' (random, grid, bayesian, hyperband)");
}

Result<Goal> ParseGoal(std::string_view name) {
  if (name == "minimize") return Goal::kMinimize;
  if (name == "maximize") return Goal::kMaximize;
  return InvalidArgument("unknown goal '" + std::string(name) + "' (minimize, maximize)");
}

}  // namespace tf::sweeps
