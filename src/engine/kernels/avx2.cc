// AVX2+FMA kernels. This file is compiled with -mavx2 -mfma and its functions run only after
// dispatch.cc has checked the CPU; it uses no inline code from library headers, so nothing
// compiled here for AVX2 can be picked by the linker for use elsewhere.
#include <immintrin.h>

#include <cstdint>

#include "engine/kernels/sets.h"
#include "engine/kernels/typed_tiles.h"

namespace tf::engine::kernels {
namespace {

inline float Hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// exp(x) for each lane: range reduction to r in [-ln2/2, ln2/2], a degree-6 polynomial, then
// scaling by 2^n through the exponent bits. Relative error about 2e-7.
inline __m256 Exp(__m256 x) {
  x = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(-87.3f)), _mm256_set1_ps(88.3f));
  __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                             _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 p = _mm256_set1_ps(1.9875691500e-4f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
  p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
  __m256i e =
      _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(p, _mm256_castsi256_ps(e));
}

float ExpScalar(float x) {
  float in[8] = {x, 0, 0, 0, 0, 0, 0, 0};
  float out[8];
  _mm256_storeu_ps(out, Exp(_mm256_loadu_ps(in)));
  return out[0];
}

float Dot(const float* a, const float* b, int64_t n) {
  __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), acc0);
    acc1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), acc1);
  }
  for (; i + 8 <= n; i += 8) {
    acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), acc0);
  }
  float sum = Hsum(_mm256_add_ps(acc0, acc1));
  for (; i < n; ++i) sum += a[i] * b[i];
  return sum;
}

// A tile of R weight rows against T token rows: each weight vector is loaded once for the T
// tokens and each token vector once for the R rows. Every output y[t, r] has its own
// accumulator and sees the same operations in the same order (8-wide fused multiply-adds over
// i, the lane sum, then the tail one element at a time), so its value does not depend on the
// tile, on how many tokens are in the batch, or on the row range a thread got.
template <int R, int T>
void Tile(const float* w, const float* x, float* y, int64_t n_in, int64_t n_out) {
  __m256 acc[R][T];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) acc[r][t] = _mm256_setzero_ps();
  }
  int64_t i = 0;
  for (; i + 8 <= n_in; i += 8) {
    __m256 wv[R];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) wv[r] = _mm256_loadu_ps(w + r * n_in + i);
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) {
      __m256 xv = _mm256_loadu_ps(x + t * n_in + i);
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) acc[r][t] = _mm256_fmadd_ps(wv[r], xv, acc[r][t]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) {
      float sum = Hsum(acc[r][t]);
      for (int64_t j = i; j < n_in; ++j)
        sum = __builtin_fmaf(w[r * n_in + j], x[t * n_in + j], sum);
      y[t * n_out + r] = sum;
    }
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

// One or two tokens (decode): four rows per tile, for four independent chains of
// multiply-adds. More tokens: three rows by four tokens, whose 12 accumulators, 3 weight
// vectors and a token vector fill the 16 registers.
void MatmulRows(const float* w, const float* x, float* y, int64_t n_tokens, int64_t n_in,
                int64_t n_out, int64_t row_begin, int64_t row_end) {
  if (n_tokens <= 2) {
    Rows<4>(w, x, y, n_tokens, n_in, n_out, row_begin, row_end);
  } else {
    Rows<3>(w, x, y, n_tokens, n_in, n_out, row_begin, row_end);
  }
}

void RmsNorm(const float* x, const float* weight, float* y, int64_t n, float eps) {
  __m256 acc = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 v = _mm256_loadu_ps(x + i);
    acc = _mm256_fmadd_ps(v, v, acc);
  }
  float sum = Hsum(acc);
  for (; i < n; ++i) sum += x[i] * x[i];
  float inv = 1.0f / __builtin_sqrtf(sum / static_cast<float>(n) + eps);
  __m256 inv_v = _mm256_set1_ps(inv);
  for (i = 0; i + 8 <= n; i += 8) {
    __m256 v = _mm256_mul_ps(_mm256_loadu_ps(x + i), inv_v);
    _mm256_storeu_ps(y + i, _mm256_mul_ps(v, _mm256_loadu_ps(weight + i)));
  }
  for (; i < n; ++i) y[i] = x[i] * inv * weight[i];
}

void Rope(float* x, const float* cos, const float* sin, int64_t half) {
  int64_t i = 0;
  for (; i + 8 <= half; i += 8) {
    __m256 a = _mm256_loadu_ps(x + i), b = _mm256_loadu_ps(x + half + i);
    __m256 c = _mm256_loadu_ps(cos + i), s = _mm256_loadu_ps(sin + i);
    _mm256_storeu_ps(x + i, _mm256_fmsub_ps(a, c, _mm256_mul_ps(b, s)));
    _mm256_storeu_ps(x + half + i, _mm256_fmadd_ps(b, c, _mm256_mul_ps(a, s)));
  }
  for (; i < half; ++i) {
    float a = x[i], b = x[i + half];
    x[i] = a * cos[i] - b * sin[i];
    x[i + half] = b * cos[i] + a * sin[i];
  }
}

void SiluMul(const float* gate, const float* up, float* out, int64_t n) {
  const __m256 one = _mm256_set1_ps(1.0f);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 g = _mm256_loadu_ps(gate + i);
    __m256 e = Exp(_mm256_sub_ps(_mm256_setzero_ps(), g));
    __m256 silu = _mm256_div_ps(g, _mm256_add_ps(one, e));
    _mm256_storeu_ps(out + i, _mm256_mul_ps(silu, _mm256_loadu_ps(up + i)));
  }
  for (; i < n; ++i) out[i] = gate[i] / (1.0f + ExpScalar(-gate[i])) * up[i];
}

void Softmax(float* x, int64_t n) {
  float max = x[0];
  int64_t i = 0;
  if (n >= 8) {
    __m256 m = _mm256_loadu_ps(x);
    for (i = 8; i + 8 <= n; i += 8) m = _mm256_max_ps(m, _mm256_loadu_ps(x + i));
    float lanes[8];
    _mm256_storeu_ps(lanes, m);
    for (float v : lanes) max = v > max ? v : max;
  }
  for (; i < n; ++i) max = x[i] > max ? x[i] : max;
  __m256 max_v = _mm256_set1_ps(max), sum_v = _mm256_setzero_ps();
  for (i = 0; i + 8 <= n; i += 8) {
    __m256 e = Exp(_mm256_sub_ps(_mm256_loadu_ps(x + i), max_v));
    _mm256_storeu_ps(x + i, e);
    sum_v = _mm256_add_ps(sum_v, e);
  }
  float sum = Hsum(sum_v);
  for (; i < n; ++i) {
    x[i] = ExpScalar(x[i] - max);
    sum += x[i];
  }
  __m256 inv = _mm256_set1_ps(1.0f / sum);
  for (i = 0; i + 8 <= n; i += 8)
    _mm256_storeu_ps(x + i, _mm256_mul_ps(_mm256_loadu_ps(x + i), inv));
  for (; i < n; ++i) x[i] *= 1.0f / sum;
}

void AttentionHead(const float* q, const float* k, const float* v, const int32_t* block_table,
                   int64_t block_size, int64_t n_ctx, int64_t stride, int64_t head_dim, float scale,
                   float* scratch, float* out) {
  const int64_t n_blocks = (n_ctx + block_size - 1) / block_size;
  for (int64_t b = 0; b < n_blocks; ++b) {
    const float* kb = k + int64_t{block_table[b]} * block_size * stride;
    const int64_t rows = n_ctx - b * block_size < block_size ? n_ctx - b * block_size : block_size;
    for (int64_t r = 0; r < rows; ++r) {
      scratch[b * block_size + r] = Dot(q, kb + r * stride, head_dim) * scale;
    }
  }
  Softmax(scratch, n_ctx);
  int64_t d = 0;
  for (; d + 8 <= head_dim; d += 8) {
    __m256 acc = _mm256_setzero_ps();
    for (int64_t b = 0; b < n_blocks; ++b) {
      const float* vb = v + int64_t{block_table[b]} * block_size * stride + d;
      const float* s = scratch + b * block_size;
      const int64_t rows =
          n_ctx - b * block_size < block_size ? n_ctx - b * block_size : block_size;
      for (int64_t r = 0; r < rows; ++r) {
        acc = _mm256_fmadd_ps(_mm256_set1_ps(s[r]), _mm256_loadu_ps(vb + r * stride), acc);
      }
    }
    _mm256_storeu_ps(out + d, acc);
  }
  for (; d < head_dim; ++d) {
    float acc = 0;
    for (int64_t j = 0; j < n_ctx; ++j) {
      const int64_t row = int64_t{block_table[j / block_size]} * block_size + j % block_size;
      acc = __builtin_fmaf(scratch[j], v[row * stride + d], acc);
    }
    out[d] = acc;
  }
}

int64_t Argmax(const float* x, int64_t n) {
  float max = x[0];
  int64_t i = 0;
  if (n >= 8) {
    __m256 m = _mm256_loadu_ps(x);
    for (i = 8; i + 8 <= n; i += 8) m = _mm256_max_ps(m, _mm256_loadu_ps(x + i));
    float lanes[8];
    _mm256_storeu_ps(lanes, m);
    for (float v : lanes) max = v > max ? v : max;
  }
  for (; i < n; ++i) max = x[i] > max ? x[i] : max;
  for (i = 0; i < n; ++i) {
    if (x[i] == max) return i;
  }
  return 0;  // only when x holds NaN
}

}  // namespace

const KernelSet kAvx2KernelSet = {
    "avx2",           MatmulRows,          RmsNorm, Rope,          SiluMul,
    Softmax,          AttentionHead,       Argmax,  Avx2MatmulF16, Avx2MatmulBf16,
    Avx2MatmulQ8_0,   Avx2MatmulQ4_0,      nullptr, nullptr,       QuantizeActivations,
    Avx2MatmulKQuant, QuantizeKActivations};

}  // namespace tf::engine::kernels
