// Q8_0 and Q4_0 weight matrices repacked for the packed block matmuls (KernelSet's
// matmul_q8_0_packed and matmul_q4_0_packed): 16 rows side by side, so that one 512-bit VNNI
// dot product (vpdpbusd) takes four weights of each of 16 rows against the same four
// activations, and after a block's 8 (Q8_0) such steps each lane holds one row's exact integer
// dot product with the block. No horizontal sums: a block's 16 sums are scaled and accumulated
// in one multiply-add.
//
// Layout: rows in groups of kPackRows (the last group padded with zero rows), group after
// group; a group of a matrix with B = n_in / 32 blocks per row is
//
//   scales:  [B][16] f16, the rows' block scales d (padded with zeros to a multiple of 64 bytes)
//   weights: [B][chunks][16 rows][4 bytes]
//     Q8_0: 8 chunks; chunk k holds each row's q[4k .. 4k+3] + 128 (as unsigned bytes)
//     Q4_0: 4 chunks; chunk k holds each row's qs[4k .. 4k+3]: low nibbles are weights
//           4k .. 4k+3, high nibbles weights 16+4k .. 16+4k+3, each 0..15 (w + 8)
//
// so the weights are unsigned, offset by 128 (Q8_0) or 8 (Q4_0), as vpdpbusd wants its first
// operand; the activations stay signed and each activation block carries the sum of its q,
// which takes the offset back out: sum_i (w_i + c) x_i - c * sum_i x_i, exactly, in integers.
//
// Every output y[t, r] of the packed matmuls is, in this order,
//   acc = 0; for each block b: acc = fma(float(dot_b), d_w[r, b] * d_x[t, b], acc)
// with dot_b the exact integer dot product of the block, d_w * d_x rounded to float and fma
// rounding once: the same whatever the number of tokens, the row range or the instruction set,
// so a vectorised packed matmul equals RefMatmulQ8_0Packed bit for bit.
#pragma once

#include <cstdint>

#include "engine/kernels/kernels.h"

namespace tf::engine::kernels {

inline constexpr int64_t kPackRows = 16;

// Bytes of one group of 16 rows of n_in weights (n_in a multiple of 32).
int64_t PackedQ8_0GroupBytes(int64_t n_in);
int64_t PackedQ4_0GroupBytes(int64_t n_in);
// Bytes of the first group's scales; its weights follow.
int64_t PackedScaleBytes(int64_t n_in);

// Bytes of a whole matrix of `rows` rows repacked: ceil(rows / 16) groups.
inline int64_t PackedQ8_0Bytes(int64_t rows, int64_t n_in) {
  return (rows + kPackRows - 1) / kPackRows * PackedQ8_0GroupBytes(n_in);
}
inline int64_t PackedQ4_0Bytes(int64_t rows, int64_t n_in) {
  return (rows + kPackRows - 1) / kPackRows * PackedQ4_0GroupBytes(n_in);
}

// Writes groups [group_begin, group_end) of the repacked matrix to out (which holds the whole
// matrix, PackedQ8_0Bytes / PackedQ4_0Bytes) from src: [rows, n_in / 32] GGUF blocks, any
// alignment. Rows past `rows` in the last group are zero.
void PackQ8_0(const void* src, int64_t rows, int64_t n_in, int64_t group_begin, int64_t group_end,
              uint8_t* out);
void PackQ4_0(const void* src, int64_t rows, int64_t n_in, int64_t group_begin, int64_t group_end,
              uint8_t* out);

// The inverse of PackQ8_0 / PackQ4_0: rows [row_begin, row_end) of a repacked matrix back to
// GGUF blocks, [row_end - row_begin, n_in / 32], the bytes they were packed from.
void UnpackQ8_0Rows(const void* packed, int64_t n_in, int64_t row_begin, int64_t row_end,
                    uint8_t* out);
void UnpackQ4_0Rows(const void* packed, int64_t n_in, int64_t row_begin, int64_t row_end,
                    uint8_t* out);

// The packed matmuls in plain code: their definition (see above). w: a repacked matrix of
// n_out rows; x: [n_tokens, n_in / 32] (QuantizeActivations); y: [n_tokens, n_out]; rows
// [row_begin, row_end) only.
void RefMatmulQ8_0Packed(const void* w, const ActivationBlock* x, float* y, int64_t n_tokens,
                         int64_t n_in, int64_t n_out, int64_t row_begin, int64_t row_end);
void RefMatmulQ4_0Packed(const void* w, const ActivationBlock* x, float* y, int64_t n_tokens,
                         int64_t n_in, int64_t n_out, int64_t row_begin, int64_t row_end);

}  // namespace tf::engine::kernels
