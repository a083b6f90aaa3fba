// Block operands at the edges of their range, for the quantised matmul kernels' tests: Q8_0
// weights of q = -128 (legal in the format, never written by our quantiser) and 127 with every
// scale 1, against activations of +-127. They give the largest dot products there are.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/kernels/kernels.h"

namespace tf::testing {

// n_blocks Q8_0 blocks (34 bytes each: an F16 scale of 1.0, then 32 weights).
inline std::vector<uint8_t> ExtremeQ8_0Weights(int64_t n_blocks) {
  std::vector<uint8_t> w(n_blocks * 34);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<uint8_t>(i % 3 == 0 ? 0x80 : 0x7f);
  for (int64_t b = 0; b < n_blocks; ++b) w[b * 34] = 0x00, w[b * 34 + 1] = 0x3c;  // d = 1
  return w;
}

// n_blocks activation blocks of scale 0.5 alternating +127 and -127, with their sums.
inline std::vector<engine::kernels::ActivationBlock> ExtremeActivations(int64_t n_blocks) {
  std::vector<engine::kernels::ActivationBlock> x(n_blocks);
  for (size_t b = 0; b < x.size(); ++b) {
    x[b].d = 0.5f;
    x[b].sum = 0;
    for (int i = 0; i < 32; ++i) {
      x[b].q[i] = static_cast<int8_t>((i + b) % 2 ? 127 : -127);
      x[b].sum += x[b].q[i];
    }
  }
  return x;
}

}  // namespace tf::testing
