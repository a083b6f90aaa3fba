// The `bayesian` strategy: a Tree-structured Parzen Estimator (Bergstra et al., "Algorithms for
// Hyper-Parameter Optimization", 2011), multivariate as Optuna's `multivariate=True` sampler:
//
//  - The first kStartupTrials completed trials are drawn as the random strategy draws them.
//  - Then the completed trials are split by their objective: the best gamma(n) =
//    min(ceil(n / 10), 25) are "good", the rest "bad", and trials still running count as bad
//    (a "constant liar": parallel suggestions then spread out instead of piling up where the
//    last one went). Failed trials are left out.
//  - Each group becomes a density over the space, a mixture with one kernel per trial and one
//    prior kernel over the whole space: per parameter a Gaussian truncated to the bounds (on a
//    log scale for the log parameters, integers as the interval around them) or a smoothed
//    categorical. Older trials weigh less once there are more than 25. A kernel's width on an
//    axis is the distance from its trial to the farther of its neighbours there, within
//    [range / min(100, n+1), range]: narrow where good trials crowd.
//  - kCandidates points are drawn from the good density (a kernel chosen, then every parameter
//    from it, so that parameters that go together stay together), and the one where good/bad
//    is highest is suggested.
//
// Like every strategy, a pure function of the space, the seed and the trials: the draws for
// trial n come from a stream of (seed, n).
#pragma once

#include <cstdint>
#include <memory>

#include "sweeps/strategy.h"

namespace tf::sweeps {

inline constexpr int kStartupTrials = 10;
inline constexpr int kCandidates = 24;

std::unique_ptr<Strategy> NewTpeStrategy(const SearchSpace& space, uint64_t seed, Goal goal);

}  // namespace tf::sweeps
