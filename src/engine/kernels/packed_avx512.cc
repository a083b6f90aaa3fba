// The packed block matmuls (packed_blocks.h) with AVX-512 VNNI: a group of 16 weight rows by a
// tile of up to 16 tokens at a time. Per block the group's weights are loaded once (8 registers
// of 16 rows x 4 bytes) and serve every token of the tile: per token, 8 vpdpbusd against the
// token's activations four at a time (broadcast) give the 16 rows' exact integer dot products
// (starting from -offset * sum(x), which takes the weights' unsigned offset back out), then one
// conversion and one multiply-add by d_w * d_x accumulate the block into the 16 outputs. No
// horizontal sums, and about 12 instructions per 512 multiply-adds (the activations broadcast
// by vpdpbusd's memory operand) where the unpacked tiles (typed_avx512.cc) take about 10 per 64.
// Compiled with AVX-512 F/BW/VL/VNNI and F16C and run only after dispatch.cc has checked the
// CPU; uses no inline code from library headers.
#include <immintrin.h>

#include <cstdint>

// g++ 12 warns that the _mm512_undefined_* inside many AVX-512 intrinsics is used uninitialized
// (a false positive: the lanes are overwritten); it says nothing about this file's code.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include "engine/kernels/packed_blocks.h"
#include "engine/kernels/sets.h"

namespace tf::engine::kernels {
namespace {

// A block's 8 registers of 16 rows x 4 unsigned weights; register k pairs with activations
// q[4k .. 4k+3] (packed_blocks.h).
struct Q8 {
  static constexpr int kOffset = 128;
  static constexpr int64_t kChunkBytes = 8 * 64;  // per block
  static void Load(const uint8_t* p, __m512i w[8]) {
#pragma GCC unroll 8
    for (int k = 0; k < 8; ++k) w[k] = _mm512_loadu_si512(p + 64 * k);
  }
};

struct Q4 {
  static constexpr int kOffset = 8;
  static constexpr int64_t kChunkBytes = 4 * 64;
  static void Load(const uint8_t* p, __m512i w[8]) {
    const __m512i low = _mm512_set1_epi8(0x0f);
#pragma GCC unroll 4
    for (int k = 0; k < 4; ++k) {
      const __m512i packed = _mm512_loadu_si512(p + 64 * k);
      w[k] = _mm512_and_si512(packed, low);                            // weights 4k..4k+3
      w[k + 4] = _mm512_and_si512(_mm512_srli_epi16(packed, 4), low);  // 16+4k..16+4k+3
    }
  }
};

// acc + vpdpbusd(w, the four bytes at q in every lane). The bytes are broadcast by the
// instruction's own memory operand ({1to16}): g++ does not fold _mm512_set1_epi32 of a load
// into vpdpbusd, and a separate broadcast load per product is 8 more instructions per block and
// token. Reads exactly q[0..3].
inline __m512i DotBroadcast4(__m512i acc, __m512i w, const int8_t* q) {
  asm("vpdpbusd %2%{1to16%}, %1, %0"
      : "+v"(acc)
      : "v"(w), "m"(*reinterpret_cast<const int8_t(*)[4]>(q)));
  return acc;
}

// Tiles of this many tokens or more keep one dependency chain per token and block: the tile's
// tokens are independent chains enough, and the second chain's add is saved.
constexpr int kOneChainTokens = 4;

// Software prefetch of the weight stream, this many bytes ahead of the block being read: for a
// tile of one or two tokens (bound by memory), and for larger tiles, which spend longer on each
// block and so must fetch further ahead to cover the memory's latency. Without it a 16-token
// tile over a matrix larger than the caches ran at about half its in-cache speed.
constexpr int kPrefetchTokens = 2;
constexpr int64_t kPrefetchBytes = 1024;
constexpr int64_t kPrefetchBytesMany = 8192;

// One group (16 rows at `group`) by tokens [t0, t0 + T); y's lanes outside `mask` are left alone.
template <typename Block, int T>
void GroupTile(const uint8_t* group, int64_t scale_bytes, const ActivationBlock* x, float* y,
               int64_t blocks, int64_t n_out, int64_t row0, __mmask16 mask, int64_t t0) {
  __m512 acc[T];
#pragma GCC unroll 16
  for (int t = 0; t < T; ++t) acc[t] = _mm512_setzero_ps();
  const uint8_t* chunks = group + scale_bytes;
  for (int64_t b = 0; b < blocks; ++b) {
    const __m512 dw = _mm512_cvtph_ps(
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(group + b * kPackRows * 2)));
    {
      constexpr int64_t ahead = T <= kPrefetchTokens ? kPrefetchBytes : kPrefetchBytesMany;
#pragma GCC unroll 8
      for (int64_t line = 0; line < Block::kChunkBytes; line += 64) {
        _mm_prefetch(reinterpret_cast<const char*>(chunks + b * Block::kChunkBytes + line + ahead),
                     _MM_HINT_T0);
      }
    }
    __m512i w[8];
    Block::Load(chunks + b * Block::kChunkBytes, w);
#pragma GCC unroll 16
    for (int t = 0; t < T; ++t) {
      const ActivationBlock& a = x[(t0 + t) * blocks + b];
      __m512i dot_i;
      if constexpr (T >= kOneChainTokens) {
        // The tile's tokens are independent chains enough; one chain per token.
        dot_i = _mm512_set1_epi32(-Block::kOffset * a.sum);
#pragma GCC unroll 8
        for (int k = 0; k < 8; ++k) dot_i = DotBroadcast4(dot_i, w[k], a.q + 4 * k);
      } else {
        // Two chains of four, so that one token's dot products are not one long dependency.
        __m512i even = _mm512_set1_epi32(-Block::kOffset * a.sum), odd = _mm512_setzero_si512();
#pragma GCC unroll 4
        for (int k = 0; k < 8; k += 2) {
          even = DotBroadcast4(even, w[k], a.q + 4 * k);
          odd = DotBroadcast4(odd, w[k + 1], a.q + 4 * k + 4);
        }
        dot_i = _mm512_add_epi32(even, odd);
      }
      const __m512 dot = _mm512_cvtepi32_ps(dot_i);
      acc[t] = _mm512_fmadd_ps(dot, _mm512_mul_ps(dw, _mm512_set1_ps(a.d)), acc[t]);
    }
  }
#pragma GCC unroll 16
  for (int t = 0; t < T; ++t) _mm512_mask_storeu_ps(y + (t0 + t) * n_out + row0, mask, acc[t]);
}

// GroupTile<Block, left> for the last `left` (0 to T) tokens.
template <typename Block, int T>
void Tail(int64_t left, const uint8_t* group, int64_t scale_bytes, const ActivationBlock* x,
          float* y, int64_t blocks, int64_t n_out, int64_t row0, __mmask16 mask, int64_t t0) {
  if constexpr (T > 0) {
    if (left == T) {
      GroupTile<Block, T>(group, scale_bytes, x, y, blocks, n_out, row0, mask, t0);
    } else {
      Tail<Block, T - 1>(left, group, scale_bytes, x, y, blocks, n_out, row0, mask, t0);
    }
  }
}

// Tokens per tile: the tile's 16 accumulators, the block's 8 weight registers and the
// per-token temporaries fit the 32 registers, and 16 streams decode in one pass over the
// weights (two passes of 8 tokens were slower out of the caches).
constexpr int kTokens = 16;

template <typename Block>
void MatmulPacked(const void* w, const ActivationBlock* x, float* y, int64_t n_tokens, int64_t n_in,
                  int64_t n_out, int64_t row_begin, int64_t row_end, int64_t group_bytes) {
  const auto* bytes = static_cast<const uint8_t*>(w);
  const int64_t blocks = n_in / 32, scale_bytes = PackedScaleBytes(n_in);
  for (int64_t g = row_begin / kPackRows; g * kPackRows < row_end; ++g) {
    const int64_t row0 = g * kPackRows;
    uint32_t lanes = 0xffff;  // rows [row0, row0 + 16) within [row_begin, row_end)
    if (row0 < row_begin) lanes &= 0xffffu << (row_begin - row0);
    if (row0 + kPackRows > row_end) lanes &= 0xffffu >> (row0 + kPackRows - row_end);
    const auto mask = static_cast<__mmask16>(lanes);
    const uint8_t* group = bytes + g * group_bytes;
    int64_t t = 0;
    for (; t + kTokens <= n_tokens; t += kTokens) {
      GroupTile<Block, kTokens>(group, scale_bytes, x, y, blocks, n_out, row0, mask, t);
    }
    Tail<Block, kTokens - 1>(n_tokens - t, group, scale_bytes, x, y, blocks, n_out, row0, mask, t);
  }
}

}  // namespace

void VnniMatmulQ8_0Packed(const void* w, const ActivationBlock* x, float* y, int64_t n_tokens,
                          int64_t n_in, int64_t n_out, int64_t row_begin, int64_t row_end) {
  MatmulPacked<Q8>(w, x, y, n_tokens, n_in, n_out, row_begin, row_end, PackedQ8_0GroupBytes(n_in));
}

void VnniMatmulQ4_0Packed(const void* w, const ActivationBlock* x, float* y, int64_t n_tokens,
                          int64_t n_in, int64_t n_out, int64_t row_begin, int64_t row_end) {
  MatmulPacked<Q4>(w, x, y, n_tokens, n_in, n_out, row_begin, row_end, PackedQ4_0GroupBytes(n_in));
}

}  // namespace tf::engine::kernels
