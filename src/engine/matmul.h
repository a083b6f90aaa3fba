// y = x times a typed weight matrix transposed, on the kernels of one KernelSet, split by output
// rows over a thread pool: the one place that turns a WeightMatrix's type into a kernel call.
#pragma once

#include <cstdint>

#include "engine/kernels/kernels.h"
#include "engine/thread_pool.h"
#include "engine/weights.h"

namespace tf::engine {

// y: [n, w.rows] = x: [n, w.cols] times w transposed. For Q8_0 and Q4_0 weights each token's
// row of x is first quantised to 8-bit blocks (kernels::QuantizeActivations), once per call.
// Each output is computed by one thread in a fixed order, so results do not depend on the
// thread count or on n.
void MatMul(const kernels::KernelSet& k, ThreadPool& pool, const WeightMatrix& w, const float* x,
            float* y, int64_t n);

}  // namespace tf::engine
