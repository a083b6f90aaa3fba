// Plain scalar matmuls over 16-bit and block-format weights, and the activation quantiser they
// share with the vectorised versions: the definitions typed_avx2.cc is tested against.
#include <cmath>
#include <cstring>

#include "engine/dtype.h"
#include "engine/kernels/sets.h"
#include "engine/quant.h"

namespace tf::engine::kernels {
namespace {

uint16_t LoadU16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }

template <float (*kToF32)(uint16_t)>
void Matmul16(const void* w, const float* x, float* y, int64_t n_tokens, int64_t n_in,
              int64_t n_out, int64_t row_begin, int64_t row_end) {
  const auto* bytes = static_cast<const uint8_t*>(w);
  for (int64_t t = 0; t < n_tokens; ++t) {
    for (int64_t r = row_begin; r < row_end; ++r) {
      const uint8_t* row = bytes + 2 * r * n_in;
      float sum = 0;
      for (int64_t i = 0; i < n_in; ++i) sum += kToF32(LoadU16(row + 2 * i)) * x[t * n_in + i];
      y[t * n_out + r] = sum;
    }
  }
}

// The integer dot product of one weight block's 32 values (given by `weight`) with an activation
// block's.
template <typename WeightAt>
int32_t BlockDot(const WeightAt& weight, const ActivationBlock& a) {
  int32_t sum = 0;
  for (int i = 0; i < 32; ++i) sum += weight(i) * a.q[i];
  return sum;
}

}  // namespace

void QuantizeActivations(const float* x, int64_t n, ActivationBlock* out) {
  for (int64_t b = 0; b < n / 32; ++b) {
    const float* v = x + b * 32;
    const float amax = MaxAbs(v, 32);
    const float d = amax / 127.0f;
    const float inv = d != 0 ? 127.0f / amax : 0.0f;
    out[b].d = d;
    int32_t sum = 0;
    for (int i = 0; i < 32; ++i) {
      float q = Clamp(RoundHalfEven(v[i] * inv), -127.0f, 127.0f);
      out[b].q[i] = static_cast<int8_t>(q);
      sum += out[b].q[i];
    }
    out[b].sum = sum;
  }
}

void RefMatmulF16(const void* w, const float* x, float* y, int64_t n_tokens, int64_t n_in,
                  int64_t n_out, int64_t row_begin, int64_t row_end) {
  Matmul16<F16ToF32>(w, x, y, n_tokens, n_in, n_out, row_begin, row_end);
}

void RefMatmulBf16(const void* w, const float* x, float* y, int64_t n_tokens, int64_t n_in,
                   int64_t n_out, int64_t row_begin, int64_t row_end) {
  Matmul16<Bf16ToF32>(w, x, y, n_tokens, n_in, n_out, row_begin, row_end);
}

void RefMatmulQ8_0(const void* w, const ActivationBlock* x, float* y, int64_t n_tokens,
                   int64_t n_in, int64_t n_out, int64_t row_begin, int64_t row_end) {
  const int64_t blocks = n_in / 32;
  const auto* bytes = static_cast<const uint8_t*>(w);
  for (int64_t t = 0; t < n_tokens; ++t) {
    for (int64_t r = row_begin; r < row_end; ++r) {
      float sum = 0;
      for (int64_t b = 0; b < blocks; ++b) {
        const uint8_t* block = bytes + (r * blocks + b) * kQ8_0BlockBytes;
        const ActivationBlock& a = x[t * blocks + b];
        int32_t dot = BlockDot([&](int i) { return static_cast<int8_t>(block[2 + i]); }, a);
        sum += F16ToF32(LoadU16(block)) * a.d * static_cast<float>(dot);
      }
      y[t * n_out + r] = sum;
    }
  }
}

void RefMatmulQ4_0(const void* w, const ActivationBlock* x, float* y, int64_t n_tokens,
                   int64_t n_in, int64_t n_out, int64_t row_begin, int64_t row_end) {
  const int64_t blocks = n_in / 32;
  const auto* bytes = static_cast<const uint8_t*>(w);
  for (int64_t t = 0; t < n_tokens; ++t) {
    for (int64_t r = row_begin; r < row_end; ++r) {
      float sum = 0;
      for (int64_t b = 0; b < blocks; ++b) {
        const uint8_t* block = bytes + (r * blocks + b) * kQ4_0BlockBytes;
        const ActivationBlock& a = x[t * blocks + b];
        auto weight = [&](int i) {
          return i < 16 ? (block[2 + i] & 0x0f) - 8 : (block[2 + i - 16] >> 4) - 8;
        };
        sum += F16ToF32(LoadU16(block)) * a.d * static_cast<float>(BlockDot(weight, a));
      }
      y[t * n_out + r] = sum;
    }
  }
}

}  // namespace tf::engine::kernels
