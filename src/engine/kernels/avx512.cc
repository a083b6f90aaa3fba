// AVX-512F matrix multiply, the kernel where the wider registers pay. Compiled with -mavx512f and
// run only after dispatch.cc has checked the CPU; like avx2.cc it uses no inline library code.
#include <immintrin.h>

#include <cstdint>

#include "engine/kernels/sets.h"
#include "engine/kernels/typed_tiles.h"

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

// A tile of R weight rows against T token rows, each weight vector loaded once for the T
// tokens. Every output y[t, r] has its own accumulator and sees the same operations in the
// same order (16-wide fused multiply-adds over i, the masked tail, the lane sum), so its value
// does not depend on the tile, on how many tokens are in the batch, or on the row range.
template <int R, int T>
void Tile(const float* w, const float* x, float* y, int64_t n_in, int64_t n_out) {
  __m512 acc[R][T];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) acc[r][t] = _mm512_setzero_ps();
  }
  int64_t i = 0;
  for (; i + 16 <= n_in; i += 16) {
    __m512 wv[R];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) wv[r] = _mm512_loadu_ps(w + r * n_in + i);
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) {
      __m512 xv = _mm512_loadu_ps(x + t * n_in + i);
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) acc[r][t] = _mm512_fmadd_ps(wv[r], xv, acc[r][t]);
    }
  }
  if (i < n_in) {  // the tail, masked
    __mmask16 mask = static_cast<__mmask16>((1u << (n_in - i)) - 1);
    __m512 wv[R];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) wv[r] = _mm512_maskz_loadu_ps(mask, w + r * n_in + i);
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) {
      __m512 xv = _mm512_maskz_loadu_ps(mask, x + t * n_in + i);
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) acc[r][t] = _mm512_fmadd_ps(wv[r], xv, acc[r][t]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) y[t * n_out + r] = Hsum(acc[r][t]);
  }
}

// Rows [row_begin, row_end), R at a time, against every token (ForRows in typed_tiles.h).
template <int R>
void Rows(const float* w, const float* x, float* y, int64_t n_tokens, int64_t n_in, int64_t n_out,
          int64_t row_begin, int64_t row_end) {
  ForRows<R>(n_tokens, row_begin, row_end, [&]<int RB, int T>(int64_t r0, int64_t t0) {
    Tile<RB, T>(w + r0 * n_in, x + t0 * n_in, y + t0 * n_out + r0, n_in, n_out);
  });
}

}  // namespace

// One or two tokens (decode): eight rows per tile, eight independent chains of multiply-adds.
// More: four rows by four tokens (16 accumulators of the 32 registers).
void Avx512MatmulRows(const float* w, const float* x, float* y, int64_t n_tokens, int64_t n_in,
                      int64_t n_out, int64_t row_begin, int64_t row_end) {
  if (n_tokens <= 2) {
    Rows<8>(w, x, y, n_tokens, n_in, n_out, row_begin, row_end);
  } else {
    Rows<4>(w, x, y, n_tokens, n_in, n_out, row_begin, row_end);
  }
}

}  // namespace tf::engine::kernels
