// The bit layouts of GGUF's K-quant super-blocks (dtype.h gives their formulas), read into one
// plain form that the dequantiser (quant.cc) and the reference matmuls (kernels/
// kquant_reference.cc) share, and that the vectorised kernels are tested against.
//
// Every super-block holds 256 weights. Its fields, little-endian, in this order:
//   Q2_K: uint8 scales[16]  sub-block j's scale in bits 0-3, its min in bits 4-7
//         uint8 qs[64]      2-bit q: weight 128h + 32s + l is bits 2s..2s+1 of qs[32h + l]
//         f16 d, dmin
//   Q3_K: uint8 hmask[32]   bit s of hmask[l] is the high bit of weight 32s + l (set: q as read,
//                           clear: q - 4)
//         uint8 qs[64]      low 2 bits of q, laid out as Q2_K's
//         uint8 scales[12]  16 6-bit scales, stored + 32: scale j's low 4 bits are the low
//                           (j < 8) or high (j >= 8) nibble of scales[j % 8], its high 2 bits are
//                           bits 2(j / 4).. of scales[8 + j % 4]
//         f16 d
//   Q4_K: f16 d, dmin
//         uint8 scales[12]  8 6-bit scales and 8 6-bit mins: for j < 4 scale j = scales[j] & 63,
//                           min j = scales[j + 4] & 63; for j >= 4 their low 4 bits are the
//                           low / high nibble of scales[j + 4] and their high 2 bits the top
//                           bits of scales[j - 4] / scales[j]
//         uint8 qs[128]     4-bit q: weight 64h + l is the low nibble of qs[32h + l], weight
//                           64h + 32 + l its high nibble
//   Q5_K: f16 d, dmin; uint8 scales[12] as Q4_K's
//         uint8 qh[32]      bit 2h of qh[l] is bit 4 of weight 64h + l, bit 2h + 1 of weight
//                           64h + 32 + l
//         uint8 qs[128]     the low 4 bits, as Q4_K's
//   Q6_K: uint8 ql[128]     low 4 bits: weight 128h + l and 128h + 64 + l are the low and high
//                           nibble of ql[64h + l], weights 128h + 32 + l and 128h + 96 + l of
//                           ql[64h + 32 + l] (l < 32)
//         uint8 qh[64]      high 2 bits: bits 0-1, 2-3, 4-5, 6-7 of qh[32h + l] for weights
//                           128h + l, + 32 + l, + 64 + l, + 96 + l
//         int8 scales[16]; f16 d         q is the 6-bit value minus 32
#pragma once

#include <cstdint>
#include <cstring>

#include "engine/dtype.h"

namespace tf::engine {

// One super-block in plain form: weight i is d * sc[j] * q[i] - dmin * m[j], j = i / sub.
struct KSuperBlock {
  float d = 0;
  float dmin = 0;  // 0 for Q3_K and Q6_K, which have no mins
  int sub = 16;    // weights per sub-block: 16 (Q2_K, Q3_K, Q6_K) or 32 (Q4_K, Q5_K)
  int8_t q[256];   // Q2_K 0..3, Q3_K -4..3, Q4_K 0..15, Q5_K 0..31, Q6_K -32..31
  int8_t sc[16];   // the first 256 / sub are used
  uint8_t m[16];   // likewise; all 0 for the types without mins
};

// Whether the K-quant `type` subtracts a min per sub-block (Q2_K, Q4_K, Q5_K).
inline bool KQuantHasMins(DType type) {
  return type == DType::kQ2_K || type == DType::kQ4_K || type == DType::kQ5_K;
}

namespace kquant_internal {

inline float LoadHalf(const uint8_t* p) {
  return F16ToF32(static_cast<uint16_t>(p[0] | (p[1] << 8)));
}

// Q4_K's and Q5_K's 12 bytes of 6-bit scales and mins.
inline void ScalesAndMins(const uint8_t* s, int8_t* sc, uint8_t* m) {
  for (int j = 0; j < 8; ++j) {
    if (j < 4) {
      sc[j] = static_cast<int8_t>(s[j] & 63);
      m[j] = static_cast<uint8_t>(s[j + 4] & 63);
    } else {
      sc[j] = static_cast<int8_t>((s[j + 4] & 0x0f) | ((s[j - 4] >> 6) << 4));
      m[j] = static_cast<uint8_t>((s[j + 4] >> 4) | ((s[j] >> 6) << 4));
    }
  }
}

// Q2_K's and Q3_K's 2-bit layout.
inline int TwoBits(const uint8_t* qs, int i) {
  const int h = i / 128, s = (i % 128) / 32, l = i % 32;
  return (qs[32 * h + l] >> (2 * s)) & 3;
}

}  // namespace kquant_internal

// Reads the super-block of K-quant `type` at `block` (BlockBytes(type) bytes, any alignment).
inline void UnpackKQuant(DType type, const uint8_t* block, KSuperBlock* out) {
  using namespace kquant_internal;
  std::memset(out->sc, 0, sizeof out->sc);
  std::memset(out->m, 0, sizeof out->m);
  out->dmin = 0;
  switch (type) {
    case DType::kQ2_K: {
      out->sub = 16;
      for (int j = 0; j < 16; ++j) {
        out->sc[j] = static_cast<int8_t>(block[j] & 0x0f);
        out->m[j] = static_cast<uint8_t>(block[j] >> 4);
      }
      for (int i = 0; i < 256; ++i) out->q[i] = static_cast<int8_t>(TwoBits(block + 16, i));
      out->d = LoadHalf(block + 80);
      out->dmin = LoadHalf(block + 82);
      return;
    }
    case DType::kQ3_K: {
      out->sub = 16;
      const uint8_t* hmask = block;
      const uint8_t* qs = block + 32;
      const uint8_t* s = block + 96;
      for (int j = 0; j < 16; ++j) {
        const int low = j < 8 ? (s[j] & 0x0f) : (s[j - 8] >> 4);
        const int high = (s[8 + j % 4] >> (2 * (j / 4))) & 3;
        out->sc[j] = static_cast<int8_t>((low | (high << 4)) - 32);
      }
      for (int i = 0; i < 256; ++i) {
        const bool high = (hmask[i % 32] >> (i / 32)) & 1;
        out->q[i] = static_cast<int8_t>(TwoBits(qs, i) - (high ? 0 : 4));
      }
      out->d = LoadHalf(block + 108);
      return;
    }
    case DType::kQ4_K:
    case DType::kQ5_K: {
      out->sub = 32;
      out->d = LoadHalf(block);
      out->dmin = LoadHalf(block + 2);
      ScalesAndMins(block + 4, out->sc, out->m);
      const bool five = type == DType::kQ5_K;
      const uint8_t* qh = block + 16;
      const uint8_t* qs = block + (five ? 48 : 16);
      for (int h = 0; h < 4; ++h) {
        for (int l = 0; l < 32; ++l) {
          int lo = qs[32 * h + l] & 0x0f, hi = qs[32 * h + l] >> 4;
          if (five) {
            lo |= ((qh[l] >> (2 * h)) & 1) << 4;
            hi |= ((qh[l] >> (2 * h + 1)) & 1) << 4;
          }
          out->q[64 * h + l] = static_cast<int8_t>(lo);
          out->q[64 * h + 32 + l] = static_cast<int8_t>(hi);
        }
      }
      return;
    }
    case DType::kQ6_K: {
      out->sub = 16;
      const uint8_t* ql = block;
      const uint8_t* qh = block + 128;
      for (int j = 0; j < 16; ++j) out->sc[j] = static_cast<int8_t>(block[192 + j]);
      for (int h = 0; h < 2; ++h) {
        for (int l = 0; l < 32; ++l) {
          const uint8_t* lo = ql + 64 * h;
          const int high = qh[32 * h + l];
          const int v0 = (lo[l] & 0x0f) | ((high & 3) << 4);
          const int v1 = (lo[32 + l] & 0x0f) | (((high >> 2) & 3) << 4);
          const int v2 = (lo[l] >> 4) | (((high >> 4) & 3) << 4);
          const int v3 = (lo[32 + l] >> 4) | (((high >> 6) & 3) << 4);
          int8_t* q = out->q + 128 * h;
          q[l] = static_cast<int8_t>(v0 - 32);
          q[32 + l] = static_cast<int8_t>(v1 - 32);
          q[64 + l] = static_cast<int8_t>(v2 - 32);
          q[96 + l] = static_cast<int8_t>(v3 - 32);
        }
      }
      out->d = LoadHalf(block + 208);
      return;
    }
    default:
      return;
  }
}

}  // namespace tf::engine
