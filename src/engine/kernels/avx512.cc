// AVX-512F matrix multiply, the kernel where the wider registers pay. Compiled with -mavx512f and
// run only after dispatch.cc has checked the CPU; like avx2.cc it uses no inline library code.
#include <immintrin.h>

#include <cstdint>

#include "engine/kernels/sets.h"

namespace tf::engine::kernels {
namespace {

// The sum of the 16 lanes. (_mm512_reduce_add_ps trips a false -Wmaybe-uninitialized in g++ 12.)
inline float Hsum(__m512 v) {
  __m256 lo = _mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(0xff, _mm512_castps_pd(v), 0));
  __m256 hi = _mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(0xff, _mm512_castps_pd(v), 1));
  __m256 s8 = _mm256_add_ps(lo, hi);
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(s8), _mm256_extractf128_ps(s8, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// One weight row against `count` (1 to 4) token rows; the row is loaded once for all of them.
void DotRow(const float* w, const float* x, int64_t n_in, int count, float* out) {
  __m512 acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(),
                   _mm512_setzero_ps()};
  int64_t i = 0;
  for (; i + 16 <= n_in; i += 16) {
    __m512 wv = _mm512_loadu_ps(w + i);
    for (int k = 0; k < count; ++k) {
      acc[k] = _mm512_fmadd_ps(wv, _mm512_loadu_ps(x + k * n_in + i), acc[k]);
    }
  }
  if (i < n_in) {  // the tail, masked
    __mmask16 mask = static_cast<__mmask16>((1u << (n_in - i)) - 1);
    __m512 wv = _mm512_maskz_loadu_ps(mask, w + i);
    for (int k = 0; k < count; ++k) {
      acc[k] = _mm512_fmadd_ps(wv, _mm512_maskz_loadu_ps(mask, x + k * n_in + i), acc[k]);
    }
  }
  for (int k = 0; k < count; ++k) out[k] = Hsum(acc[k]);
}

}  // namespace

void Avx512MatmulRows(const float* w, const float* x, float* y, int64_t n_tokens, int64_t n_in,
                      int64_t n_out, int64_t row_begin, int64_t row_end) {
  for (int64_t t = 0; t < n_tokens; t += 4) {
    int count = n_tokens - t < 4 ? static_cast<int>(n_tokens - t) : 4;
    for (int64_t r = row_begin; r < row_end; ++r) {
      float out[4];
      DotRow(w + r * n_in, x + t * n_in, n_in, count, out);
      for (int k = 0; k < count; ++k) y[(t + k) * n_out + r] = out[k];
    }
  }
}

}  // namespace tf::engine::kernels
