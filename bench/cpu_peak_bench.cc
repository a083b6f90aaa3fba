// The CPU's arithmetic ceiling for the engine's matmuls: how many float32 multiply-adds
// (vfmadd on 512-bit and 256-bit registers) and how many int8 multiply-adds (VNNI's vpdpbusd)
// one thread, or every thread at once, completes per second, from register-only loops with
// enough independent chains to hide latency. Compared with a model's multiply-adds per token it
// bounds batched decode and prefill (docs/benchmarks/engine.md).
//
//   cpu_peak_bench [--threads 1] [--seconds 0.5]
//
// Needs AVX-512 F and VNNI: where the CPU lacks them it says so and exits with kNotThisCpu (77,
// which the test command takes for "skipped").
#include <immintrin.h>

#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

// g++ 12 warns that the _mm512_undefined_* inside some AVX-512 intrinsics is used uninitialized
// (a false positive: the lanes are overwritten).
#pragma GCC diagnostic ignored "-Wuninitialized"

#include "bench_util.h"

namespace tf::bench {
namespace {

constexpr int kChains = 12;  // independent accumulators: latency 4 x 2 pipes, with room
constexpr int64_t kIters = 1 << 20;
constexpr int kNotThisCpu = 77;  // the exit code for "cannot measure on this CPU"

// kIters x kChains 512-bit FMAs (16 multiply-adds each); returns a lane so nothing is dropped.
__attribute__((target("avx512f,fma"))) float Fma512(float seed) {
  __m512 acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = _mm512_set1_ps(seed + c);
  const __m512 a = _mm512_set1_ps(0.999f), b = _mm512_set1_ps(0.001f);
  for (int64_t i = 0; i < kIters; ++i) {
#pragma GCC unroll 16
    for (int c = 0; c < kChains; ++c) acc[c] = _mm512_fmadd_ps(acc[c], a, b);
  }
  __m512 s = acc[0];
  for (int c = 1; c < kChains; ++c) s = _mm512_add_ps(s, acc[c]);
  return _mm512_reduce_add_ps(s);
}

__attribute__((target("avx2,fma"))) float Fma256(float seed) {
  __m256 acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = _mm256_set1_ps(seed + c);
  const __m256 a = _mm256_set1_ps(0.999f), b = _mm256_set1_ps(0.001f);
  for (int64_t i = 0; i < kIters; ++i) {
#pragma GCC unroll 16
    for (int c = 0; c < kChains; ++c) acc[c] = _mm256_fmadd_ps(acc[c], a, b);
  }
  __m256 s = acc[0];
  for (int c = 1; c < kChains; ++c) s = _mm256_add_ps(s, acc[c]);
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, s);
  return lanes[0];
}

// kIters x kChains 512-bit vpdpbusd (64 byte multiply-adds each).
__attribute__((target("avx512f,avx512vnni"))) float Dpbusd512(float seed) {
  __m512i acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = _mm512_set1_epi32(static_cast<int>(seed) + c);
  const __m512i a = _mm512_set1_epi8(3), b = _mm512_set1_epi8(-2);
  for (int64_t i = 0; i < kIters; ++i) {
#pragma GCC unroll 16
    for (int c = 0; c < kChains; ++c) acc[c] = _mm512_dpbusd_epi32(acc[c], a, b);
  }
  __m512i s = acc[0];
  for (int c = 1; c < kChains; ++c) s = _mm512_add_epi32(s, acc[c]);
  return static_cast<float>(_mm512_reduce_add_epi32(s));
}

// Runs fn on `threads` threads at once; multiply-adds per second over all of them.
double Rate(float (*fn)(float), int64_t macs_per_call, int threads, double seconds) {
  std::vector<double> rates(threads);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      volatile float sink = fn(1.0f);  // warm up (and let the clock settle)
      int64_t calls = 0;
      auto start = std::chrono::steady_clock::now();
      double elapsed = 0;
      while (elapsed < seconds) {
        sink = sink + fn(static_cast<float>(calls));
        ++calls;
        elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      }
      rates[t] = static_cast<double>(calls) * static_cast<double>(macs_per_call) / elapsed;
    });
  }
  for (auto& t : pool) t.join();
  double total = 0;
  for (double r : rates) total += r;
  return total;
}

int Run(const Flags& flags) {
  const int threads = static_cast<int>(flags.Number("threads", 1));
  const double seconds = flags.Number("seconds", 0.5);
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("avx512vnni")) {
    std::fprintf(stderr, "cpu_peak_bench: this CPU lacks AVX-512 F or VNNI\n");
    return kNotThisCpu;
  }
  std::printf("%d thread(s), %.1f s per measurement\n", threads, seconds);
  const double f512 = Rate(Fma512, kIters * kChains * 16, threads, seconds);
  const double f256 = Rate(Fma256, kIters * kChains * 8, threads, seconds);
  const double i512 = Rate(Dpbusd512, kIters * kChains * 64, threads, seconds);
  std::printf("float32 FMA, 512-bit: %7.1f G multiply-adds/s (%6.1f GFLOP/s)\n", f512 / 1e9,
              2 * f512 / 1e9);
  std::printf("float32 FMA, 256-bit: %7.1f G multiply-adds/s (%6.1f GFLOP/s)\n", f256 / 1e9,
              2 * f256 / 1e9);
  std::printf("int8 vpdpbusd, 512-bit: %5.1f G multiply-adds/s\n", i512 / 1e9);
  return 0;
}

}  // namespace
}  // namespace tf::bench

int main(int argc, char** argv) { return tf::bench::Run(tf::bench::Flags(argc, argv)); }
