// The K-quant matmul (KernelSet::matmul_kquant) with AVX2, for CPUs without AVX-512 VNNI: the
// scheme of kquant_avx512.cc on 256-bit registers. Each super-block is unpacked once per tile of
// tokens into eight registers of 32 unsigned weights (one per 32 activations; q plus 4 for Q3_K,
// plus 32 for Q6_K) and eight registers of 16-bit sub-block scales; per token, vpmaddubsw
// multiplies weights by activations and sums pairs (no saturation: at most 2 * 63 * 127),
// vpmaddwd multiplies the pairs by their scales and sums them to 32 bits, and the activations'
// sums per 16 take off the mins and offsets. The integer sums per super-block are exact; they
// are scaled into float lanes and the lanes summed at the end of the row, so results differ
// from kquant_reference.cc's only in the order of the float additions. Compiled with AVX2, FMA
// and F16C and run only after dispatch.cc has checked the CPU; it includes no inline code shared
// with files compiled for other CPUs.
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "engine/kernels/kquant_loops.h"
#include "engine/kernels/sets.h"

namespace tf::engine::kernels {
namespace {

inline float HalfAt(const uint8_t* p) {
  return _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(p[0] | (p[1] << 8))));
}

inline float Hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

inline __m256i Load32(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }

// (v >> shift) & mask in each byte.
inline __m256i Bits(__m256i v, int shift, int mask) {
  return _mm256_and_si256(_mm256_srli_epi16(v, shift), _mm256_set1_epi8(static_cast<char>(mask)));
}

// One super-block unpacked.
struct Unpacked {
  __m256i q[8];       // weights 32p .. 32p + 31, unsigned
  __m256i scale[8];   // each 16-bit lane's sub-block scale
  __m256i per_group;  // per group of 16: mins (Q2_K, Q4_K, Q5_K) or -offset * scale
  float d, dmin;
};

// Sub-block scales (16-bit, 16 of 16 weights or 8 of 32) to each register's lanes: register p
// covers sub-blocks 2p and 2p + 1 (of 16: lanes 0-7 and 8-15) or sub-block p (of 32).
inline void SpreadScales(const int16_t* scales, bool sub16, Unpacked* u) {
#pragma GCC unroll 8
  for (int64_t p = 0; p < 8; ++p) {
    if (sub16) {
      u->scale[p] =
          _mm256_setr_m128i(_mm_set1_epi16(scales[2 * p]), _mm_set1_epi16(scales[2 * p + 1]));
    } else {
      u->scale[p] = _mm256_set1_epi16(scales[p]);
    }
  }
}

struct Q2K {
  static constexpr int64_t kBytes = 84;
  static constexpr bool kMins = true;
  static void Unpack(const uint8_t* block, Unpacked* u) {
    alignas(32) int16_t sc[16];
    const __m128i s = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block));
    const __m128i low = _mm_set1_epi8(0x0f);
    _mm256_store_si256(reinterpret_cast<__m256i*>(sc), _mm256_cvtepu8_epi16(_mm_and_si128(s, low)));
    u->per_group = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(s, 4), low));
    SpreadScales(sc, true, u);
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {  // weight 128h + 32s + l: bits 2s of qs[32h + l]
      const __m256i v = Load32(block + 16 + ptrdiff_t{32} * h);
      __m256i* q = u->q + ptrdiff_t{4} * h;
      q[0] = Bits(v, 0, 3);
      q[1] = Bits(v, 2, 3);
      q[2] = Bits(v, 4, 3);
      q[3] = Bits(v, 6, 3);
    }
    u->d = HalfAt(block + 80);
    u->dmin = HalfAt(block + 82);
  }
};

struct Q3K {
  static constexpr int64_t kBytes = 110;
  static constexpr bool kMins = false;
  static void Unpack(const uint8_t* block, Unpacked* u) {
    // 16 6-bit scales, stored + 32: low nibbles in bytes 96-103, high 2 bits in 104-107.
    const uint32_t a0 = Word(block + 96), a1 = Word(block + 100), t = Word(block + 104);
    const uint32_t m4 = 0x0f0f0f0f, m2 = 0x03030303;
    const __m128i stored =
        _mm_setr_epi32(static_cast<int>((a0 & m4) | ((t & m2) << 4)),
                       static_cast<int>((a1 & m4) | (((t >> 2) & m2) << 4)),
                       static_cast<int>(((a0 >> 4) & m4) | (((t >> 4) & m2) << 4)),
                       static_cast<int>(((a1 >> 4) & m4) | (((t >> 6) & m2) << 4)));
    const __m256i sc16 = _mm256_cvtepi8_epi16(_mm_sub_epi8(stored, _mm_set1_epi8(32)));
    alignas(32) int16_t sc[16];
    _mm256_store_si256(reinterpret_cast<__m256i*>(sc), sc16);
    SpreadScales(sc, true, u);
    u->per_group = _mm256_sub_epi16(_mm256_setzero_si256(), _mm256_slli_epi16(sc16, 2));
    const __m256i hmask = Load32(block);
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {  // weight 128h + 32s + l: bits 2s of qs[32h + l], bit 4h + s
      const __m256i v = Load32(block + 32 + ptrdiff_t{32} * h);
      __m256i* q = u->q + ptrdiff_t{4} * h;
#pragma GCC unroll 4
      for (int s = 0; s < 4; ++s) {
        const __m256i high = _mm256_slli_epi16(Bits(hmask, 4 * h + s, 1), 2);
        q[s] = _mm256_or_si256(Bits(v, 2 * s, 3), high);  // q + 4
      }
    }
    u->d = HalfAt(block + 108);
    u->dmin = 0;
  }
};

template <bool kFive>
struct Q45K {
  static constexpr int64_t kBytes = kFive ? 176 : 144;
  static constexpr bool kMins = true;
  static void Unpack(const uint8_t* block, Unpacked* u) {
    u->d = HalfAt(block);
    u->dmin = HalfAt(block + 2);
    // 8 6-bit scales and 8 6-bit mins in 12 bytes.
    const uint32_t w0 = Word(block + 4), w1 = Word(block + 8), w2 = Word(block + 12);
    const uint32_t m6 = 0x3f3f3f3f, m4 = 0x0f0f0f0f, top = 0x30303030;
    const __m128i bytes = _mm_setr_epi32(
        static_cast<int>(w0 & m6), static_cast<int>((w2 & m4) | ((w0 >> 2) & top)),
        static_cast<int>(w1 & m6), static_cast<int>(((w2 >> 4) & m4) | ((w1 >> 2) & top)));
    alignas(32) int16_t both[16];  // scales 0-7, mins 8-15
    _mm256_store_si256(reinterpret_cast<__m256i*>(both), _mm256_cvtepu8_epi16(bytes));
    SpreadScales(both, false, u);
    // Group g of 16 lies in sub-block g / 2.
    u->per_group = _mm256_setr_epi16(both[8], both[8], both[9], both[9], both[10], both[10],
                                     both[11], both[11], both[12], both[12], both[13], both[13],
                                     both[14], both[14], both[15], both[15]);
    const uint8_t* qs = block + (kFive ? 48 : 16);
    const __m256i qh = kFive ? Load32(block + 16) : _mm256_setzero_si256();
#pragma GCC unroll 4
    for (int h = 0; h < 4; ++h) {  // weights 64h + l: low nibble of qs[32h + l], + 32: high
      const __m256i v = Load32(qs + ptrdiff_t{32} * h);
      __m256i lo = Bits(v, 0, 0x0f), hi = Bits(v, 4, 0x0f);
      if constexpr (kFive) {  // bit 4: bit 2h (2h + 1) of qh[l]
        lo = _mm256_or_si256(lo, _mm256_slli_epi16(Bits(qh, 2 * h, 1), 4));
        hi = _mm256_or_si256(hi, _mm256_slli_epi16(Bits(qh, 2 * h + 1, 1), 4));
      }
      __m256i* q = u->q + ptrdiff_t{2} * h;
      q[0] = lo;
      q[1] = hi;
    }
  }
};

struct Q6K {
  static constexpr int64_t kBytes = 210;
  static constexpr bool kMins = false;
  static void Unpack(const uint8_t* block, Unpacked* u) {
    const __m256i sc16 =
        _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(block + 192)));
    alignas(32) int16_t sc[16];
    _mm256_store_si256(reinterpret_cast<__m256i*>(sc), sc16);
    SpreadScales(sc, true, u);
    u->per_group = _mm256_sub_epi16(_mm256_setzero_si256(), _mm256_slli_epi16(sc16, 5));
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {
      const __m256i l0 = Load32(block + ptrdiff_t{64} * h);        // ql[64h + l]
      const __m256i l1 = Load32(block + ptrdiff_t{64} * h + 32);   // ql[64h + 32 + l]
      const __m256i hq = Load32(block + 128 + ptrdiff_t{32} * h);  // qh[32h + l]
      auto six = [&](__m256i low4, int high_shift) {
        return _mm256_or_si256(low4, _mm256_slli_epi16(Bits(hq, high_shift, 3), 4));
      };
      __m256i* q = u->q + ptrdiff_t{4} * h;
      q[0] = six(Bits(l0, 0, 0x0f), 0);  // weights 128h + l
      q[1] = six(Bits(l1, 0, 0x0f), 2);  // + 32
      q[2] = six(Bits(l0, 4, 0x0f), 4);  // + 64
      q[3] = six(Bits(l1, 4, 0x0f), 6);  // + 96
    }
    u->d = HalfAt(block + 208);
    u->dmin = 0;
  }
};

// Row `r` by tokens [t0, t0 + T): each super-block unpacked once for the T tokens.
template <typename Type, int T>
void Tile(const uint8_t* row, const KActivationBlock* x, float* y, int64_t supers, int64_t n_out,
          int64_t r, int64_t t0) {
  __m256 sum[T], min_sum[T];
#pragma GCC unroll 4
  for (int t = 0; t < T; ++t) {
    sum[t] = _mm256_setzero_ps();
    min_sum[t] = _mm256_setzero_ps();
  }
  for (int64_t s = 0; s < supers; ++s) {
    Unpacked u;
    Type::Unpack(row + s * Type::kBytes, &u);
#pragma GCC unroll 4
    for (int t = 0; t < T; ++t) {
      const KActivationBlock& a = x[(t0 + t) * supers + s];
      __m256i acc0 = _mm256_setzero_si256(), acc1 = _mm256_setzero_si256();
#pragma GCC unroll 4
      for (int p = 0; p < 8; p += 2) {
        const int8_t* xq = a.q + ptrdiff_t{32} * p;
        acc0 = _mm256_add_epi32(
            acc0, _mm256_madd_epi16(_mm256_maddubs_epi16(u.q[p], Load32(xq)), u.scale[p]));
        acc1 = _mm256_add_epi32(
            acc1,
            _mm256_madd_epi16(_mm256_maddubs_epi16(u.q[p + 1], Load32(xq + 32)), u.scale[p + 1]));
      }
      __m256i acc = _mm256_add_epi32(acc0, acc1);
      const __m256i per_group = _mm256_madd_epi16(Load32(a.sums), u.per_group);
      if constexpr (Type::kMins) {
        min_sum[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(per_group), _mm256_set1_ps(u.dmin * a.d),
                                     min_sum[t]);
      } else {  // the offsets' products, -offset * scale * sums, added in
        acc = _mm256_add_epi32(acc, per_group);
      }
      sum[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(acc), _mm256_set1_ps(u.d * a.d), sum[t]);
    }
  }
#pragma GCC unroll 4
  for (int t = 0; t < T; ++t) y[(t0 + t) * n_out + r] = Hsum(sum[t]) - Hsum(min_sum[t]);
}

}  // namespace

void Avx2MatmulKQuant(DType type, const void* w, const KActivationBlock* x, float* y,
                      int64_t n_tokens, int64_t n_in, int64_t n_out, int64_t row_begin,
                      int64_t row_end) {
  const int64_t supers = n_in / 256;
  const auto* bytes = static_cast<const uint8_t*>(w);
  const bool known =
      ForKQuantType<Q2K, Q3K, Q45K<false>, Q45K<true>, Q6K>(type, [&]<typename Type>() {
        ForRowsAndTokenTiles<4>(n_tokens, row_begin, row_end, [&]<int T>(int64_t r, int64_t t0) {
          Tile<Type, T>(bytes + r * supers * Type::kBytes, x, y, supers, n_out, r, t0);
        });
      });
  if (!known) RefMatmulKQuant(type, w, x, y, n_tokens, n_in, n_out, row_begin, row_end);
}

}  // namespace tf::engine::kernels
