// The plain K-quant activation quantiser and matmul (KernelSet::matmul_kquant): the definitions
// that the vectorised versions (kquant_avx512.cc) are tested against.
#include "engine/kernels/sets.h"
#include "engine/kquant_blocks.h"
#include "engine/quant.h"

namespace tf::engine::kernels {

void QuantizeKActivations(const float* x, int64_t n, KActivationBlock* out) {
  for (int64_t b = 0; b < n / kSuperBlock; ++b) {
    const float* v = x + b * kSuperBlock;
    const float amax = MaxAbs(v, kSuperBlock);
    const float inv = amax != 0 ? 127.0f / amax : 0.0f;
    KActivationBlock& o = out[b];
    o.d = amax / 127.0f;
    for (int j = 0; j < 16; ++j) {
      int32_t sum = 0;
      for (int i = 16 * j; i < 16 * j + 16; ++i) {
        o.q[i] = static_cast<int8_t>(Clamp(RoundHalfEven(v[i] * inv), -127.0f, 127.0f));
        sum += o.q[i];
      }
      o.sums[j] = static_cast<int16_t>(sum);
    }
  }
}

void RefMatmulKQuant(DType type, const void* w, const KActivationBlock* x, float* y,
                     int64_t n_tokens, int64_t n_in, int64_t n_out, int64_t row_begin,
                     int64_t row_end) {
  const int64_t supers = n_in / kSuperBlock;
  const size_t block_bytes = BlockBytes(type);
  const auto* bytes = static_cast<const uint8_t*>(w);
  KSuperBlock sb;
  for (int64_t t = 0; t < n_tokens; ++t) {
    for (int64_t r = row_begin; r < row_end; ++r) {
      float sum = 0;
      for (int64_t s = 0; s < supers; ++s) {
        UnpackKQuant(type, bytes + (r * supers + s) * block_bytes, &sb);
        const KActivationBlock& a = x[t * supers + s];
        int32_t dots = 0, mins = 0;
        for (int j = 0; j < kSuperBlock / sb.sub; ++j) {
          int32_t dot = 0;
          for (int i = j * sb.sub; i < (j + 1) * sb.sub; ++i) dot += sb.q[i] * a.q[i];
          int32_t xsum = 0;
          for (int k = j * sb.sub / 16; k < (j + 1) * sb.sub / 16; ++k) xsum += a.sums[k];
          dots += sb.sc[j] * dot;
          mins += sb.m[j] * xsum;
        }
        const float scaled = sb.d * static_cast<float>(dots);
        const float offset = sb.dmin * static_cast<float>(mins);
        sum += a.d * (scaled - offset);
      }
      y[t * n_out + r] = sum;
    }
  }
}

}  // namespace tf::engine::kernels
