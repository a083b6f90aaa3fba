// The loop over tiles that the matmuls share (avx2.cc, avx512.cc, typed_avx2.cc,
// typed_avx512.cc): which tiles of weight rows by tokens cover a call, in which order, and the
// typed matmuls' entry points over a file's tiles. Plain templates with no
// instructions of their own; they live in an unnamed namespace so that each instruction-set
// file gets its own copy, compiled with its own flags, and the linker never swaps one for
// another.
#pragma once

#include <cstdint>

namespace tf::engine::kernels {
namespace {

// R rows against every token: tiles of 4 tokens, then the last one to three.
template <int R, typename TileFn>
void RowBlock(int64_t r0, int64_t n_tokens, const TileFn& tile) {
  int64_t t = 0;
  for (; t + 4 <= n_tokens; t += 4) tile.template operator()<R, 4>(r0, t);
  switch (n_tokens - t) {
    case 3:
      tile.template operator()<R, 3>(r0, t);
      break;
    case 2:
      tile.template operator()<R, 2>(r0, t);
      break;
    case 1:
      tile.template operator()<R, 1>(r0, t);
      break;
    default:
      break;
  }
}

// Rows [row_begin, row_end), R at a time, the last ones one at a time, each against every
// token: tile<R, T>(r0, t0). Rows are the outer loop, so each weight row comes from memory once
// for the whole batch while the tokens stay in cache.
template <int R, typename TileFn>
void ForRows(int64_t n_tokens, int64_t row_begin, int64_t row_end, const TileFn& tile) {
  int64_t r = row_begin;
  for (; r + R <= row_end; r += R) RowBlock<R>(r, n_tokens, tile);
  for (; r < row_end; ++r) RowBlock<1>(r, n_tokens, tile);
}

// Runs tile<R, T>(r0, t0) over rows [row_begin, row_end) and every token. Rows are the outer
// loop, so each weight row comes from memory once per call however many tokens there are (the
// tokens stay in cache). Several tokens: R rows at a time, R * min(T, 4) about kChains
// accumulators, the last rows one at a time. One token (decode): one row at a time, so that the
// weights are read as one sequential stream, which the hardware prefetcher follows at full
// bandwidth; interleaving 4 or 8 rows of 768 weights (8 short streams, software-prefetched)
// reached half of it. The next rows' independent sums overlap out of order.
template <int kChains, typename TileFn>
void ForTiles(int64_t n_tokens, int64_t row_begin, int64_t row_end, const TileFn& tile) {
  constexpr int kR2 = kChains >= 2 ? kChains / 2 : 1, kR4 = kChains >= 4 ? kChains / 4 : 1;
  if (n_tokens == 1) {
    ForRows<1>(n_tokens, row_begin, row_end, tile);
  } else if (n_tokens == 2) {
    ForRows<kR2>(n_tokens, row_begin, row_end, tile);
  } else {
    ForRows<kR4>(n_tokens, row_begin, row_end, tile);
  }
}

// The typed matmuls of one instruction-set file, over its tiles: Tiles::Tile16<Type, R, T>
// (16-bit weights; Type F16 or Bf16) and Tiles::TileQ<Block, R, T> (block weights; Block Q8_0
// or Q4_0), with the signatures typed_avx2.cc's have. Both aim at 8 accumulators
// (R * min(T, 4); one token: one row, see ForTiles). Block tiles at 8 rather than 4 took 16
// tokens of Q8_0 from 2.55 to 2.9-3.1 GB/s of weights on engine_matmul_bench (AVX2: 2.22 to 2.51).
template <typename Tiles, typename Type>
void Matmul16(const void* w, const float* x, float* y, int64_t n_tokens, int64_t n_in,
              int64_t n_out, int64_t row_begin, int64_t row_end) {
  const auto* bytes = static_cast<const uint8_t*>(w);
  ForTiles<8>(n_tokens, row_begin, row_end, [&]<int R, int T>(int64_t r0, int64_t t0) {
    Tiles::template Tile16<Type, R, T>(bytes, x, y, n_in, n_out, r0, t0);
  });
}

template <typename Tiles, typename Block, typename Activations>
void MatmulQ(const void* w, const Activations* x, float* y, int64_t n_tokens, int64_t n_in,
             int64_t n_out, int64_t row_begin, int64_t row_end) {
  const auto* bytes = static_cast<const uint8_t*>(w);
  ForTiles<8>(n_tokens, row_begin, row_end, [&]<int R, int T>(int64_t r0, int64_t t0) {
    Tiles::template TileQ<Block, R, T>(bytes, x, y, n_in / 32, n_out, r0, t0);
  });
}

}  // namespace
}  // namespace tf::engine::kernels
