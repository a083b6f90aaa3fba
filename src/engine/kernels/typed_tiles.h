// The loop over tiles that the typed matmuls share (typed_avx2.cc, typed_avx512.cc): which
// tiles of weight rows by tokens cover a call, in which order. Plain templates with no
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

// Runs tile<R, T>(r0, t0) over rows [row_begin, row_end) and every token. Rows are the outer
// loop, so each weight row comes from memory once per call however many tokens there are (the
// tokens stay in cache). Several tokens: R rows at a time, R * min(T, 4) about kChains
// accumulators, the last rows one at a time. One token (decode): one row at a time, so that the
// weights are read as one sequential stream, which the hardware prefetcher follows at full
// bandwidth; interleaving 4 or 8 rows of 768 weights (8 short streams, software-prefetched)
// reached half of it. The next rows' independent sums overlap out of order.
template <int kChains, typename TileFn>
void ForTiles(int64_t n_tokens, int64_t row_begin, int64_t row_end, const TileFn& tile) {
  auto rows = [&]<int R>() {
    int64_t r = row_begin;
    for (; r + R <= row_end; r += R) RowBlock<R>(r, n_tokens, tile);
    for (; r < row_end; ++r) RowBlock<1>(r, n_tokens, tile);
  };
  constexpr int kR2 = kChains >= 2 ? kChains / 2 : 1, kR4 = kChains >= 4 ? kChains / 4 : 1;
  if (n_tokens == 1) {
    rows.template operator()<1>();
  } else if (n_tokens == 2) {
    rows.template operator()<kR2>();
  } else {
    rows.template operator()<kR4>();
  }
}

}  // namespace
}  // namespace tf::engine::kernels
