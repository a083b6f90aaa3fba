// Quantising rows of float32 weights to GGUF's Q8_0 and Q4_0 block formats (dtype.h gives their
// layout), and reading a row of any weight type back as float32.
//
// Q8_0: d = max|x| / 127, q[i] = round(x[i] / d) (ties to even), so every weight is within d / 2
// of its value. Q4_0: d = m / -8 where m is the block's value of largest magnitude (its sign
// kept), q = clamp(round(x / d) + 8, 0, 15): m itself is exact, the others within d / 2 (those
// of the other sign may clamp at 15, within |d|). A block of zeros has d = 0 and all q as zero
// weights. The scale d is stored as f16, and weights are d (as stored) times q, so quantising
// then dequantising is exactly what a kernel reading the blocks computes with.
#pragma once

#include <cstdint>

#include "engine/dtype.h"

namespace tf::engine {

// x rounded to the nearest integer, ties to even (as std::nearbyint in the default rounding
// mode, without its library call), for |x| < 2^22: adding 1.5 * 2^23 leaves no fraction bits.
inline float RoundHalfEven(float x) {
  constexpr float kShift = 12582912.0f;
  return (x + kShift) - kShift;
}

// x clamped to [lo, hi]; NaN gives lo.
inline float Clamp(float x, float lo, float hi) { return !(x >= lo) ? lo : (x > hi ? hi : x); }

// The largest |x[i]| of x: [n].
inline float MaxAbs(const float* x, int64_t n) {
  float m = 0;
  for (int64_t i = 0; i < n; ++i) {
    const float a = x[i] < 0 ? -x[i] : x[i];
    m = a > m ? a : m;
  }
  return m;
}

// x: [n] float32, n a multiple of kQuantBlock; out: RowBytes(kQ8_0, n) bytes (any alignment).
void QuantizeRowQ8_0(const float* x, int64_t n, void* out);
// x: [n] float32, n a multiple of kQuantBlock; out: RowBytes(kQ4_0, n) bytes (any alignment).
void QuantizeRowQ4_0(const float* x, int64_t n, void* out);
// Quantises to `dtype`, which must be kQ8_0 or kQ4_0.
void QuantizeRow(DType dtype, const float* x, int64_t n, void* out);

// Reads one row of n weights of any DType (RowBytes(dtype, n) bytes at row, any alignment) as
// float32: out: [n]. The K-quants read back as ggml's own dequantisation gives them, bit for bit.
void DequantizeRow(DType dtype, const void* row, int64_t n, float* out);

}  // namespace tf::engine
