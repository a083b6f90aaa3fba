#include "engine/dtype.h"

#include <cstring>

namespace tf::engine {

std::string_view DTypeName(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return "F32";
    case DType::kF16:
      return "F16";
    case DType::kBF16:
      return "BF16";
  }
  return "?";
}

std::optional<DType> DTypeFromName(std::string_view name) {
  if (name == "F32") return DType::kF32;
  if (name == "F16") return DType::kF16;
  if (name == "BF16") return DType::kBF16;
  return std::nullopt;
}

size_t DTypeSize(DType dtype) { return dtype == DType::kF32 ? 4 : 2; }

float Bf16ToF32(uint16_t bits) {
  uint32_t u = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

float F16ToF32(uint16_t bits) {
  uint32_t sign = static_cast<uint32_t>(bits & 0x8000) << 16;
  uint32_t exponent = (bits >> 10) & 0x1f;
  uint32_t mantissa = bits & 0x3ff;
  uint32_t u;
  if (exponent == 0x1f) {  // infinity or NaN
    u = sign | 0x7f800000 | (mantissa << 13);
  } else if (exponent != 0) {  // normal
    u = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {  // signed zero
    u = sign;
  } else {  // subnormal: shift the mantissa up until it is normal
    exponent = 113;
    while ((mantissa & 0x400) == 0) {
      mantissa <<= 1;
      --exponent;
    }
    u = sign | (exponent << 23) | ((mantissa & 0x3ff) << 13);
  }
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

void ConvertToF32(DType dtype, const void* src, size_t n, float* dst) {
  const auto* bytes = static_cast<const uint8_t*>(src);
  switch (dtype) {
    case DType::kF32:
      std::memcpy(dst, src, n * sizeof(float));
      return;
    case DType::kF16:
      for (size_t i = 0; i < n; ++i) dst[i] = F16ToF32(bytes[2 * i] | (bytes[2 * i + 1] << 8));
      return;
    case DType::kBF16:
      for (size_t i = 0; i < n; ++i) dst[i] = Bf16ToF32(bytes[2 * i] | (bytes[2 * i + 1] << 8));
      return;
  }
}

}  // namespace tf::engine
