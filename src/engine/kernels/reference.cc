// Plain scalar kernels: the reference every vectorised version is tested against.
#include <cmath>

#include "engine/kernels/sets.h"

namespace tf::engine::kernels {
namespace {

void MatmulRows(const float* w, const float* x, float* y, int64_t n_tokens, int64_t n_in,
                int64_t n_out, int64_t row_begin, int64_t row_end) {
  for (int64_t t = 0; t < n_tokens; ++t) {
    for (int64_t r = row_begin; r < row_end; ++r) {
      float sum = 0;
      for (int64_t i = 0; i < n_in; ++i) sum += w[r * n_in + i] * x[t * n_in + i];
      y[t * n_out + r] = sum;
    }
  }
}

void RmsNorm(const float* x, const float* weight, float* y, int64_t n, float eps) {
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += double{x[i]} * x[i];
  float inv = 1.0f / std::sqrt(static_cast<float>(sum / n) + eps);
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] * inv * weight[i];
}

void Rope(float* x, const float* cos, const float* sin, int64_t half) {
  for (int64_t i = 0; i < half; ++i) {
    float a = x[i], b = x[i + half];
    x[i] = a * cos[i] - b * sin[i];
    x[i + half] = b * cos[i] + a * sin[i];
  }
}

void SiluMul(const float* gate, const float* up, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    float g = gate[i];
    out[i] = g / (1.0f + std::exp(-g)) * up[i];
  }
}

void Softmax(float* x, int64_t n) {
  float max = x[0];
  for (int64_t i = 1; i < n; ++i) max = std::fmax(max, x[i]);
  float sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    x[i] = std::exp(x[i] - max);
    sum += x[i];
  }
  for (int64_t i = 0; i < n; ++i) x[i] /= sum;
}

void AttentionHead(const float* q, const float* k, const float* v, const int32_t* block_table,
                   int64_t block_size, int64_t n_ctx, int64_t stride, int64_t head_dim, float scale,
                   float* scratch, float* out) {
  auto row = [&](int64_t j) {  // position j's row in the blocks
    return (int64_t{block_table[j / block_size]} * block_size + j % block_size) * stride;
  };
  for (int64_t j = 0; j < n_ctx; ++j) {
    float dot = 0;
    for (int64_t d = 0; d < head_dim; ++d) dot += q[d] * k[row(j) + d];
    scratch[j] = dot * scale;
  }
  Softmax(scratch, n_ctx);
  for (int64_t d = 0; d < head_dim; ++d) out[d] = 0;
  for (int64_t j = 0; j < n_ctx; ++j) {
    for (int64_t d = 0; d < head_dim; ++d) out[d] += scratch[j] * v[row(j) + d];
  }
}

int64_t Argmax(const float* x, int64_t n) {
  int64_t best = 0;
  for (int64_t i = 1; i < n; ++i) {
    if (x[i] > x[best]) best = i;
  }
  return best;
}

}  // namespace

const KernelSet& ReferenceKernels() {
  static const KernelSet kSet = {
      "reference",     MatmulRows,          RmsNorm, Rope,         SiluMul,
      Softmax,         AttentionHead,       Argmax,  RefMatmulF16, RefMatmulBf16,
      RefMatmulQ8_0,   RefMatmulQ4_0,       nullptr, nullptr,      QuantizeActivations,
      RefMatmulKQuant, QuantizeKActivations};
  return kSet;
}

}  // namespace tf::engine::kernels
