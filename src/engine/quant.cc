#include "engine/quant.h"

#include <cmath>
#include <cstring>

#include "engine/kquant_blocks.h"

namespace tf::engine {
namespace {

uint16_t LoadU16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }

void StoreU16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v & 0xff);
  p[1] = static_cast<uint8_t>(v >> 8);
}

}  // namespace

void QuantizeRowQ8_0(const float* x, int64_t n, void* out) {
  auto* block = static_cast<uint8_t*>(out);
  for (int64_t b = 0; b < n / kQuantBlock; ++b, block += kQ8_0BlockBytes) {
    const float* v = x + b * kQuantBlock;
    const float amax = MaxAbs(v, kQuantBlock);
    const uint16_t d_bits = F32ToF16(amax / 127.0f);
    const float d = F16ToF32(d_bits);
    const float inv = d != 0 ? 1.0f / d : 0.0f;
    StoreU16(block, d_bits);
    for (int64_t i = 0; i < kQuantBlock; ++i) {
      // d was rounded to f16, so x / d may pass 127 by a hair: clamp.
      float q = Clamp(RoundHalfEven(v[i] * inv), -127.0f, 127.0f);
      block[2 + i] = static_cast<uint8_t>(static_cast<int8_t>(q));
    }
  }
}

void QuantizeRowQ4_0(const float* x, int64_t n, void* out) {
  auto* block = static_cast<uint8_t*>(out);
  for (int64_t b = 0; b < n / kQuantBlock; ++b, block += kQ4_0BlockBytes) {
    const float* v = x + b * kQuantBlock;
    float m = 0;  // the value of largest magnitude, with its sign
    for (int64_t i = 0; i < kQuantBlock; ++i) {
      if (std::fabs(v[i]) > std::fabs(m)) m = v[i];
    }
    const uint16_t d_bits = F32ToF16(m / -8.0f);
    const float d = F16ToF32(d_bits);
    const float inv = d != 0 ? 1.0f / d : 0.0f;
    StoreU16(block, d_bits);
    auto q = [&](int64_t i) {
      return static_cast<uint8_t>(Clamp(RoundHalfEven(v[i] * inv) + 8.0f, 0.0f, 15.0f));
    };
    for (int64_t j = 0; j < kQuantBlock / 2; ++j) {
      block[2 + j] = static_cast<uint8_t>(q(j) | (q(j + kQuantBlock / 2) << 4));
    }
  }
}

void QuantizeRow(DType dtype, const float* x, int64_t n, void* out) {
  if (dtype == DType::kQ4_0) {
    QuantizeRowQ4_0(x, n, out);
  } else {
    QuantizeRowQ8_0(x, n, out);
  }
}

void DequantizeRow(DType dtype, const void* row, int64_t n, float* out) {
  const auto* block = static_cast<const uint8_t*>(row);
  switch (dtype) {
    case DType::kF32:
    case DType::kF16:
    case DType::kBF16:
      ConvertToF32(dtype, row, static_cast<size_t>(n), out);
      return;
    case DType::kQ8_0:
      for (int64_t b = 0; b < n / kQuantBlock; ++b, block += kQ8_0BlockBytes) {
        const float d = F16ToF32(LoadU16(block));
        for (int64_t i = 0; i < kQuantBlock; ++i) {
          out[b * kQuantBlock + i] = d * static_cast<float>(static_cast<int8_t>(block[2 + i]));
        }
      }
      return;
    case DType::kQ4_0:
      for (int64_t b = 0; b < n / kQuantBlock; ++b, block += kQ4_0BlockBytes) {
        const float d = F16ToF32(LoadU16(block));
        float* o = out + b * kQuantBlock;
        for (int64_t j = 0; j < kQuantBlock / 2; ++j) {
          o[j] = d * static_cast<float>((block[2 + j] & 0x0f) - 8);
          o[j + kQuantBlock / 2] = d * static_cast<float>((block[2 + j] >> 4) - 8);
        }
      }
      return;
    case DType::kQ2_K:
    case DType::kQ3_K:
    case DType::kQ4_K:
    case DType::kQ5_K:
    case DType::kQ6_K: {
      // As ggml computes it: (d * sc) * q - dmin * m, each product rounded to float.
      KSuperBlock sb;
      const size_t bytes = BlockBytes(dtype);
      for (int64_t b = 0; b < n / kSuperBlock; ++b, block += bytes) {
        UnpackKQuant(dtype, block, &sb);
        float* o = out + b * kSuperBlock;
        for (int i = 0; i < kSuperBlock; ++i) {
          const int j = i / sb.sub;
          const float scale = sb.d * static_cast<float>(sb.sc[j]);
          o[i] = scale * static_cast<float>(sb.q[i]);
          if (KQuantHasMins(dtype)) o[i] -= sb.dmin * static_cast<float>(sb.m[j]);
        }
      }
      return;
    }
  }
}

}  // namespace tf::engine
