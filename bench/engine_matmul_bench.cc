// One matmul per weight type: how many bytes of weights per second each typed kernel of the best
// kernel set streams, for one token (decode) or several, on one thread or split by rows over
// several as the model splits them (engine::MatMul, activations quantised in the call). Q8_0
// and Q4_0 run on their rows as stored and, where the kernels have one, on the packed matmul
// (packed_blocks.h), as a model loaded on this CPU runs them. The K-quants (Q2_K .. Q6_K) run on
// random super-blocks (their speed does not depend on the values).
//
//   engine_matmul_bench [--rows 8192] [--cols 4096] [--tokens 1] [--reps 5] [--threads 1]
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
#include "engine/kernels/packed_blocks.h"
#include "engine/matmul.h"
#include "engine/quant.h"
#include "engine/thread_pool.h"

namespace tf::bench {
namespace {

// Random bytes as `rows` rows of K-quant super-blocks, with every d and dmin a small half (a
// random pattern there could be a NaN).
std::vector<uint8_t> RandomKQuant(engine::DType type, int64_t rows, int64_t cols,
                                  std::mt19937& rng) {
  std::vector<uint8_t> out(rows * engine::RowBytes(type, cols));
  for (auto& b : out) b = static_cast<uint8_t>(rng());
  const uint16_t small = engine::F32ToF16(0.001f);
  int d = 0, dmin = -1;  // where d and dmin are in a super-block
  switch (type) {
    case engine::DType::kQ2_K:
      d = 80, dmin = 82;
      break;
    case engine::DType::kQ3_K:
      d = 108;
      break;
    case engine::DType::kQ6_K:
      d = 208;
      break;
    default:
      d = 0, dmin = 2;
  }
  for (size_t at = 0; at < out.size(); at += engine::BlockBytes(type)) {
    for (int offset : {d, dmin}) {
      if (offset < 0) continue;
      out[at + offset] = static_cast<uint8_t>(small & 0xff);
      out[at + offset + 1] = static_cast<uint8_t>(small >> 8);
    }
  }
  return out;
}

int Run(const Flags& flags) {
  using engine::DType;
  const auto rows = static_cast<int64_t>(flags.Number("rows", 8192));
  const auto cols = static_cast<int64_t>(flags.Number("cols", 4096)) / 32 * 32;
  const auto tokens = static_cast<int64_t>(flags.Number("tokens", 1));
  const int reps = static_cast<int>(flags.Number("reps", 5));
  const int threads = static_cast<int>(flags.Number("threads", 1));
  const auto& k = engine::kernels::BestKernels();
  engine::ThreadPool pool(threads);
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
  std::vector<uint8_t> q8_packed(engine::kernels::PackedQ8_0Bytes(rows, cols)),
      q4_packed(engine::kernels::PackedQ4_0Bytes(rows, cols));
  const int64_t groups = (rows + engine::kernels::kPackRows - 1) / engine::kernels::kPackRows;
  engine::kernels::PackQ8_0(q8.data(), rows, cols, 0, groups, q8_packed.data());
  engine::kernels::PackQ4_0(q4.data(), rows, cols, 0, groups, q4_packed.data());
  std::printf("%lld x %lld, %lld token(s), %d thread(s), %s kernels\n",
              static_cast<long long>(rows), static_cast<long long>(cols),
              static_cast<long long>(tokens), threads, k.name);
  auto time = [&](const char* name, DType type, const void* data, const void* packed) {
    const engine::WeightMatrix m{type, data, rows, cols, name, packed};
    const double bytes = static_cast<double>(rows) * static_cast<double>(m.row_bytes());
    auto run = [&] { engine::MatMul(k, pool, m, x.data(), y.data(), tokens); };
    run();  // warm up
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; ++i) run();
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    s /= reps;
    std::printf("%-13s %8.1f MB  %8.2f GB/s of weights  %7.1f G multiply-adds/s  %10.1f us\n", name,
                bytes / 1e6, bytes / s / 1e9, static_cast<double>(rows) * cols * tokens / s / 1e9,
                s * 1e6);
  };
  time("F32", DType::kF32, w.data(), nullptr);
  time("F16", DType::kF16, f16.data(), nullptr);
  time("Q8_0", DType::kQ8_0, q8.data(), nullptr);
  if (k.matmul_q8_0_packed != nullptr) {
    time("Q8_0 packed", DType::kQ8_0, q8.data(), q8_packed.data());
  }
  time("Q4_0", DType::kQ4_0, q4.data(), nullptr);
  if (k.matmul_q4_0_packed != nullptr) {
    time("Q4_0 packed", DType::kQ4_0, q4.data(), q4_packed.data());
  }
  if (cols % engine::kSuperBlock == 0) {
    for (DType type : {DType::kQ2_K, DType::kQ3_K, DType::kQ4_K, DType::kQ5_K, DType::kQ6_K}) {
      const std::vector<uint8_t> blocks = RandomKQuant(type, rows, cols, rng);
      time(engine::DTypeName(type).data(), type, blocks.data(), nullptr);
    }
  }
  return 0;
}

}  // namespace
}  // namespace tf::bench

int main(int argc, char** argv) { return tf::bench::Run(tf::bench::Flags(argc, argv)); }
