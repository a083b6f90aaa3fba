// The kernel sets defined in the instruction-set-specific files, for dispatch.cc only. Their
// functions must run only on a CPU that has those instructions.
#pragma once

#include "engine/kernels/kernels.h"

namespace tf::engine::kernels {

extern const KernelSet kAvx2KernelSet;  // avx2.cc, needs AVX2 and FMA

// avx512.cc, needs AVX-512F (and AVX2 and FMA)
void Avx512MatmulRows(const float* w, const float* x, float* y, int64_t n_tokens, int64_t n_in,
                      int64_t n_out, int64_t row_begin, int64_t row_end);

}  // namespace tf::engine::kernels
