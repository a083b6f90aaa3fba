// Rotary position embedding tables.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/config.h"

namespace tf::engine {

// The inverse frequency of each of the head_dim / 2 rotated pairs, with the config's scaling
// (linear, or Llama 3's smooth low/high frequency blend) applied, then divided by
// rope.freq_factors when given.
std::vector<float> RopeInvFreq(const RopeConfig& rope, int64_t head_dim);

// cos and sin of position * inv_freq[i], for positions [first, first + n).
// cos, sin: [n, inv_freq.size()].
void RopeTables(const std::vector<float>& inv_freq, int64_t first, int64_t n, float* cos,
                float* sin);

}  // namespace tf::engine
