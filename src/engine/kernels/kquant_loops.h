// The loops (and a byte helper) the K-quant matmuls share (kquant_avx2.cc, kquant_avx512.cc): which
// unpacker a type takes, and rows one at a time with their tokens in tiles. Plain templates with no
// instructions of their own, in an unnamed namespace (as typed_tiles.h) so that each
// instruction-set file gets its own copy, compiled with its own flags.
#pragma once

#include <cstdint>
#include <cstring>

#include "engine/dtype.h"

namespace tf::engine::kernels {
namespace {

// The 4 bytes at p as a little-endian word (the K-quants' scale bytes are decoded 4 at a time).
inline uint32_t Word(const uint8_t* p) {
  uint32_t w;
  std::memcpy(&w, p, sizeof w);
  return w;
}

// run.template operator()<Q>() with Q the file's unpacker of `type` (Q2 for Q2_K, ..., Q6 for
// Q6_K). False, and nothing run, for a type that is not a K-quant.
template <typename Q2, typename Q3, typename Q4, typename Q5, typename Q6, typename Run>
bool ForKQuantType(DType type, const Run& run) {
  switch (type) {
    case DType::kQ2_K:
      run.template operator()<Q2>();
      return true;
    case DType::kQ3_K:
      run.template operator()<Q3>();
      return true;
    case DType::kQ4_K:
      run.template operator()<Q4>();
      return true;
    case DType::kQ5_K:
      run.template operator()<Q5>();
      return true;
    case DType::kQ6_K:
      run.template operator()<Q6>();
      return true;
    default:
      return false;
  }
}

// tile.template operator()<T>(r, t0) for rows [row_begin, row_end), one at a time, and their
// tokens in tiles of T = kMax, then one of 4 (when kMax is larger), then the last 1 to 3.
template <int kMax, typename TileFn>
void ForRowsAndTokenTiles(int64_t n_tokens, int64_t row_begin, int64_t row_end,
                          const TileFn& tile) {
  for (int64_t r = row_begin; r < row_end; ++r) {
    int64_t t = 0;
    for (; t + kMax <= n_tokens; t += kMax) tile.template operator()<kMax>(r, t);
    if constexpr (kMax > 4) {
      if (n_tokens - t >= 4) {
        tile.template operator()<4>(r, t);
        t += 4;
      }
    }
    switch (n_tokens - t) {
      case 3:
        tile.template operator()<3>(r, t);
        break;
      case 2:
        tile.template operator()<2>(r, t);
        break;
      case 1:
        tile.template operator()<1>(r, t);
        break;
      default:
        break;
    }
  }
}

}  // namespace
}  // namespace tf::engine::kernels
