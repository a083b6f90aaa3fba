#include "engine/matmul.h"

#include <algorithm>
#include <vector>

namespace tf::engine {

void MatMul(const kernels::KernelSet& k, ThreadPool& pool, const WeightMatrix& w, const float* x,
            float* y, int64_t n) {
  const int64_t n_in = w.cols, n_out = w.rows;
  // Rows per range: enough work (about 64 Ki multiply-adds) to be worth a thread.
  const int64_t min_rows = std::max<int64_t>(1, 65536 / std::max<int64_t>(1, n * n_in));
  auto split = [&](const auto& rows) { pool.ParallelFor(n_out, rows, min_rows); };
  switch (w.type) {
    case DType::kF32: {
      const auto* wf = static_cast<const float*>(w.data);
      split([&](int64_t b, int64_t e) { k.matmul_rows(wf, x, y, n, n_in, n_out, b, e); });
      return;
    }
    case DType::kF16:
      split([&](int64_t b, int64_t e) { k.matmul_f16(w.data, x, y, n, n_in, n_out, b, e); });
      return;
    case DType::kBF16:
      split([&](int64_t b, int64_t e) { k.matmul_bf16(w.data, x, y, n, n_in, n_out, b, e); });
      return;
    case DType::kQ8_0:
    case DType::kQ4_0: {
      const int64_t blocks = n_in / kQuantBlock;
      std::vector<kernels::ActivationBlock> xq(n * blocks);  // [n, n_in / 32]
      for (int64_t t = 0; t < n; ++t) {
        kernels::QuantizeActivations(x + t * n_in, n_in, xq.data() + t * blocks);
      }
      auto* fn = w.type == DType::kQ8_0 ? k.matmul_q8_0 : k.matmul_q4_0;
      split([&](int64_t b, int64_t e) { fn(w.data, xq.data(), y, n, n_in, n_out, b, e); });
      return;
    }
  }
}

}  // namespace tf::engine
