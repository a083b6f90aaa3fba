// y = x times a typed weight matrix transposed, on the kernels of one KernelSet, split by output
// rows over a thread pool: the one place that turns a WeightMatrix's type into a kernel call.
#pragma once

#include <cstdint>
#include <span>

#include "engine/kernels/kernels.h"
#include "engine/thread_pool.h"
#include "engine/weights.h"

namespace tf::engine {

// y: [n, w.rows] = x: [n, w.cols] times w transposed. For Q8_0 and Q4_0 weights each token's
// row of x is first quantised to 8-bit blocks (k.quantize_activations), for the K-quants to
// 8-bit super-blocks (k.quantize_k_activations), once per call.
// Each output is computed by one thread in a fixed order, so results do not depend on the
// thread count or on n.
void MatMul(const kernels::KernelSet& k, ThreadPool& pool, const WeightMatrix& w, const float* x,
            float* y, int64_t n);

// One matrix of a MatMuls call and where its product goes: y: [n, w->rows].
struct MatMulPart {
  const WeightMatrix* w;
  float* y;
};

// MatMul for several matrices over the same activations (the q, k and v projections; gate and
// up) in one pass over the pool: their rows are split between the threads as if they were one
// matrix, and x is quantised once for all block-format parts. Every part must have x's width,
// `n_in` columns (types may differ). Each output equals what MatMul gives it.
void MatMuls(const kernels::KernelSet& k, ThreadPool& pool, std::span<const MatMulPart> parts,
             const float* x, int64_t n, int64_t n_in);

}  // namespace tf::engine
