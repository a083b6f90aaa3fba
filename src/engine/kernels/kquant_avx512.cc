// The K-quant matmul (KernelSet::matmul_kquant) with AVX-512 BW and VNNI. Each super-block is
// unpacked once into four registers of 64 unsigned weights in the activations' order (q + an
// offset for Q3_K and Q6_K, whose weights are signed), and its sub-block scales into 16-bit
// lanes; then for each token of a tile vpmaddubsw multiplies weights by activations and sums
// pairs (at most 2 * 63 * 127: no saturation), vpdpwssd multiplies those pairs by their
// sub-block's scale and accumulates in 32 bits, and the activations' sums per 16
// (KActivationBlock) take off the offsets and the mins. The integer sums per super-block are
// exact; they are scaled and added as floats lane by lane (16 lanes of products, 8 of mins) and
// the lanes summed at the end of the row, so results differ from kquant_reference.cc's only in
// the order of the float additions. Compiled with AVX-512 F, BW, VL and VNNI (and F16C) and run
// only after dispatch.cc has checked the CPU; it includes no inline code shared with files
// compiled for other CPUs.
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

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

// 32 bytes in both halves of a 512-bit register.
inline __m512i Twice(const void* p) { return _mm512_broadcast_i64x4(Load32(p)); }

// A 16-bit lane vector: `lo` in lanes 0-15, `hi` in lanes 16-31.
inline __m512i Halves16(int lo, int hi) {
  return _mm512_inserti64x4(_mm512_set1_epi16(static_cast<int16_t>(lo)),
                            _mm256_set1_epi16(static_cast<int16_t>(hi)), 1);
}

// (v >> shift) & mask in each byte, shift per half (the low 32 bytes by `lo`, the high by `hi`).
inline __m512i Bits(__m512i v, int lo, int hi, int mask) {
  return _mm512_and_si512(_mm512_srlv_epi16(v, Halves16(lo, hi)),
                          _mm512_set1_epi8(static_cast<char>(mask)));
}

// 16-bit lane indices for vpermw: in a register of 64 weights (32 lanes of pairs), sub-blocks of
// 16 weights span 8 lanes and of 32 weights 16 lanes. Register p covers sub-blocks 4p..4p+3 (of
// 16) or 2p, 2p + 1 (of 32).
struct ScaleIndices {
  alignas(64) int16_t sub16[4][32];
  alignas(64) int16_t sub32[4][32];
  constexpr ScaleIndices() : sub16{}, sub32{} {
    for (int p = 0; p < 4; ++p) {
      for (int i = 0; i < 32; ++i) {
        sub16[p][i] = static_cast<int16_t>(4 * p + i / 8);
        sub32[p][i] = static_cast<int16_t>(2 * p + i / 16);
      }
    }
  }
};
constexpr ScaleIndices kScaleIndices;

inline __m512i ScaleIndex(int p, bool sub16) {
  return _mm512_load_si512(sub16 ? kScaleIndices.sub16[p] : kScaleIndices.sub32[p]);
}

// One super-block unpacked (kept in registers: every loop over it is unrolled).
struct Unpacked {
  __m512i q[4];       // weights 64p .. 64p + 63, unsigned
  __m512i scale[4];   // each 16-bit lane's sub-block scale
  __m256i per_group;  // per group of 16: mins (Q2_K, Q4_K, Q5_K) or -offset * scale
  float d, dmin;
};

// Sub-block scales as 16 16-bit values (8 used for sub-blocks of 32) to each register's lanes.
inline void SpreadScales(__m512i scales16, bool sub16, Unpacked* u) {
#pragma GCC unroll 4
  for (int p = 0; p < 4; ++p)
    u->scale[p] = _mm512_permutexvar_epi16(ScaleIndex(p, sub16), scales16);
}

struct Q2K {
  static constexpr int64_t kBytes = 84;
  static constexpr bool kMins = true;
  static void Unpack(const uint8_t* block, Unpacked* u) {
    const __m128i s = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block));
    const __m128i low = _mm_set1_epi8(0x0f);
    const __m256i sc = _mm256_cvtepu8_epi16(_mm_and_si128(s, low));
    u->per_group = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(s, 4), low));
    SpreadScales(_mm512_castsi256_si512(sc), true, u);
#pragma GCC unroll 4
    for (int p = 0; p < 4; ++p) {  // weight 128h + 32s + l: bits 2s of qs[32h + l]
      const int h = p / 2, s0 = 2 * (p % 2);
      u->q[p] = Bits(Twice(block + 16 + ptrdiff_t{32} * h), 2 * s0, 2 * s0 + 2, 3);
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
    const __m256i sc = _mm256_cvtepi8_epi16(_mm_sub_epi8(stored, _mm_set1_epi8(32)));
    SpreadScales(_mm512_castsi256_si512(sc), true, u);
    u->per_group = _mm256_sub_epi16(_mm256_setzero_si256(), _mm256_slli_epi16(sc, 2));  // -4 sc
    const __m512i hmask = Twice(block);
#pragma GCC unroll 4
    for (int p = 0; p < 4; ++p) {  // weight 128h + 32s + l: bits 2s of qs[32h + l], bit 4h + s
      const int h = p / 2, s0 = 2 * (p % 2);
      const __m512i low = Bits(Twice(block + 32 + ptrdiff_t{32} * h), 2 * s0, 2 * s0 + 2, 3);
      const __m512i high = Bits(hmask, 4 * h + s0, 4 * h + s0 + 1, 1);
      u->q[p] = _mm512_or_si512(low, _mm512_slli_epi16(high, 2));  // q + 4
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
    const __m256i both = _mm256_cvtepu8_epi16(bytes);  // scales in lanes 0-7, mins in 8-15
    SpreadScales(_mm512_castsi256_si512(both), false, u);
    // Group g of 16 lies in sub-block g / 2: its min is lane 8 + g / 2.
    const __m256i min_of_group =
        _mm256_setr_epi16(8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13, 14, 14, 15, 15);
    u->per_group = _mm256_permutexvar_epi16(min_of_group, both);
    const uint8_t* qs = block + (kFive ? 48 : 16);
    const __m512i qh = kFive ? Twice(block + 16) : _mm512_setzero_si512();
#pragma GCC unroll 4
    for (int p = 0; p < 4; ++p) {  // weights 64p + l: low nibble of qs[32p + l], + 32: high
      __m512i q = Bits(Twice(qs + ptrdiff_t{32} * p), 0, 4, 0x0f);
      if constexpr (kFive) {  // bit 4: bit 2p (2p + 1) of qh[l]
        q = _mm512_or_si512(q, _mm512_slli_epi16(Bits(qh, 2 * p, 2 * p + 1, 1), 4));
      }
      u->q[p] = q;
    }
  }
};

struct Q6K {
  static constexpr int64_t kBytes = 210;
  static constexpr bool kMins = false;
  static void Unpack(const uint8_t* block, Unpacked* u) {
    const __m256i sc =
        _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(block + 192)));
    SpreadScales(_mm512_castsi256_si512(sc), true, u);
    u->per_group = _mm256_sub_epi16(_mm256_setzero_si256(), _mm256_slli_epi16(sc, 5));  // -32 sc
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {
      const __m512i low = _mm512_loadu_si512(block + ptrdiff_t{64} * h);  // ql[64h .. 64h + 64)
      const __m512i high = Twice(block + 128 + ptrdiff_t{32} * h);        // qh[32h .. 32h + 32)
      // Weights 128h + l and + 32 + l: low nibbles, high bits 0-1 and 2-3; + 64 and + 96: high
      // nibbles, bits 4-5 and 6-7.
      __m512i* q = u->q + ptrdiff_t{2} * h;
      q[0] = _mm512_or_si512(Bits(low, 0, 0, 0x0f), _mm512_slli_epi16(Bits(high, 0, 2, 3), 4));
      q[1] = _mm512_or_si512(Bits(low, 4, 4, 0x0f), _mm512_slli_epi16(Bits(high, 4, 6, 3), 4));
    }
    u->d = HalfAt(block + 208);
    u->dmin = 0;
  }
};

// Row `r` by tokens [t0, t0 + T): each super-block unpacked once for the T tokens. Float sums
// by lanes (16 of the weights' products, 8 of the mins'), reduced at the end of the row.
template <typename Type, int T>
void Tile(const uint8_t* row, const KActivationBlock* x, float* y, int64_t supers, int64_t n_out,
          int64_t r, int64_t t0) {
  __m512 sum[T];
  __m256 min_sum[T];
#pragma GCC unroll 8
  for (int t = 0; t < T; ++t) {
    sum[t] = _mm512_setzero_ps();
    min_sum[t] = _mm256_setzero_ps();
  }
  for (int64_t s = 0; s < supers; ++s) {
    Unpacked u;
    Type::Unpack(row + s * Type::kBytes, &u);
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) {
      const KActivationBlock& a = x[(t0 + t) * supers + s];
      // Two chains of vpdpwssd, not one of four: their latency overlaps.
      __m512i acc0 = _mm512_setzero_si512(), acc1 = _mm512_setzero_si512();
#pragma GCC unroll 2
      for (int p = 0; p < 4; p += 2) {
        acc0 = _mm512_dpwssd_epi32(
            acc0, _mm512_maddubs_epi16(u.q[p], _mm512_loadu_si512(a.q + ptrdiff_t{64} * p)),
            u.scale[p]);
        acc1 = _mm512_dpwssd_epi32(
            acc1,
            _mm512_maddubs_epi16(u.q[p + 1], _mm512_loadu_si512(a.q + ptrdiff_t{64} * p + 64)),
            u.scale[p + 1]);
      }
      __m512i acc = _mm512_add_epi32(acc0, acc1);
      const __m256i per_group = _mm256_madd_epi16(Load32(a.sums), u.per_group);
      if constexpr (Type::kMins) {
        min_sum[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(per_group), _mm256_set1_ps(u.dmin * a.d),
                                     min_sum[t]);
      } else {  // the offsets' products, -offset * scale * sums, added in
        acc = _mm512_add_epi32(acc, _mm512_zextsi256_si512(per_group));
      }
      sum[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(acc), _mm512_set1_ps(u.d * a.d), sum[t]);
    }
  }
#pragma GCC unroll 8
  for (int t = 0; t < T; ++t) {
    y[(t0 + t) * n_out + r] = _mm512_reduce_add_ps(sum[t]) - Hsum(min_sum[t]);
  }
}

}  // namespace

void VnniMatmulKQuant(DType type, const void* w, const KActivationBlock* x, float* y,
                      int64_t n_tokens, int64_t n_in, int64_t n_out, int64_t row_begin,
                      int64_t row_end) {
  const int64_t supers = n_in / 256;
  const auto* bytes = static_cast<const uint8_t*>(w);
  const bool known =
      ForKQuantType<Q2K, Q3K, Q45K<false>, Q45K<true>, Q6K>(type, [&]<typename Type>() {
        ForRowsAndTokenTiles<8>(n_tokens, row_begin, row_end, [&]<int T>(int64_t r, int64_t t0) {
          Tile<Type, T>(bytes + r * supers * Type::kBytes, x, y, supers, n_out, r, t0);
        });
      });
  if (!known) RefMatmulKQuant(type, w, x, y, n_tokens, n_in, n_out, row_begin, row_end);
}

}  // namespace tf::engine::kernels
