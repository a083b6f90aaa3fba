// The kernel sets defined in the instruction-set-specific files, for dispatch.cc only. Their
// functions must run only on a CPU that has those instructions.
#pragma once

#include "engine/kernels/kernels.h"

namespace tf::engine::kernels {

extern const KernelSet
    kAvx2KernelSet;  // avx2.cc (typed matmuls: typed_avx2.cc), needs AVX2, FMA, F16C

// typed_reference.cc: the plain typed matmuls (see KernelSet).
void RefMatmulF16(const void* w, const float* x, float* y, int64_t n_tokens, int64_t n_in,
                  int64_t n_out, int64_t row_begin, int64_t row_end);
void RefMatmulBf16(const void* w, const float* x, float* y, int64_t n_tokens, int64_t n_in,
                   int64_t n_out, int64_t row_begin, int64_t row_end);
void RefMatmulQ8_0(const void* w, const ActivationBlock* x, float* y, int64_t n_tokens,
                   int64_t n_in, int64_t n_out, int64_t row_begin, int64_t row_end);
void RefMatmulQ4_0(const void* w, const ActivationBlock* x, float* y, int64_t n_tokens,
                   int64_t n_in, int64_t n_out, int64_t row_begin, int64_t row_end);
// kquant_reference.cc: KernelSet::matmul_kquant.
void RefMatmulKQuant(DType type, const void* w, const KActivationBlock* x, float* y,
                     int64_t n_tokens, int64_t n_in, int64_t n_out, int64_t row_begin,
                     int64_t row_end);

// typed_avx2.cc, needs AVX2, FMA and F16C: the same with vector code.
void Avx2MatmulF16(const void* w, const float* x, float* y, int64_t n_tokens, int64_t n_in,
                   int64_t n_out, int64_t row_begin, int64_t row_end);
void Avx2MatmulBf16(const void* w, const float* x, float* y, int64_t n_tokens, int64_t n_in,
                    int64_t n_out, int64_t row_begin, int64_t row_end);
void Avx2MatmulQ8_0(const void* w, const ActivationBlock* x, float* y, int64_t n_tokens,
                    int64_t n_in, int64_t n_out, int64_t row_begin, int64_t row_end);
void Avx2MatmulQ4_0(const void* w, const ActivationBlock* x, float* y, int64_t n_tokens,
                    int64_t n_in, int64_t n_out, int64_t row_begin, int64_t row_end);

// kquant_avx2.cc, needs AVX2, FMA and F16C: KernelSet::matmul_kquant.
void Avx2MatmulKQuant(DType type, const void* w, const KActivationBlock* x, float* y,
                      int64_t n_tokens, int64_t n_in, int64_t n_out, int64_t row_begin,
                      int64_t row_end);

// avx512.cc, needs AVX-512F (and AVX2 and FMA)
void Avx512MatmulRows(const float* w, const float* x, float* y, int64_t n_tokens, int64_t n_in,
                      int64_t n_out, int64_t row_begin, int64_t row_end);

// typed_avx512.cc: the 16-bit matmuls need AVX-512F, BW and VL (and F16C, FMA); the block
// ones AVX-512 VNNI and VL besides (and AVX2).
void Avx512MatmulF16(const void* w, const float* x, float* y, int64_t n_tokens, int64_t n_in,
                     int64_t n_out, int64_t row_begin, int64_t row_end);
void Avx512MatmulBf16(const void* w, const float* x, float* y, int64_t n_tokens, int64_t n_in,
                      int64_t n_out, int64_t row_begin, int64_t row_end);
void VnniMatmulQ8_0(const void* w, const ActivationBlock* x, float* y, int64_t n_tokens,
                    int64_t n_in, int64_t n_out, int64_t row_begin, int64_t row_end);
void VnniMatmulQ4_0(const void* w, const ActivationBlock* x, float* y, int64_t n_tokens,
                    int64_t n_in, int64_t n_out, int64_t row_begin, int64_t row_end);
// quantize_avx512.cc, needs AVX-512 F, BW and VL: QuantizeActivations, QuantizeKActivations.
void Avx512QuantizeActivations(const float* x, int64_t n, ActivationBlock* out);
void Avx512QuantizeKActivations(const float* x, int64_t n, KActivationBlock* out);
// packed_avx512.cc, needs AVX-512 F, BW, VL and VNNI (and F16C): the packed block matmuls.
void VnniMatmulQ8_0Packed(const void* w, const ActivationBlock* x, float* y, int64_t n_tokens,
                          int64_t n_in, int64_t n_out, int64_t row_begin, int64_t row_end);
void VnniMatmulQ4_0Packed(const void* w, const ActivationBlock* x, float* y, int64_t n_tokens,
                          int64_t n_in, int64_t n_out, int64_t row_begin, int64_t row_end);
// kquant_avx512.cc, needs AVX-512 F, BW, VL and VNNI (and F16C): KernelSet::matmul_kquant.
void VnniMatmulKQuant(DType type, const void* w, const KActivationBlock* x, float* y,
                      int64_t n_tokens, int64_t n_in, int64_t n_out, int64_t row_begin,
                      int64_t row_end);

}  // namespace tf::engine::kernels
