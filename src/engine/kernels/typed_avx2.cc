// AVX2+FMA+F16C matmuls over 16-bit and block-format weights. Compiled with -mavx2 -mfma -mf16c
// and run only after dispatch.cc has checked the CPU; like avx2.cc it uses no inline code from
// library headers.
//
// Each kernel computes a tile of R weight rows by T tokens at a time, so every weight loaded
// serves T tokens (a batch of sequences' tokens in one call), and R * T independent
// accumulators keep the FMA units busy when T is small (one token in decode). Every output has
// one 8-lane accumulator that takes the row's values in the same order whatever the tile
// shape, then the same horizontal sum and scalar tail: results do not depend on how many tokens
// are in the call or how the rows are split between threads.
#include <immintrin.h>

#include <cstdint>

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

// a * b + c with one rounding, written out so that the compiler cannot choose differently in
// different tile shapes.
inline float Fma(float a, float b, float c) {
  return _mm_cvtss_f32(_mm_fmadd_ss(_mm_set_ss(a), _mm_set_ss(b), _mm_set_ss(c)));
}

inline uint16_t LoadU16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }

inline float HalfToFloat(uint16_t bits) {
  return _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(bits)));
}

// 16-bit element types: 8 of them to 8 floats, and one to a float.
struct F16 {
  static __m256 Load8(const uint8_t* p) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  static float Load1(const uint8_t* p) { return HalfToFloat(LoadU16(p)); }
};

struct Bf16 {
  static __m256 Load8(const uint8_t* p) {
    __m256i wide = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16));
  }
  static float Load1(const uint8_t* p) {
    __m128i bits = _mm_slli_epi32(_mm_cvtsi32_si128(LoadU16(p)), 16);
    return _mm_cvtss_f32(_mm_castsi128_ps(bits));
  }
};

// Block formats: one weight block as 32 signed bytes, and its scale.
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
  // Rows [r0, r0 + R) by tokens [t0, t0 + T) of a 16-bit matmul.
  template <typename Type, int R, int T>
  static void Tile16(const uint8_t* w, const float* x, float* y, int64_t n_in, int64_t n_out,
                     int64_t r0, int64_t t0) {
    __m256 acc[R][T];
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
#pragma GCC unroll 16
      for (int t = 0; t < T; ++t) acc[r][t] = _mm256_setzero_ps();
    }
    const uint8_t* rows[R];
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) rows[r] = w + 2 * (r0 + r) * n_in;
    const float* xs[T];
#pragma GCC unroll 16
    for (int t = 0; t < T; ++t) xs[t] = x + (t0 + t) * n_in;
    int64_t i = 0;
    for (; i + 8 <= n_in; i += 8) {
      __m256 xv[T];
#pragma GCC unroll 16
      for (int t = 0; t < T; ++t) xv[t] = _mm256_loadu_ps(xs[t] + i);
#pragma GCC unroll 16
      for (int r = 0; r < R; ++r) {
        if (R > 1 && i % 32 == 0) {  // once per 64-byte line; one row needs none (ForTiles)
          _mm_prefetch(reinterpret_cast<const char*>(rows[r] + 2 * (i + R * n_in)), _MM_HINT_T0);
        }
        __m256 wv = Type::Load8(rows[r] + 2 * i);
#pragma GCC unroll 16
        for (int t = 0; t < T; ++t) acc[r][t] = _mm256_fmadd_ps(wv, xv[t], acc[r][t]);
      }
    }
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
#pragma GCC unroll 16
      for (int t = 0; t < T; ++t) {
        float sum = Hsum(acc[r][t]);
        for (int64_t j = i; j < n_in; ++j) sum = Fma(Type::Load1(rows[r] + 2 * j), xs[t][j], sum);
        y[(t0 + t) * n_out + r0 + r] = sum;
      }
    }
  }

  // Rows [r0, r0 + R) by tokens [t0, t0 + T) of a block-format matmul. Per block, the signed
  // bytes are multiplied as |w| (unsigned) times x with w's sign (maddubs), pairs summed to 32
  // bits (madd), and the 8 sums scaled by d_w * d_x into the accumulator. |x| <= 127, so the
  // 16-bit pair sums cannot saturate (at most 2 * 128 * 127).
  template <typename Block, int R, int T>
  static void TileQ(const uint8_t* w, const ActivationBlock* x, float* y, int64_t blocks,
                    int64_t n_out, int64_t r0, int64_t t0) {
    __m256 acc[R][T];
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
#pragma GCC unroll 16
      for (int t = 0; t < T; ++t) acc[r][t] = _mm256_setzero_ps();
    }
    const __m256i ones = _mm256_set1_epi16(1);
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
          const __m256i pairs = _mm256_maddubs_epi16(magnitude, _mm256_sign_epi8(xq, q));
          const __m256 sums = _mm256_cvtepi32_ps(_mm256_madd_epi16(pairs, ones));
          acc[r][t] = _mm256_fmadd_ps(sums, _mm256_set1_ps(d * a.d), acc[r][t]);
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

void Avx2MatmulF16(const void* w, const float* x, float* y, int64_t n_tokens, int64_t n_in,
                   int64_t n_out, int64_t row_begin, int64_t row_end) {
  Matmul16<Tiles, F16>(w, x, y, n_tokens, n_in, n_out, row_begin, row_end);
}

void Avx2MatmulBf16(const void* w, const float* x, float* y, int64_t n_tokens, int64_t n_in,
                    int64_t n_out, int64_t row_begin, int64_t row_end) {
  Matmul16<Tiles, Bf16>(w, x, y, n_tokens, n_in, n_out, row_begin, row_end);
}

void Avx2MatmulQ8_0(const void* w, const ActivationBlock* x, float* y, int64_t n_tokens,
                    int64_t n_in, int64_t n_out, int64_t row_begin, int64_t row_end) {
  MatmulQ<Tiles, Q8_0>(w, x, y, n_tokens, n_in, n_out, row_begin, row_end);
}

void Avx2MatmulQ4_0(const void* w, const ActivationBlock* x, float* y, int64_t n_tokens,
                    int64_t n_in, int64_t n_out, int64_t row_begin, int64_t row_end) {
  MatmulQ<Tiles, Q4_0>(w, x, y, n_tokens, n_in, n_out, row_begin, row_end);
}

}  // namespace tf::engine::kernels
