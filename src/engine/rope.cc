#include "engine/rope.h"

#include <cmath>

namespace tf::engine {

std::vector<float> RopeInvFreq(const RopeConfig& rope, int64_t head_dim) {
  const double kPi = 3.14159265358979323846;
  std::vector<float> out(head_dim / 2);
  for (int64_t i = 0; i < head_dim / 2; ++i) {
    double freq = 1.0 / std::pow(rope.theta, static_cast<double>(2 * i) / head_dim);
    switch (rope.type) {
      case RopeConfig::Type::kDefault:
        break;
      case RopeConfig::Type::kLinear:
        freq /= rope.factor;
        break;
      case RopeConfig::Type::kLlama3: {
        // Long wavelengths are stretched by `factor`, short ones kept, those between blended.
        double old_context = static_cast<double>(rope.original_max_position_embeddings);
        double low_freq_wavelen = old_context / rope.low_freq_factor;
        double high_freq_wavelen = old_context / rope.high_freq_factor;
        double wavelen = 2 * kPi / freq;
        if (wavelen > low_freq_wavelen) {
          freq /= rope.factor;
        } else if (wavelen >= high_freq_wavelen) {
          double smooth = (old_context / wavelen - rope.low_freq_factor) /
                          (rope.high_freq_factor - rope.low_freq_factor);
          freq = (1 - smooth) * freq / rope.factor + smooth * freq;
        }
        break;
      }
    }
    if (!rope.freq_factors.empty()) freq /= rope.freq_factors[i];
    out[i] = static_cast<float>(freq);
  }
  return out;
}

void RopeTables(const std::vector<float>& inv_freq, int64_t first, int64_t n, float* cos,
                float* sin) {
  const size_t half = inv_freq.size();
  for (int64_t p = 0; p < n; ++p) {
    for (size_t i = 0; i < half; ++i) {
      // The angle is rounded to float first, as the reference implementation computes it.
      float angle = static_cast<float>(first + p) * inv_freq[i];
      cos[p * half + i] = static_cast<float>(std::cos(static_cast<double>(angle)));
      sin[p * half + i] = static_cast<float>(std::sin(static_cast<double>(angle)));
    }
  }
}

}  // namespace tf::engine
