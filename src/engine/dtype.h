// Element types of weight tensors, and their conversion to float32.
//
// F32, F16 and BF16 are element types (safetensors names them). Q8_0 and Q4_0 are GGUF's block
// formats: each row is cut into blocks of kQuantBlock = 32 weights along the row, and a block is
//   Q8_0: { f16 d; int8 q[32]; }   (34 bytes)  weight i = d * q[i]
//   Q4_0: { f16 d; uint8 qs[16]; } (18 bytes)  weight j = d * ((qs[j] & 0x0F) - 8),
//                                              weight j + 16 = d * ((qs[j] >> 4) - 8), j < 16
// little-endian and packed (no padding, any alignment). quant.h quantises and dequantises them.
//
// Q2_K .. Q6_K are GGUF's "K-quants": a row is cut into super-blocks of kSuperBlock = 256 weights,
// each with an f16 scale d (and for Q2_K, Q4_K, Q5_K an f16 dmin), and sub-blocks of 16 or 32
// weights with small integer scales (and mins) of their own. Weight i of a sub-block j is
//   Q2_K (84 bytes):  d * sc[j] * q - dmin * m[j]   16 sub-blocks of 16, q in 0..3
//   Q3_K (110 bytes): d * sc[j] * q                 16 of 16, sc in -32..31, q in -4..3
//   Q4_K (144 bytes): d * sc[j] * q - dmin * m[j]   8 of 32, sc and m 6 bits, q in 0..15
//   Q5_K (176 bytes): d * sc[j] * q - dmin * m[j]   8 of 32, sc and m 6 bits, q in 0..31
//   Q6_K (210 bytes): d * sc[j] * q                 16 of 16, sc int8, q in -32..31
// The bit layouts (how q, sc and m are packed) are in kquant_blocks.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace tf::engine {

enum class DType { kF32, kF16, kBF16, kQ8_0, kQ4_0, kQ2_K, kQ3_K, kQ4_K, kQ5_K, kQ6_K };

inline constexpr int64_t kQuantBlock = 32;  // weights per Q8_0 / Q4_0 block
inline constexpr size_t kQ8_0BlockBytes = 34;
inline constexpr size_t kQ4_0BlockBytes = 18;
inline constexpr int64_t kSuperBlock = 256;  // weights per K-quant super-block
inline constexpr size_t kQ2_KBlockBytes = 84;
inline constexpr size_t kQ3_KBlockBytes = 110;
inline constexpr size_t kQ4_KBlockBytes = 144;
inline constexpr size_t kQ5_KBlockBytes = 176;
inline constexpr size_t kQ6_KBlockBytes = 210;

// "F32", "F16", "BF16" (the names safetensors uses), "Q8_0", "Q4_0", "Q2_K", ..., "Q6_K".
std::string_view DTypeName(DType dtype);
// The DType whose safetensors name is `name` (F32, F16, BF16), or nullopt for any other (I64,
// F8_E4M3, and the block formats, which safetensors files do not hold).
std::optional<DType> DTypeFromName(std::string_view name);
// Bytes per element of an element type (F32, F16, BF16); 0 for the block formats.
size_t DTypeSize(DType dtype);
bool IsBlockType(DType dtype);
// Whether dtype is one of the K-quants (Q2_K .. Q6_K).
bool IsKQuant(DType dtype);
// Weights per block: 1 for the element types, kQuantBlock for Q8_0 and Q4_0, kSuperBlock for
// the K-quants. A row's length must be a multiple of it.
int64_t BlockWeights(DType dtype);
// Bytes per block (per element for the element types).
size_t BlockBytes(DType dtype);
// Bytes of a row of `cols` weights; cols must be a multiple of BlockWeights(dtype).
size_t RowBytes(DType dtype, int64_t cols);

float Bf16ToF32(uint16_t bits);
float F16ToF32(uint16_t bits);
// float32 -> IEEE half, rounding to nearest even; overflow gives infinity, NaN stays NaN.
uint16_t F32ToF16(float f);

// Converts n little-endian elements of an element type (F32, F16, BF16) at src (any alignment)
// to float32 at dst. (Block formats: DequantizeRow in quant.h.)
void ConvertToF32(DType dtype, const void* src, size_t n, float* dst);

}  // namespace tf::engine
