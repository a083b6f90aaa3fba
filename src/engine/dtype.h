// Element types of checkpoint tensors, and their conversion to float32.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace tf::engine {

enum class DType { kF32, kF16, kBF16 };

// "F32", "F16", "BF16": the names safetensors uses.
std::string_view DTypeName(DType dtype);
// The DType whose safetensors name is `name`, or nullopt for any other (I64, F8_E4M3, ...).
std::optional<DType> DTypeFromName(std::string_view name);
size_t DTypeSize(DType dtype);

float Bf16ToF32(uint16_t bits);
float F16ToF32(uint16_t bits);

// Converts n little-endian elements of `dtype` at src (any alignment) to float32 at dst.
void ConvertToF32(DType dtype, const void* src, size_t n, float* dst);

}  // namespace tf::engine
