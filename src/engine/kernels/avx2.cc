// AVX2+FMA kernels. This file is compiled with -mavx2 -mfma and its functions run only after
// dispatch.cc has checked the CPU; it uses no inline code from library headers, so nothing
// compiled here for AVX2 can be picked by the linker for use elsewhere.
#include <immintrin.h>

#include <cstdint>

#include "engine/kernels/sets.h"

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

// Four tokens against one weight row: the row is loaded once for all four.
void Dot4(const float* w, const float* x, int64_t n_in, float out[4]) {
  const float* x0 = x;
  const float* x1 = x + n_in;
  const float* x2 = x + 2 * n_in;
  const float* x3 = x + 3 * n_in;
  __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
  __m256 a2 = _mm256_setzero_ps(), a3 = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 8 <= n_in; i += 8) {
    __m256 wv = _mm256_loadu_ps(w + i);
    a0 = _mm256_fmadd_ps(wv, _mm256_loadu_ps(x0 + i), a0);
    a1 = _mm256_fmadd_ps(wv, _mm256_loadu_ps(x1 + i), a1);
    a2 = _mm256_fmadd_ps(wv, _mm256_loadu_ps(x2 + i), a2);
    a3 = _mm256_fmadd_ps(wv, _mm256_loadu_ps(x3 + i), a3);
  }
  out[0] = Hsum(a0);
  out[1] = Hsum(a1);
  out[2] = Hsum(a2);
  out[3] = Hsum(a3);
  for (; i < n_in; ++i) {
    out[0] += w[i] * x0[i];
    out[1] += w[i] * x1[i];
    out[2] += w[i] * x2[i];
    out[3] += w[i] * x3[i];
  }
}

void MatmulRows(const float* w, const float* x, float* y, int64_t n_tokens, int64_t n_in,
                int64_t n_out, int64_t row_begin, int64_t row_end) {
  int64_t t = 0;
  for (; t + 4 <= n_tokens; t += 4) {
    for (int64_t r = row_begin; r < row_end; ++r) {
      float out[4];
      Dot4(w + r * n_in, x + t * n_in, n_in, out);
      for (int k = 0; k < 4; ++k) y[(t + k) * n_out + r] = out[k];
    }
  }
  for (; t < n_tokens; ++t) {
    for (int64_t r = row_begin; r < row_end; ++r) {
      y[t * n_out + r] = Dot(w + r * n_in, x + t * n_in, n_in);
    }
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

void AttentionHead(const float* q, const float* k, const float* v, int64_t n_ctx, int64_t stride,
                   int64_t head_dim, float scale, float* scratch, float* out) {
  for (int64_t j = 0; j < n_ctx; ++j) scratch[j] = Dot(q, k + j * stride, head_dim) * scale;
  Softmax(scratch, n_ctx);
  int64_t d = 0;
  for (; d + 8 <= head_dim; d += 8) {
    __m256 acc = _mm256_setzero_ps();
    for (int64_t j = 0; j < n_ctx; ++j) {
      acc = _mm256_fmadd_ps(_mm256_set1_ps(scratch[j]), _mm256_loadu_ps(v + j * stride + d), acc);
    }
    _mm256_storeu_ps(out + d, acc);
  }
  for (; d < head_dim; ++d) {
    float acc = 0;
    for (int64_t j = 0; j < n_ctx; ++j) acc += scratch[j] * v[j * stride + d];
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

const KernelSet kAvx2KernelSet = {"avx2",  MatmulRows, RmsNorm,       Rope,
                                  SiluMul, Softmax,    AttentionHead, Argmax};

}  // namespace tf::engine::kernels
