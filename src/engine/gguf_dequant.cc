#include "engine/gguf_dequant.h"

#include "engine/dtype.h"

namespace tf::engine {
namespace {

constexpr size_t kBlock = 32;

float Scale(const uint8_t* p) { return F16ToF32(static_cast<uint16_t>(p[0] | (p[1] << 8))); }

}  // namespace

size_t GgufRowBytes(GgmlType type, size_t n) {
  switch (type) {
    case GgmlType::kF32:
      return n * 4;
    case GgmlType::kF16:
    case GgmlType::kBF16:
      return n * 2;
    case GgmlType::kQ8_0:
      return n / kBlock * 34;
    case GgmlType::kQ4_0:
      return n / kBlock * 18;
  }
  return 0;
}

void DequantizeGguf(GgmlType type, const uint8_t* src, size_t n, float* dst) {
  switch (type) {
    case GgmlType::kF32:
      ConvertToF32(DType::kF32, src, n, dst);
      return;
    case GgmlType::kF16:
      ConvertToF32(DType::kF16, src, n, dst);
      return;
    case GgmlType::kBF16:
      ConvertToF32(DType::kBF16, src, n, dst);
      return;
    case GgmlType::kQ8_0:
      for (size_t b = 0; b < n / kBlock; ++b, src += 34, dst += kBlock) {
        float d = Scale(src);
        for (size_t j = 0; j < kBlock; ++j)
          dst[j] = d * static_cast<float>(static_cast<int8_t>(src[2 + j]));
      }
      return;
    case GgmlType::kQ4_0:
      for (size_t b = 0; b < n / kBlock; ++b, src += 18, dst += kBlock) {
        float d = Scale(src);
        for (size_t j = 0; j < kBlock / 2; ++j) {
          dst[j] = d * static_cast<float>((src[2 + j] & 0x0f) - 8);
          dst[j + kBlock / 2] = d * static_cast<float>((src[2 + j] >> 4) - 8);
        }
      }
      return;
  }
}

}  // namespace tf::engine
