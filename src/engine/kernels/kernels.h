// The engine's CPU kernels. Each exists as a plain reference version (reference.cc) and, where
// the CPU has the instructions, vectorised ones (avx2.cc: AVX2+FMA; avx512.cc: AVX-512F), chosen
// once at run time. tests/engine_kernels_test.cc checks every vectorised kernel against the
// reference on random data.
//
// Matrices are row-major; activations are float32, weights float32 or one of the types of
// dtype.h (typed_reference.cc, typed_avx2.cc). Shapes are written beside the pointers. Kernels
// never allocate and never fail; callers check sizes.
#pragma once

#include <cstdint>

#include "engine/dtype.h"

namespace tf::engine::kernels {

// One block of 32 activations quantised to 8 bits for the Q8_0 / Q4_0 matmuls: x[i] ~ d * q[i],
// |q[i]| <= 127 (QuantizeActivations); sum is the sum of the q[i] (what the packed matmuls
// subtract their weights' offset with, packed_blocks.h).
struct ActivationBlock {
  float d;
  int32_t sum;
  int8_t q[32];
};

// Quantises n activations (n a multiple of 32) to n / 32 blocks: d = max|x| / 127, q[i] =
// round(x[i] * (127 / max|x|)), ties to even, clamped to +-127, and their sum. x: [n], out:
// [n / 32]. The plain definition; every kernel set's quantize_activations gives the same
// blocks bit for bit, so all of them see the same activations.
void QuantizeActivations(const float* x, int64_t n, ActivationBlock* out);

// 256 activations quantised to 8 bits for the K-quant matmuls, one scale for the whole
// super-block (as llama.cpp's Q8_K): x[i] ~ d * q[i], |q[i]| <= 127, and sums[j] the sum of
// q[16j .. 16j + 16) (what the matmuls subtract mins and offsets with).
struct KActivationBlock {
  float d;
  int16_t sums[16];
  int8_t q[256];
};

// As QuantizeActivations, per 256: d = max|x| / 127, q[i] = round(x[i] * (127 / max|x|)), ties
// to even, clamped to +-127. x: [n], n a multiple of 256; out: [n / 256].
void QuantizeKActivations(const float* x, int64_t n, KActivationBlock* out);

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

  // Causal attention of one query head over the first n_ctx positions of a sequence whose keys
  // and values are kept in blocks of block_size positions (the paged KV cache): position j is
  // row j % block_size of block block_table[j / block_size].
  //   out = sum over j of softmax_j(scale * q . k[j]) * v[j].
  // q: [head_dim]; k, v: [num_blocks, block_size, stride], the head's vectors at the start of
  // each row; block_table: [ceil(n_ctx / block_size)]; scratch: [n_ctx]; out: [head_dim].
  // Positions are visited in order, so the result does not depend on where the blocks lie.
  void (*attention_head)(const float* q, const float* k, const float* v, const int32_t* block_table,
                         int64_t block_size, int64_t n_ctx, int64_t stride, int64_t head_dim,
                         float scale, float* scratch, float* out);

  // The index of the largest element (the first one on ties). x: [n], n >= 1.
  int64_t (*argmax)(const float* x, int64_t n);

  // matmul_rows for 16-bit weights, read in place: w: [n_out, n_in] IEEE half (matmul_f16) or
  // bfloat16 (matmul_bf16), little-endian, any alignment; x: [n_tokens, n_in] float32;
  // y: [n_tokens, n_out]. Each y[t, r] is computed in the same order whatever n_tokens and the
  // row range are.
  void (*matmul_f16)(const void* w, const float* x, float* y, int64_t n_tokens, int64_t n_in,
                     int64_t n_out, int64_t row_begin, int64_t row_end);
  void (*matmul_bf16)(const void* w, const float* x, float* y, int64_t n_tokens, int64_t n_in,
                      int64_t n_out, int64_t row_begin, int64_t row_end);

  // matmul_rows for block-format weights against quantised activations: w: [n_out, n_in / 32]
  // Q8_0 or Q4_0 blocks (dtype.h; any alignment), x: [n_tokens, n_in / 32] (QuantizeActivations
  // of each token's row), y: [n_tokens, n_out] float32 with
  //   y[t, r] = sum over blocks b of d_w[r, b] * x[t, b].d * sum_i q_w[r, b, i] * x[t, b].q[i].
  // n_in is a multiple of 32. Order as for matmul_f16.
  void (*matmul_q8_0)(const void* w, const ActivationBlock* x, float* y, int64_t n_tokens,
                      int64_t n_in, int64_t n_out, int64_t row_begin, int64_t row_end);
  void (*matmul_q4_0)(const void* w, const ActivationBlock* x, float* y, int64_t n_tokens,
                      int64_t n_in, int64_t n_out, int64_t row_begin, int64_t row_end);

  // The same products over weights repacked 16 rows side by side (packed_blocks.h: PackQ8_0,
  // PackQ4_0), in that file's order per output, equal to RefMatmulQ8_0Packed bit for bit; null
  // where the set has none (then Model keeps its block matrices as they are). w: the repacked
  // matrix of n_out rows; other arguments as matmul_q8_0.
  void (*matmul_q8_0_packed)(const void* w, const ActivationBlock* x, float* y, int64_t n_tokens,
                             int64_t n_in, int64_t n_out, int64_t row_begin, int64_t row_end);
  void (*matmul_q4_0_packed)(const void* w, const ActivationBlock* x, float* y, int64_t n_tokens,
                             int64_t n_in, int64_t n_out, int64_t row_begin, int64_t row_end);

  // QuantizeActivations, equal to it bit for bit (what the block matmuls' callers run first).
  void (*quantize_activations)(const float* x, int64_t n, ActivationBlock* out);

  // matmul_q8_0 for the K-quants (dtype.h, kquant_blocks.h): w: [n_out, n_in / 256]
  // super-blocks of `type` (Q2_K .. Q6_K; any alignment), x: [n_tokens, n_in / 256]
  // (QuantizeKActivations of each token's row), n_in a multiple of 256. Over each super-block,
  // in order, with its d, dmin and sub-blocks j:
  //   y[t, r] += x.d * (d * sum_j sc[j] * sum_{i in j} q[i] * x.q[i]
  //                     - dmin * sum_j m[j] * sum_{i in j} x.q[i])
  // (the sums exact in 32-bit integers, then converted to float). Vectorised versions may add
  // the floats in another order; each y[t, r] is computed in the same order whatever n_tokens
  // and the row range are.
  void (*matmul_kquant)(DType type, const void* w, const KActivationBlock* x, float* y,
                        int64_t n_tokens, int64_t n_in, int64_t n_out, int64_t row_begin,
                        int64_t row_end);

  // QuantizeKActivations, equal to it bit for bit.
  void (*quantize_k_activations)(const float* x, int64_t n, KActivationBlock* out);
};

// The plain scalar versions: the definition of what each kernel computes.
const KernelSet& ReferenceKernels();
// AVX2+FMA (+F16C) versions, or null where the CPU lacks them.
const KernelSet* Avx2Kernels();
// AVX-512 versions (AVX2 for the kernels without a wider version or where the CPU lacks
// AVX-512 BW/VL or VNNI for the typed matmuls), or null.
const KernelSet* Avx512Kernels();
// The best set this CPU supports; TENSORFLEET_KERNELS=reference|avx2|avx512 forces one (if the
// CPU supports it).
const KernelSet& BestKernels();

}  // namespace tf::engine::kernels
