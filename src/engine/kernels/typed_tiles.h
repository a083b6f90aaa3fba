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

// tile<R, left>(r0, t0) for the last `left` (0 to T) tokens, as a compile-time tile width.
template <int R, int T, typename TileFn>
void TokenTail(int64_t r0, int64_t t0, int64_t left, const TileFn& tile) {
  if constexpr (T > 0) {
    if (left == T) {
      tile.template operator()<R, T>(r0, t0);
    } else {
      TokenTail<R, T - 1>(r0, t0, left, tile);
    }
  }
}

// R rows against every token: tiles of kT tokens, then the last 1 to kT - 1.
template <int R, int kT, typename TileFn>
void RowBlock(int64_t r0, int64_t n_tokens, const TileFn& tile) {
  int64_t t = 0;
  for (; t + kT <= n_tokens; t += kT) tile.template operator()<R, kT>(r0, t);
  TokenTail<R, kT - 1>(r0, t, n_tokens - t, tile);
}

// Rows [row_begin, row_end), R at a time, the last ones one at a time, each against every
// token in tiles of kT: tile<R, T>(r0, t0). Rows are the outer loop, so each weight row comes
// from memory once for the whole batch while the tokens stay in cache.
template <int R, typename TileFn, int kT = 4>
void ForRows(int64_t n_tokens, int64_t row_begin, int64_t row_end, const TileFn& tile) {
  int64_t r = row_begin;
  for (; r + R <= row_end; r += R) RowBlock<R, kT>(r, n_tokens, tile);
  for (; r < row_end; ++r) RowBlock<1, kT>(r, n_tokens, tile);
}

// Runs tile<R, T>(r0, t0) over rows [row_begin, row_end) and every token. Rows are the outer
// loop, so each weight row comes from memory once per call however many tokens there are (the
// tokens stay in cache). Two tokens: kChains / 2 rows at a time; three or more: kManyRows rows
// by tiles of up to kT tokens; the last rows one at a time. One token (decode): one row at a
// time, so that the weights are read as one sequential stream, which the hardware prefetcher
// follows at full bandwidth; interleaving 4 or 8 rows of 768 weights (8 short streams,
// software-prefetched) reached half of it. The next rows' independent sums overlap out of order.
template <int kChains, int kManyRows = (kChains >= 4 ? kChains / 4 : 1), int kT = 4,
          typename TileFn>
void ForTiles(int64_t n_tokens, int64_t row_begin, int64_t row_end, const TileFn& tile) {
  constexpr int kR2 = kChains >= 2 ? kChains / 2 : 1;
  if (n_tokens == 1) {
    ForRows<1, TileFn, kT>(n_tokens, row_begin, row_end, tile);
  } else if (n_tokens == 2) {
    ForRows<kR2, TileFn, kT>(n_tokens, row_begin, row_end, tile);
  } else {
    ForRows<kManyRows, TileFn, kT>(n_tokens, row_begin, row_end, tile);
  }
}

// The typed matmuls of one instruction-set file, over its tiles: Tiles::Tile16<Type, R, T>
// (16-bit weights; Type F16 or Bf16) and Tiles::TileQ<Block, R, T> (block weights; Block Q8_0
// or Q4_0), with the signatures typed_avx2.cc's have. Both aim at 8 accumulators
// (R * min(T, 4); one token: one row, see ForTiles). Block tiles at 8 rather than 4 took 16
// tokens of Q8_0 from 2.55 to 2.9-3.1 GB/s of weights on engine_matmul_bench (AVX2: 2.22 to 2.51).
// Tiles::kTokens16 and kRows16 (if present) set the 16-bit tiles of three or more tokens: up to
// kTokens16 tokens by kRows16 rows (default 4 by 2).
template <typename Tiles>
constexpr int TokenTile16() {
  if constexpr (requires { Tiles::kTokens16; }) {
    return Tiles::kTokens16;
  } else {
    return 4;
  }
}
template <typename Tiles>
constexpr int RowTile16() {
  if constexpr (requires { Tiles::kRows16; }) {
    return Tiles::kRows16;
  } else {
    return 2;
  }
}

// One token over rows at least this wide takes 4 rows at a time (with the tiles' software
// prefetch), not one: a row of 8192 16-bit weights is 512 dependent multiply-adds, more than
// the out-of-order window holds, so one row at a time waits on one chain and the next row's
// cannot start; 4 rows are 4 chains. engine_matmul_bench, 4096 x 8192 F16 at one token: 26-27
// GB/s on two threads one row at a time, 34 four rows at a time; 2048 and 768 wide, one row
// stays ahead (33-36 against 24-29 GB/s: the next rows' chains overlap out of order). Each
// output's order is the same either way.
inline constexpr int64_t kLongRow16 = 4096;

template <typename Tiles, typename Type>
void Matmul16(const void* w, const float* x, float* y, int64_t n_tokens, int64_t n_in,
              int64_t n_out, int64_t row_begin, int64_t row_end) {
  const auto* bytes = static_cast<const uint8_t*>(w);
  auto tile = [&]<int R, int T>(int64_t r0, int64_t t0) {
    Tiles::template Tile16<Type, R, T>(bytes, x, y, n_in, n_out, r0, t0);
  };
  if (n_tokens == 1 && n_in >= kLongRow16) {
    ForRows<4, decltype(tile), TokenTile16<Tiles>()>(n_tokens, row_begin, row_end, tile);
    return;
  }
  ForTiles<8, RowTile16<Tiles>(), TokenTile16<Tiles>()>(n_tokens, row_begin, row_end, tile);
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
