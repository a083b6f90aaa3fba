#include "sweeps/tpe.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "sweeps/random_stream.h"

namespace tf::sweeps {
namespace {

using Json = nlohmann::json;

constexpr double kPi = 3.14159265358979323846;
constexpr int kFlatWeights = 25;  // the latest trials keep full weight
constexpr int kMaxGoodTrials = 25;
constexpr double kPriorWeight = 1.0;
// Another stream than the random strategy's for the same seed and trial.
constexpr uint64_t kTpeStreamSalt = 0x7470655f73747265ULL;

// A parameter as the estimator sees it: a number in [low, high] (a log for log scales, the
// interval around the integers for integers), or a category's index.
struct Axis {
  const Param* param;
  bool categorical = false;
  double low = 0, high = 0;  // numeric
  size_t choices = 0;        // categorical
};

std::vector<Axis> AxesOf(const SearchSpace& space) {
  std::vector<Axis> axes;
  for (const Param& p : space.params) {
    Axis a{&p};
    switch (p.kind) {
      case ParamKind::kUniform:
        a.low = p.low, a.high = p.high;
        break;
      case ParamKind::kLogUniform:
        a.low = std::log(p.low), a.high = std::log(p.high);
        break;
      case ParamKind::kInt:
        a.low = p.low - 0.5, a.high = p.high + 0.5;
        break;
      case ParamKind::kIntLog:
        a.low = std::log(p.low - 0.5), a.high = std::log(p.high + 0.5);
        break;
      case ParamKind::kCategorical:
        a.categorical = true;
        a.choices = p.choices.size();
        break;
      case ParamKind::kFixed:
        continue;  // nothing to model
    }
    axes.push_back(a);
  }
  return axes;
}

// A trial's value on `axis`, or NaN when it has none that fits (another space's trial).
double Coordinate(const Axis& axis, const Json& params) {
  constexpr double kNone = std::numeric_limits<double>::quiet_NaN();
  auto it = params.find(axis.param->name);
  if (it == params.end()) return kNone;
  if (axis.categorical) {
    const auto& choices = axis.param->choices;
    auto found = std::find(choices.begin(), choices.end(), *it);
    return found == choices.end() ? kNone : static_cast<double>(found - choices.begin());
  }
  if (!it->is_number()) return kNone;
  double x = it->get<double>();
  const ParamKind kind = axis.param->kind;
  if (kind == ParamKind::kLogUniform || kind == ParamKind::kIntLog) {
    if (x <= 0) return kNone;
    x = std::log(x);
  }
  return std::clamp(x, axis.low, axis.high);
}

Json Decode(const Axis& axis, double x) {
  const Param& p = *axis.param;
  switch (p.kind) {
    case ParamKind::kUniform:
      return std::clamp(x, p.low, p.high);
    case ParamKind::kLogUniform:
      return std::clamp(std::exp(x), p.low, p.high);
    case ParamKind::kInt:
      return static_cast<int64_t>(std::clamp(std::round(x), p.low, p.high));
    case ParamKind::kIntLog:
      return static_cast<int64_t>(std::clamp(std::round(std::exp(x)), p.low, p.high));
    case ParamKind::kCategorical:
      return p.choices[std::min(p.choices.size() - 1, static_cast<size_t>(x))];
    case ParamKind::kFixed:
      return p.value;
  }
  return nullptr;
}

double NormalCdf(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }

// A mixture over the axes: kernel j has weight weights[j] and, per numeric axis, a Gaussian
// (mu, sigma) truncated to the axis, per categorical axis probabilities over its choices.
class ParzenEstimator {
 public:
  // `points`: [trials][axes], oldest first.
  ParzenEstimator(const std::vector<Axis>& axes, const std::vector<std::vector<double>>& points)
      : axes_(axes) {
    const size_t n = points.size();
    const size_t kernels = n + 1;  // the trials', then the prior
    // Weights: 1 for the latest kFlatWeights, a ramp from 1/n up to 1 for the older ones.
    std::vector<double> weights(kernels, 1.0);
    if (n > static_cast<size_t>(kFlatWeights)) {
      const size_t ramp = n - kFlatWeights;
      for (size_t i = 0; i < ramp; ++i) {
        const double from = 1.0 / static_cast<double>(n);
        weights[i] = ramp == 1 ? from
                               : from + (1.0 - from) * static_cast<double>(i) /
                                            static_cast<double>(ramp - 1);
      }
    }
    weights[n] = kPriorWeight;
    double total = 0;
    for (double w : weights) total += w;
    log_weights_.resize(kernels);
    cumulative_.resize(kernels);
    double running = 0;
    for (size_t j = 0; j < kernels; ++j) {
      log_weights_[j] = std::log(weights[j] / total);
      running += weights[j] / total;
      cumulative_[j] = running;
    }

    dims_.resize(axes.size());
    for (size_t a = 0; a < axes.size(); ++a) {
      const Axis& axis = axes[a];
      Dim& dim = dims_[a];
      if (axis.categorical) {
        const size_t k = axis.choices;
        dim.probs.assign(kernels * k, 0.0);
        for (size_t j = 0; j < kernels; ++j) {
          double* row = &dim.probs[j * k];
          for (size_t c = 0; c < k; ++c) row[c] = kPriorWeight / static_cast<double>(k);
          if (j < n) row[static_cast<size_t>(points[j][a])] += 1.0;
          double sum = 0;
          for (size_t c = 0; c < k; ++c) sum += row[c];
          for (size_t c = 0; c < k; ++c) row[c] = std::log(row[c] / sum);
        }
        continue;
      }
      const double range = axis.high - axis.low;
      const double min_sigma = range / std::min(100.0, static_cast<double>(n) + 1.0);
      dim.mu.resize(kernels);
      dim.sigma.resize(kernels);
      dim.inv_sigma.resize(kernels);
      for (size_t j = 0; j < kernels; ++j) {
        dim.mu[j] = j == n ? 0.5 * (axis.low + axis.high) : points[j][a];
      }
      const std::vector<double> width = Widths(points, a);
      for (size_t j = 0; j < kernels; ++j) {
        const bool prior = j == n;
        dim.sigma[j] = prior ? range : std::clamp(width[j], min_sigma, range);
        dim.inv_sigma[j] = 1.0 / dim.sigma[j];
        // Less the log of (sigma * sqrt(2 pi) * the mass inside the bounds), once per kernel
        // for all the axes, so that a density's inner loop is only the squares.
        const double above = (axis.high - dim.mu[j]) / dim.sigma[j];
        const double below = (axis.low - dim.mu[j]) / dim.sigma[j];
        // Far from both bounds (as most narrow kernels are) the mass inside is 1 to within
        // 1e-15, and the two erfc calls are most of the estimator's set-up.
        const double mass = above > 8 && below < -8 ? 1.0 : NormalCdf(above) - NormalCdf(below);
        log_weights_[j] -= std::log(dim.sigma[j] * std::sqrt(2 * kPi) * std::max(mass, 1e-12));
      }
    }
  }

  // The trials' kernels' widths on axis `a` before clipping: each the distance to its farther
  // neighbour among the trials' values there (the one neighbour it has, for the first and the
  // last), so that kernels are narrow where good trials crowd. (Optuna's univariate rule; Scott's
  // rule, one width for all, found less on Hartmann-6 and Branin: docs/benchmarks/sweeps.md.)
  static std::vector<double> Widths(const std::vector<std::vector<double>>& points, size_t a) {
    const size_t n = points.size();
    std::vector<double> width(n, 0.0);
    if (n < 2) return width;                           // clipped up to the range's share below
    std::vector<std::pair<double, size_t>> sorted(n);  // (value, trial)
    for (size_t i = 0; i < n; ++i) sorted[i] = {points[i][a], i};
    std::sort(sorted.begin(), sorted.end());
    for (size_t r = 0; r < n; ++r) {
      const double at = sorted[r].first;
      const double left = r > 0 ? at - sorted[r - 1].first : 0;
      const double right = r + 1 < n ? sorted[r + 1].first - at : 0;
      width[sorted[r].second] = std::max(left, right);
    }
    return width;
  }

  // A point drawn from the mixture: a kernel by weight, then every axis from that kernel.
  std::vector<double> Sample(RandomStream& stream) const {
    const double u = stream.Uniform();
    size_t j = std::lower_bound(cumulative_.begin(), cumulative_.end(), u) - cumulative_.begin();
    j = std::min(j, cumulative_.size() - 1);
    std::vector<double> x(axes_.size());
    for (size_t a = 0; a < axes_.size(); ++a) {
      const Axis& axis = axes_[a];
      const Dim& dim = dims_[a];
      if (axis.categorical) {
        const double* row = &dim.probs[j * axis.choices];
        double r = stream.Uniform(), acc = 0;
        size_t c = 0;
        for (; c + 1 < axis.choices; ++c) {
          acc += std::exp(row[c]);
          if (r < acc) break;
        }
        x[a] = static_cast<double>(c);
        continue;
      }
      // Truncated by rejection: the kernel's centre is inside and its width at most the range,
      // so a draw lands inside often; after 100 misses, the nearest bound.
      double v = dim.mu[j];
      for (int tries = 0; tries < 100; ++tries) {
        v = dim.mu[j] + dim.sigma[j] * stream.Normal();
        if (v >= axis.low && v <= axis.high) break;
      }
      x[a] = std::clamp(v, axis.low, axis.high);
    }
    return x;
  }

  // log of the mixture's density at x. (log_weights_ holds each kernel's weight and
  // normalisation together.)
  double LogDensity(const std::vector<double>& x) const {
    const size_t kernels = log_weights_.size();
    terms_.assign(log_weights_.begin(), log_weights_.end());
    for (size_t a = 0; a < axes_.size(); ++a) {
      const Axis& axis = axes_[a];
      const Dim& dim = dims_[a];
      if (axis.categorical) {
        const size_t c = static_cast<size_t>(x[a]);
        for (size_t j = 0; j < kernels; ++j) terms_[j] += dim.probs[j * axis.choices + c];
        continue;
      }
      const double xa = x[a];
      const double* mu = dim.mu.data();
      const double* inv = dim.inv_sigma.data();
      double* terms = terms_.data();
      for (size_t j = 0; j < kernels; ++j) {
        const double z = (xa - mu[j]) * inv[j];
        terms[j] -= 0.5 * z * z;
      }
    }
    const double top = *std::max_element(terms_.begin(), terms_.end());
    double sum = 0;
    for (double t : terms_) {
      // A term this far below the largest adds less than 1e-21 of it: skipped, which also
      // spares exp its slow path for results that underflow.
      if (t - top > -50) sum += std::exp(t - top);
    }
    return top + std::log(sum);
  }

 private:
  struct Dim {
    std::vector<double> mu, sigma, inv_sigma;  // numeric, per kernel
    std::vector<double> probs;                 // categorical: log probabilities, [kernel][choice]
  };
  const std::vector<Axis>& axes_;
  std::vector<double> log_weights_, cumulative_;
  std::vector<Dim> dims_;
  mutable std::vector<double> terms_;  // LogDensity's scratch
};

class TpeStrategy final : public Strategy {
 public:
  TpeStrategy(SearchSpace space, uint64_t seed, Goal goal)
      : space_(std::move(space)),
        seed_(seed),
        goal_(goal),
        axes_(AxesOf(space_)),
        startup_(NewRandomStrategy(space_, seed)) {}

  Result<Json> Suggest(const std::vector<Trial>& trials) const override {
    // The trials the model learns from, as points; oldest first.
    struct Known {
      std::vector<double> point;
      double value;
      size_t order;
    };
    std::vector<Known> done;
    std::vector<std::vector<double>> running;
    for (size_t i = 0; i < trials.size(); ++i) {
      const Trial& t = trials[i];
      if (t.state == "failed") continue;
      std::vector<double> point(axes_.size());
      bool fits = true;
      for (size_t a = 0; a < axes_.size() && fits; ++a) {
        point[a] = Coordinate(axes_[a], t.params);
        fits = !std::isnan(point[a]);
      }
      if (!fits) continue;
      if (t.value && std::isfinite(*t.value)) {
        done.push_back({std::move(point), goal_ == Goal::kMinimize ? *t.value : -*t.value, i});
      } else if (t.state == "running") {
        running.push_back(std::move(point));
      }
    }
    if (done.size() < static_cast<size_t>(kStartupTrials) || axes_.empty()) {
      return startup_->Suggest(trials);
    }

    // The best gamma(n) are good; the rest, and the running ones, bad.
    std::vector<size_t> by_value(done.size());
    for (size_t i = 0; i < done.size(); ++i) by_value[i] = i;
    std::stable_sort(by_value.begin(), by_value.end(),
                     [&](size_t a, size_t b) { return done[a].value < done[b].value; });
    const size_t good_count = std::min<size_t>(
        kMaxGoodTrials, static_cast<size_t>(std::ceil(0.1 * static_cast<double>(done.size()))));
    std::vector<bool> good(done.size(), false);
    for (size_t i = 0; i < good_count; ++i) good[by_value[i]] = true;
    std::vector<std::vector<double>> good_points, bad_points;
    for (size_t i = 0; i < done.size(); ++i) {
      (good[i] ? good_points : bad_points).push_back(done[i].point);
    }
    for (auto& p : running) bad_points.push_back(std::move(p));

    const ParzenEstimator l(axes_, good_points), g(axes_, bad_points);
    RandomStream stream(seed_ ^ kTpeStreamSalt, trials.size());
    std::vector<double> best;
    double best_score = -std::numeric_limits<double>::infinity();
    for (int c = 0; c < kCandidates; ++c) {
      std::vector<double> x = l.Sample(stream);
      const double score = l.LogDensity(x) - g.LogDensity(x);
      if (score > best_score || best.empty()) {
        best_score = score;
        best = std::move(x);
      }
    }
    Json out = Json::object();
    size_t a = 0;
    for (const Param& p : space_.params) {
      if (p.kind == ParamKind::kFixed) {
        out[p.name] = p.value;
        continue;
      }
      out[p.name] = Decode(axes_[a], best[a]);
      ++a;
    }
    return out;
  }

 private:
  SearchSpace space_;
  uint64_t seed_;
  Goal goal_;
  std::vector<Axis> axes_;  // point into space_
  std::unique_ptr<Strategy> startup_;
};

}  // namespace

std::unique_ptr<Strategy> NewTpeStrategy(const SearchSpace& space, uint64_t seed, Goal goal) {
  return std::make_unique<TpeStrategy>(space, seed, goal);
}

}  // namespace tf::sweeps
