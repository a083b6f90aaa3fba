// Element types of weight tensors, and their conversion to float32.
//
// F32, F16 and BF16 are element types (safetensors names them). Q8_0 and Q4_0 are GGUF's block
// formats: each row is cut into blocks of kQuantBlock = 32 weights along the row, and a block is
//   Q8_0: { f16 d; int8 q[32]; }   (34 bytes)  weight i = d * q[i]
//   Q4_0: { f16 d; uint8 qs[16]; } (18 bytes)  weight j = d * ((qs[j] & 0x0F) - 8),
//                                              weight j + 16 = d * ((qs[j] >> 4) - 8), j < 16
// little-endian and packed (no padding, any alignment). quant.h quantises and dequantises them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace tf::engine {

enum class DType { kF32, kF16, kBF16, kQ8_0, kQ4_0 };

inline constexpr int64_t kQuantBlock = 32;  // weights per Q8_0 / Q4_0 block
inline constexpr size_t kQ8_0BlockBytes = 34;
inline constexpr size_t kQ4_0BlockBytes = 18;

// "F32", "F16", "BF16" (the names safetensors uses), "Q8_0", "Q4_0".
std::string_view DTypeName(DType dtype);
// The DType whose safetensors name is `name` (F32, F16, BF16), or nullopt for any other (I64,
// F8_E4M3, and the block formats, which safetensors files do not hold).
std::optional<DType> DTypeFromName(std::string_view name);
// Bytes per element of an element type (F32, F16, BF16); 0 for the block formats.
size_t DTypeSize(DType dtype);
bool IsBlockType(DType dtype);
// Bytes of a row of `cols` weights; for the block formats cols must be a multiple of kQuantBlock.
size_t RowBytes(DType dtype, int64_t cols);

float Bf16ToF32(uint16_t bits);
float F16ToF32(uint16_t bits);
// float32 -> IEEE half, rounding to nearest even; overflow gives infinity, NaN stays NaN.
uint16_t F32ToF16(float f);

// Converts n little-endian elements of an element type (F32, F16, BF16) at src (any alignment)
// to float32 at dst. (Block formats: DequantizeRow in quant.h.)
void ConvertToF32(DType dtype, const void* src, size_t n, float* dst);

}  // namespace tf::engine
