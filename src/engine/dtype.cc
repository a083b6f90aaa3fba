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
    case DType::kQ8_0:
      return "Q8_0";
    case DType::kQ4_0:
      return "Q4_0";
    case DType::kQ2_K:
      return "Q2_K";
    case DType::kQ3_K:
      return "Q3_K";
    case DType::kQ4_K:
      return "Q4_K";
    case DType::kQ5_K:
      return "Q5_K";
    case DType::kQ6_K:
      return "Q6_K";
  }
  return "?";
}

std::optional<DType> DTypeFromName(std::string_view name) {
  if (name == "F32") return DType::kF32;
  if (name == "F16") return DType::kF16;
  if (name == "BF16") return DType::kBF16;
  return std::nullopt;
}

size_t DTypeSize(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return 4;
    case DType::kF16:
    case DType::kBF16:
      return 2;
    default:
      return 0;
  }
}

bool IsBlockType(DType dtype) { return BlockWeights(dtype) > 1; }

bool IsKQuant(DType dtype) { return BlockWeights(dtype) == kSuperBlock; }

int64_t BlockWeights(DType dtype) {
  switch (dtype) {
    case DType::kF32:
    case DType::kF16:
    case DType::kBF16:
      return 1;
    case DType::kQ8_0:
    case DType::kQ4_0:
      return kQuantBlock;
    case DType::kQ2_K:
    case DType::kQ3_K:
    case DType::kQ4_K:
    case DType::kQ5_K:
    case DType::kQ6_K:
      return kSuperBlock;
  }
  return 1;
}

size_t BlockBytes(DType dtype) {
  switch (dtype) {
    case DType::kQ8_0:
      return kQ8_0BlockBytes;
    case DType::kQ4_0:
      return kQ4_0BlockBytes;
    case DType::kQ2_K:
      return kQ2_KBlockBytes;
    case DType::kQ3_K:
      return kQ3_KBlockBytes;
    case DType::kQ4_K:
      return kQ4_KBlockBytes;
    case DType::kQ5_K:
      return kQ5_KBlockBytes;
    case DType::kQ6_K:
      return kQ6_KBlockBytes;
    default:
      return DTypeSize(dtype);
  }
}

size_t RowBytes(DType dtype, int64_t cols) {
  return static_cast<size_t>(cols / BlockWeights(dtype)) * BlockBytes(dtype);
}

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

uint16_t F32ToF16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  const uint32_t sign = (u >> 16) & 0x8000;
  const uint32_t abs = u & 0x7fffffff;
  if (abs > 0x7f800000) return static_cast<uint16_t>(sign | 0x7e00);   // NaN
  if (abs >= 0x477ff000) return static_cast<uint16_t>(sign | 0x7c00);  // rounds past 65504
  if (abs < 0x38800000) {  // below the smallest normal half (2^-14): a subnormal or zero
    // The value in units of 2^-24, rounded to nearest even.
    if (abs < 0x33000000) return static_cast<uint16_t>(sign);  // under half of 2^-24
    const uint32_t exponent = abs >> 23;
    const uint32_t mantissa = (abs & 0x7fffff) | 0x800000;
    const uint32_t shift = 126 - exponent;  // 14..24 for exponents 102..112
    uint32_t half = mantissa >> shift;
    const uint32_t rest = mantissa & ((1u << shift) - 1), midpoint = 1u << (shift - 1);
    if (rest > midpoint || (rest == midpoint && (half & 1))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = ((abs >> 13) - (112u << 10));  // rebias the exponent, keep 10 mantissa bits
  const uint32_t rest = abs & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (half & 1))) ++half;  // may carry into the exponent
  return static_cast<uint16_t>(sign | half);
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
    default:
      return;  // not element types; callers use DequantizeRow
  }
}

}  // namespace tf::engine
