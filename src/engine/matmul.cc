#include "engine/matmul.h"

#include <algorithm>
#include <atomic>
#include <vector>

namespace tf::engine {
namespace {

// Threads get whole groups of this many rows, so that their ranges start and end on the
// kernels' row tiles (at most 8 rows; the packed block matmuls' groups of 16) rather than
// leaving a few rows to the one-row tile or one group to both threads.
constexpr int64_t kRowGroup = 16;

// The shortest piece of a matmul a thread takes at once (see MatMuls), in weights: 32 KiB of
// 8-bit weights, enough for the hardware prefetcher to be up to speed for most of it.
constexpr int64_t kMinPieceWeights = 32768;

// Rows [b, e) of one part, on whichever kernel its type needs. xq, xk: the activations
// quantised for the Q8_0 / Q4_0 parts and for the K-quant parts.
void PartRows(const kernels::KernelSet& k, const MatMulPart& p, const float* x,
              const kernels::ActivationBlock* xq, const kernels::KActivationBlock* xk, int64_t n,
              int64_t b, int64_t e) {
  const WeightMatrix& w = *p.w;
  const int64_t n_in = w.cols, n_out = w.rows;
  switch (w.type) {
    case DType::kF32:
      k.matmul_rows(static_cast<const float*>(w.data), x, p.y, n, n_in, n_out, b, e);
      return;
    case DType::kF16:
      k.matmul_f16(w.data, x, p.y, n, n_in, n_out, b, e);
      return;
    case DType::kBF16:
      k.matmul_bf16(w.data, x, p.y, n, n_in, n_out, b, e);
      return;
    case DType::kQ8_0:
      if (w.packed != nullptr && k.matmul_q8_0_packed != nullptr) {
        k.matmul_q8_0_packed(w.packed, xq, p.y, n, n_in, n_out, b, e);
      } else {
        k.matmul_q8_0(w.data, xq, p.y, n, n_in, n_out, b, e);
      }
      return;
    case DType::kQ4_0:
      if (w.packed != nullptr && k.matmul_q4_0_packed != nullptr) {
        k.matmul_q4_0_packed(w.packed, xq, p.y, n, n_in, n_out, b, e);
      } else {
        k.matmul_q4_0(w.data, xq, p.y, n, n_in, n_out, b, e);
      }
      return;
    case DType::kQ2_K:
    case DType::kQ3_K:
    case DType::kQ4_K:
    case DType::kQ5_K:
    case DType::kQ6_K:
      k.matmul_kquant(w.type, w.data, xk, p.y, n, n_in, n_out, b, e);
      return;
  }
}

// Each token's row of x: [n, n_in] quantised by `quantize` into blocks of `per_block`
// activations: [n, n_in / per_block]. Split by tokens over the pool (about 8 Ki activations a
// piece): with 16 tokens this took an eighth of a Q8_0 matmul's time on one thread while the
// other waited.
template <typename Block>
std::vector<Block> QuantizedRows(ThreadPool& pool, void (*quantize)(const float*, int64_t, Block*),
                                 const float* x, int64_t n, int64_t n_in, int64_t per_block) {
  const int64_t blocks = n_in / per_block;
  std::vector<Block> out(n * blocks);
  pool.ParallelFor(
      n,
      [&](int64_t t_begin, int64_t t_end) {
        for (int64_t t = t_begin; t < t_end; ++t) {
          quantize(x + t * n_in, n_in, out.data() + t * blocks);
        }
      },
      std::max<int64_t>(1, 8192 / std::max<int64_t>(1, n_in)));
  return out;
}

}  // namespace

void MatMul(const kernels::KernelSet& k, ThreadPool& pool, const WeightMatrix& w, const float* x,
            float* y, int64_t n) {
  const MatMulPart part{&w, y};
  MatMuls(k, pool, {&part, 1}, x, n, w.cols);
}

void MatMuls(const kernels::KernelSet& k, ThreadPool& pool, std::span<const MatMulPart> parts,
             const float* x, int64_t n, int64_t n_in) {
  int64_t total_rows = 0;
  bool any_blocks = false, any_kquants = false;
  for (const MatMulPart& p : parts) {
    total_rows += p.w->rows;
    any_blocks = any_blocks || (IsBlockType(p.w->type) && !IsKQuant(p.w->type));
    any_kquants = any_kquants || IsKQuant(p.w->type);
  }
  if (total_rows == 0 || n <= 0) return;
  std::vector<kernels::KActivationBlock> xk;  // [n, n_in / 256]
  if (any_kquants) xk = QuantizedRows(pool, k.quantize_k_activations, x, n, n_in, kSuperBlock);
  std::vector<kernels::ActivationBlock> xq;  // [n, n_in / 32]
  if (any_blocks) xq = QuantizedRows(pool, k.quantize_activations, x, n, n_in, kQuantBlock);
  // Groups per thread: enough work (about 64 Ki multiply-adds) to be worth a thread.
  const int64_t min_rows = std::max<int64_t>(1, 65536 / std::max<int64_t>(1, n * n_in));
  const int64_t groups = (total_rows + kRowGroup - 1) / kRowGroup;
  auto run = [&](int64_t group_begin, int64_t group_end) {
    const int64_t begin = group_begin * kRowGroup;
    const int64_t end = std::min(total_rows, group_end * kRowGroup);
    int64_t first = 0;  // the part's first row among all parts' rows
    for (const MatMulPart& p : parts) {
      const int64_t b = std::max(begin, first) - first;
      const int64_t e = std::min(end, first + p.w->rows) - first;
      if (b < e) PartRows(k, p, x, xq.data(), xk.data(), n, b, e);
      first += p.w->rows;
    }
  };
  // The threads take pieces of the groups in order as they get to them, not fixed halves: with
  // fixed halves the two threads of a one-token matmul finished microseconds apart (one starts
  // later, or gets less of the memory bandwidth) and the first waited for the other. A piece is
  // a share of what is left (a quarter of it on two threads), so the first pieces are long
  // sequential streams and the last ones short enough to end together; at least
  // kMinPieceWeights weights. Which thread computes a row does not change its result.
  const int64_t piece_groups =
      std::max<int64_t>(1, kMinPieceWeights / std::max<int64_t>(1, kRowGroup * n_in));
  std::atomic<int64_t> next{0};
  const int64_t shares = int64_t{2} * pool.num_threads();
  pool.ParallelFor(
      groups,
      [&](int64_t, int64_t) {  // the ranges only decide how many threads take part
        int64_t begin = next.load(std::memory_order_relaxed);
        while (begin < groups) {
          const int64_t size = std::max(piece_groups, (groups - begin) / shares);
          if (next.compare_exchange_weak(begin, begin + size, std::memory_order_relaxed)) {
            run(begin, std::min(groups, begin + size));
            begin = next.load(std::memory_order_relaxed);
          }
        }
      },
      (min_rows + kRowGroup - 1) / kRowGroup);
}

}  // namespace tf::engine
