// The sweeps' random numbers: a small, well-mixed generator (SplitMix64) whose stream is fixed
// by a seed and a trial number, so that a strategy's draws for trial n are the same on every
// machine and after every restart.
#pragma once

#include <cmath>
#include <cstdint>

namespace tf::sweeps {

class RandomStream {
 public:
  // Trial n of a seed starts at a hashed point of its own: SplitMix's steps must be the golden
  // gamma apart, so neighbouring trials cannot simply start one apart (their draws would be
  // close) nor one step apart (they would share draws).
  RandomStream(uint64_t seed, uint64_t trial)
      : state_(Mix(Mix(seed + kGolden) ^ (trial * kGolden))) {}

  double Uniform() {  // [0, 1)
    return static_cast<double>(Mix(state_ += kGolden) >> 11) * 0x1.0p-53;
  }
  double Normal() {                     // standard normal (Box-Muller)
    const double u1 = 1.0 - Uniform();  // (0, 1]
    const double u2 = Uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * 3.14159265358979323846 * u2);
  }

 private:
  static constexpr uint64_t kGolden = 0x9E3779B97F4A7C15ULL;
  static uint64_t Mix(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  uint64_t state_;
};

}  // namespace tf::sweeps
