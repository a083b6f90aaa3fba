// QuantizeActivations (typed_reference.cc) and QuantizeKActivations (kquant_reference.cc) with
// AVX-512: a block of 32 activations as two registers of 16, a super-block of 256 as sixteen. Equal
// to the plain version bit for bit: the largest |x| (NaNs skipped, as there), d and 127 / max|x|
// computed as scalars by the same expressions, each x times that product rounded to the nearest
// integer, ties to even (vrndscaleps, which is what the plain version's add-and-subtract of 1.5 *
// 2^23 does for |v| < 2^22), clamped to +-127 with a NaN going to -127. With one token per matmul
// in decode this ran on one thread while the other waited: the plain version took 3% of a 125m Q8_0
// decode step. Compiled with AVX-512 F, BW and VL and run only after dispatch.cc has checked the
// CPU.
#include <immintrin.h>

#include <cstdint>

// g++ 12 warns that the _mm512_undefined_* inside many AVX-512 intrinsics is used uninitialized
// (a false positive: the lanes are overwritten); it says nothing about this file's code.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include "engine/kernels/sets.h"

namespace tf::engine::kernels {
namespace {

// The 16 values of v times inv, rounded half to even and clamped to [-127, 127] (NaN: -127), as
// int32.
inline __m512i Quantize16(__m512 v, __m512 inv) {
  const __m512 rounded =
      _mm512_roundscale_ps(_mm512_mul_ps(v, inv), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  // max(a, b) gives b when a is NaN, as the plain Clamp gives its lower bound.
  const __m512 clamped =
      _mm512_min_ps(_mm512_max_ps(rounded, _mm512_set1_ps(-127.0f)), _mm512_set1_ps(127.0f));
  return _mm512_cvtps_epi32(clamped);
}

}  // namespace

void Avx512QuantizeActivations(const float* x, int64_t n, ActivationBlock* out) {
  for (int64_t b = 0; b < n / 32; ++b) {
    const __m512 lo = _mm512_loadu_ps(x + b * 32), hi = _mm512_loadu_ps(x + b * 32 + 16);
    // max(a, m) keeps m where a is NaN, as the plain MaxAbs skips NaNs.
    __m512 m = _mm512_max_ps(_mm512_abs_ps(lo), _mm512_setzero_ps());
    m = _mm512_max_ps(_mm512_abs_ps(hi), m);
    const float amax = _mm512_reduce_max_ps(m);
    const float d = amax / 127.0f;
    const float inv = d != 0 ? 127.0f / amax : 0.0f;
    const __m512 inv16 = _mm512_set1_ps(inv);
    const __m512i q_lo = Quantize16(lo, inv16), q_hi = Quantize16(hi, inv16);
    out[b].d = d;
    out[b].sum = _mm512_reduce_add_epi32(_mm512_add_epi32(q_lo, q_hi));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out[b].q), _mm512_cvtepi32_epi8(q_lo));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out[b].q + 16), _mm512_cvtepi32_epi8(q_hi));
  }
}

void Avx512QuantizeKActivations(const float* x, int64_t n, KActivationBlock* out) {
  for (int64_t b = 0; b < n / 256; ++b) {
    const float* v = x + b * 256;
    __m512 m = _mm512_setzero_ps();
    for (int64_t i = 0; i < 256; i += 16) {
      m = _mm512_max_ps(_mm512_abs_ps(_mm512_loadu_ps(v + i)), m);
    }
    const float amax = _mm512_reduce_max_ps(m);
    const float inv = amax != 0 ? 127.0f / amax : 0.0f;
    const __m512 inv16 = _mm512_set1_ps(inv);
    KActivationBlock& o = out[b];
    o.d = amax / 127.0f;
    for (int64_t j = 0; j < 16; ++j) {
      const __m512i q = Quantize16(_mm512_loadu_ps(v + 16 * j), inv16);
      o.sums[j] = static_cast<int16_t>(_mm512_reduce_add_epi32(q));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(o.q + 16 * j), _mm512_cvtepi32_epi8(q));
    }
  }
}

}  // namespace tf::engine::kernels
