// The engine's CPU kernels. Each exists as a plain reference version (reference.cc) and, where
// the CPU has the instructions, vectorised ones (avx2.cc: AVX2+FMA; avx512.cc: AVX-512F), chosen
// once at run time. tests/engine_kernels_test.cc checks every vectorised kernel against the
// reference on random data.
//
// All matrices are row-major float32. Shapes are written beside the pointers. Kernels never
// allocate and never fail; callers check sizes.
#pragma once

#include <cstdint>

namespace tf::engine::kernels {

struct KernelSet {
  const char* name;  // "reference", "avx2", "avx512"

  // y[t, r] = dot(w[r, :], x[t, :]) for rows r in [row_begin, row_end) and every token t.
  // w: [n_out, n_in], x: [n_tokens, n_in], y: [n_tokens, n_out].
  void (*matmul_rows)(const float* w, const float* x, float* y, int64_t n_tokens, int64_t n_in,
                      int64_t n_out, int64_t row_begin, int64_t row_end);

  // y[i] = x[i] / sqrt(mean(x^2) + eps) * weight[i]. x, weight, y: [n]; y may alias x.
  void (*rms_norm)(const float* x, const float* weight, float* y, int64_t n, float eps);

  // Rotary embedding of one head in place, in the "rotate half" layout: element i pairs with
  // i + half. x: [2 * half], cos, sin: [half] for this position.
  void (*rope)(float* x, const float* cos, const float* sin, int64_t half);

  // SwiGLU: out[i] = silu(gate[i]) * up[i]. All [n]; out may alias gate or up.
  void (*silu_mul)(const float* gate, const float* up, float* out, int64_t n);

  // In place: x = exp(x - max(x)) / sum(...). x: [n], n >= 1.
  void (*softmax)(float* x, int64_t n);

  // Causal attention of one query head over n_ctx cached positions:
  //   out = softmax(scale * q . k[j]) weighted sum of v[j].
  // q: [head_dim]; k, v: [n_ctx, stride] (the head's vectors at the start of each row);
  // scratch: [n_ctx]; out: [head_dim].
  void (*attention_head)(const float* q, const float* k, const float* v, int64_t n_ctx,
                         int64_t stride, int64_t head_dim, float scale, float* scratch, float* out);

  // The index of the largest element (the first one on ties). x: [n], n >= 1.
  int64_t (*argmax)(const float* x, int64_t n);
};

// The plain scalar versions: the definition of what each kernel computes.
const KernelSet& ReferenceKernels();
// AVX2+FMA versions, or null where the CPU lacks them.
const KernelSet* Avx2Kernels();
// AVX-512F versions (AVX2 for the kernels without a wider version), or null.
const KernelSet* Avx512Kernels();
// The best set this CPU supports; TENSORFLEET_KERNELS=reference|avx2|avx512 forces one (if the
// CPU supports it).
const KernelSet& BestKernels();

}  // namespace tf::engine::kernels
