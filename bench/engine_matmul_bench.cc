// One matmul per weight type on one thread: how many bytes of weights per second each typed
// kernel of the best kernel set streams, for one token (decode) or several.
//
//   engine_matmul_bench [--rows 8192] [--cols 4096] [--tokens 1] [--reps 5]
//
// A matrix much larger than the caches measures the kernel against memory bandwidth (the F32
// kernel is the yardstick: it does the least arithmetic per byte); one that fits in the caches
// (--rows 2048 --cols 768, 6 MiB in F32) measures its arithmetic.
#include <chrono>
#include <cstdio>
#include <random>
#include <vector>

#include "bench_util.h"
#include "engine/dtype.h"
#include "engine/kernels/kernels.h"
#include "engine/quant.h"

namespace tf::bench {
namespace {

int Run(const Flags& flags) {
  using engine::DType;
  const auto rows = static_cast<int64_t>(flags.Number("rows", 8192));
  const auto cols = static_cast<int64_t>(flags.Number("cols", 4096)) / 32 * 32;
  const auto tokens = static_cast<int64_t>(flags.Number("tokens", 1));
  const int reps = static_cast<int>(flags.Number("reps", 5));
  const auto& k = engine::kernels::BestKernels();
  std::mt19937 rng(1);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> w(rows * cols), x(tokens * cols), y(tokens * rows);
  for (float& v : w) v = dist(rng);
  for (float& v : x) v = dist(rng);
  std::vector<uint8_t> f16(rows * cols * 2), q8(rows * engine::RowBytes(DType::kQ8_0, cols)),
      q4(rows * engine::RowBytes(DType::kQ4_0, cols));
  for (int64_t i = 0; i < rows * cols; ++i) {
    uint16_t h = engine::F32ToF16(w[i]);
    f16[2 * i] = static_cast<uint8_t>(h & 0xff);
    f16[2 * i + 1] = static_cast<uint8_t>(h >> 8);
  }
  for (int64_t r = 0; r < rows; ++r) {
    engine::QuantizeRowQ8_0(&w[r * cols], cols, &q8[r * engine::RowBytes(DType::kQ8_0, cols)]);
    engine::QuantizeRowQ4_0(&w[r * cols], cols, &q4[r * engine::RowBytes(DType::kQ4_0, cols)]);
  }
  std::vector<engine::kernels::ActivationBlock> xq(tokens * cols / 32);
  for (int64_t t = 0; t < tokens; ++t) {
    engine::kernels::QuantizeActivations(&x[t * cols], cols, &xq[t * cols / 32]);
  }
  std::printf("%lld x %lld, %lld token(s), one thread, %s kernels\n", static_cast<long long>(rows),
              static_cast<long long>(cols), static_cast<long long>(tokens), k.name);
  auto time = [&](const char* name, double bytes, auto fn) {
    fn();  // warm up
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; ++i) fn();
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    s /= reps;
    std::printf("%-5s %8.1f MB  %8.2f GB/s of weights  %10.1f us\n", name, bytes / 1e6,
                bytes / s / 1e9, s * 1e6);
  };
  time("F32", rows * cols * 4.0,
       [&] { k.matmul_rows(w.data(), x.data(), y.data(), tokens, cols, rows, 0, rows); });
  time("F16", rows * cols * 2.0,
       [&] { k.matmul_f16(f16.data(), x.data(), y.data(), tokens, cols, rows, 0, rows); });
  time("Q8_0", static_cast<double>(q8.size()),
       [&] { k.matmul_q8_0(q8.data(), xq.data(), y.data(), tokens, cols, rows, 0, rows); });
  time("Q4_0", static_cast<double>(q4.size()),
       [&] { k.matmul_q4_0(q4.data(), xq.data(), y.data(), tokens, cols, rows, 0, rows); });
  return 0;
}

}  // namespace
}  // namespace tf::bench

int main(int argc, char** argv) { return tf::bench::Run(tf::bench::Flags(argc, argv)); }
