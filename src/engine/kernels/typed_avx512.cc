// AVX-512 matmuls over 16-bit and block-format weights: the 16-bit ones 16 weights per
// instruction (AVX-512F/BW/VL), the block ones with VNNI's byte dot product (vpdpbusd on 256-bit
// registers, AVX-512 VNNI/VL) in place of vpmaddubsw + vpmaddwd. Compiled with those flags and
// run only after dispatch.cc has checked the CPU; like avx2.cc it uses no inline code from
// library headers. The tiling and the fixed order per output are typed_avx2.cc's.
#include <immintrin.h>

#include <cstdint>

// g++ 12 warns that the _mm512_undefined_* inside many AVX-512 intrinsics is used uninitialized
// (a false positive: the lanes are overwritten); it says nothing about this file's code.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include "engine/kernels/sets.h"
#include "engine/kernels/typed_tiles.h"

namespace tf::engine::kernels {
namespace {

inline float Hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// The sum of the 16 lanes, as two halves then Hsum of 8.
inline float Hsum(__m512 v) {
  __m256 lo = _mm512_castps512_ps256(v);
  __m256 hi = _mm512_castps512_ps256(_mm512_shuffle_f32x4(v, v, 0xee));  // lanes 8..15
  return Hsum(_mm256_add_ps(lo, hi));
}

inline uint16_t LoadU16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }

inline float HalfToFloat(uint16_t bits) {
  return _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(bits)));
}

// 16-bit element types: the first `count` (1 to 16) of 16 at p as floats, the rest zero.
struct F16 {
  static __m512 Load16(const uint8_t* p) {
    return _mm512_maskz_cvtph_ps(0xffff, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  static __m512 LoadMasked(const uint8_t* p, __mmask16 mask) {
    return _mm512_maskz_cvtph_ps(0xffff, _mm256_maskz_loadu_epi16(mask, p));
  }
};

struct Bf16 {
  static __m512 Widen(__m256i bits) {
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_maskz_cvtepu16_epi32(0xffff, bits), 16));
  }
  static __m512 Load16(const uint8_t* p) {
    return Widen(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  static __m512 LoadMasked(const uint8_t* p, __mmask16 mask) {
    return Widen(_mm256_maskz_loadu_epi16(mask, p));
  }
};

struct Q8_0 {
  static constexpr int64_t kBytes = 34;
  static __m256i Load(const uint8_t* block) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block + 2));
  }
};

struct Q4_0 {
  static constexpr int64_t kBytes = 18;
  static __m256i Load(const uint8_t* block) {
    const __m128i packed = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block + 2));
    const __m128i low_mask = _mm_set1_epi8(0x0f);
    const __m128i lo = _mm_and_si128(packed, low_mask);                     // weights 0..15
    const __m128i hi = _mm_and_si128(_mm_srli_epi16(packed, 4), low_mask);  // weights 16..31
    return _mm256_sub_epi8(_mm256_set_m128i(hi, lo), _mm256_set1_epi8(8));
  }
};

// The tiles, as members of one struct for the entry points in typed_tiles.h.
struct Tiles {
  static constexpr int kTokens16 = 6, kRows16 = 3;  // 16-bit tiles: 3 rows by up to 6 tokens

  // Rows [r0, r0 + R) by tokens [t0, t0 + T): 16-wide multiply-adds, the tail masked.
  template <typename Type, int R, int T>
  static void Tile16(const uint8_t* w, const float* x, float* y, int64_t n_in, int64_t n_out,
                     int64_t r0, int64_t t0) {
    __m512 acc[R][T];
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
#pragma GCC unroll 16
      for (int t = 0; t < T; ++t) acc[r][t] = _mm512_setzero_ps();
    }
    const uint8_t* rows[R];
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) rows[r] = w + 2 * (r0 + r) * n_in;
    const float* xs[T];
#pragma GCC unroll 16
    for (int t = 0; t < T; ++t) xs[t] = x + (t0 + t) * n_in;
    int64_t i = 0;
    for (; i + 16 <= n_in; i += 16) {
      __m512 xv[T];
#pragma GCC unroll 16
      for (int t = 0; t < T; ++t) xv[t] = _mm512_loadu_ps(xs[t] + i);
#pragma GCC unroll 16
      for (int r = 0; r < R; ++r) {
        if (R > 1 && i % 32 == 0) {  // once per 64-byte line
          _mm_prefetch(reinterpret_cast<const char*>(rows[r] + 2 * (i + R * n_in)), _MM_HINT_T0);
        }
        __m512 wv = Type::Load16(rows[r] + 2 * i);
#pragma GCC unroll 16
        for (int t = 0; t < T; ++t) acc[r][t] = _mm512_fmadd_ps(wv, xv[t], acc[r][t]);
      }
    }
    if (i < n_in) {
      const __mmask16 mask = static_cast<__mmask16>((1u << (n_in - i)) - 1);
      __m512 xv[T];
#pragma GCC unroll 16
      for (int t = 0; t < T; ++t) xv[t] = _mm512_maskz_loadu_ps(mask, xs[t] + i);
#pragma GCC unroll 16
      for (int r = 0; r < R; ++r) {
        __m512 wv = Type::LoadMasked(rows[r] + 2 * i, mask);
#pragma GCC unroll 16
        for (int t = 0; t < T; ++t) acc[r][t] = _mm512_fmadd_ps(wv, xv[t], acc[r][t]);
      }
    }
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
#pragma GCC unroll 16
      for (int t = 0; t < T; ++t) y[(t0 + t) * n_out + r0 + r] = Hsum(acc[r][t]);
    }
  }

  // As typed_avx2.cc's TileQ, with the 32 byte products of a block summed in fours to 32 bits by
  // one vpdpbusd (|w| unsigned times x with w's sign; exact, as the 16-bit pair sums were).
  template <typename Block, int R, int T>
  static void TileQ(const uint8_t* w, const ActivationBlock* x, float* y, int64_t blocks,
                    int64_t n_out, int64_t r0, int64_t t0) {
    __m256 acc[R][T];
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
#pragma GCC unroll 16
      for (int t = 0; t < T; ++t) acc[r][t] = _mm256_setzero_ps();
    }
    for (int64_t b = 0; b < blocks; ++b) {
#pragma GCC unroll 16
      for (int r = 0; r < R; ++r) {
        const uint8_t* block = w + ((r0 + r) * blocks + b) * Block::kBytes;
        if (R > 1) {  // one row is a plain sequential stream, which the hardware prefetches
          _mm_prefetch(reinterpret_cast<const char*>(block + R * blocks * Block::kBytes),
                       _MM_HINT_T0);
        }
        const __m256i q = Block::Load(block);
        const __m256i magnitude = _mm256_sign_epi8(q, q);
        const float d = HalfToFloat(LoadU16(block));
#pragma GCC unroll 16
        for (int t = 0; t < T; ++t) {
          const ActivationBlock& a = x[(t0 + t) * blocks + b];
          const __m256i xq = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a.q));
          const __m256i sums =
              _mm256_dpbusd_epi32(_mm256_setzero_si256(), magnitude, _mm256_sign_epi8(xq, q));
          acc[r][t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sums), _mm256_set1_ps(d * a.d), acc[r][t]);
        }
      }
    }
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
#pragma GCC unroll 16
      for (int t = 0; t < T; ++t) y[(t0 + t) * n_out + r0 + r] = Hsum(acc[r][t]);
    }
  }
};

}  // namespace

void Avx512MatmulF16(const void* w, const float* x, float* y, int64_t n_tokens, int64_t n_in,
                     int64_t n_out, int64_t row_begin, int64_t row_end) {
  Matmul16<Tiles, F16>(w, x, y, n_tokens, n_in, n_out, row_begin, row_end);
}

void Avx512MatmulBf16(const void* w, const float* x, float* y, int64_t n_tokens, int64_t n_in,
                      int64_t n_out, int64_t row_begin, int64_t row_end) {
  Matmul16<Tiles, Bf16>(w, x, y, n_tokens, n_in, n_out, row_begin, row_end);
}

void VnniMatmulQ8_0(const void* w, const ActivationBlock* x, float* y, int64_t n_tokens,
                    int64_t n_in, int64_t n_out, int64_t row_begin, int64_t row_end) {
  MatmulQ<Tiles, Q8_0>(w, x, y, n_tokens, n_in, n_out, row_begin, row_end);
}

void VnniMatmulQ4_0(const void* w, const ActivationBlock* x, float* y, int64_t n_tokens,
                    int64_t n_in, int64_t n_out, int64_t row_begin, int64_t row_end) {
  MatmulQ<Tiles, Q4_0>(w, x, y, n_tokens, n_in, n_out, row_begin, row_end);
}

}  // namespace tf::engine::kernels
