// Memory read bandwidth: the ceiling on decode speed for a model whose weights do not fit in the
// caches (every weight is read once per decode step).
//
//   membw [--threads N] [--mib M] [--passes P] [--json]
//
// Fills a buffer of M MiB (default 1024, many times any last-level cache), then P times (default
// 5) has N threads (default: one per hardware thread) each sum their contiguous slice of it with
// the widest loads the CPU has, and reports the best pass in GB/s (10^9 bytes per second): the
// bytes read over the time from the common start to the last thread's end.
#include <algorithm>
#include <barrier>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

// Sums 64-bit words with four independent accumulators; the clones let the compiler use 256- and
// 512-bit loads where the CPU has them, chosen when the program starts.
__attribute__((target_clones("avx512f", "avx2", "default"))) uint64_t SumWords(const uint64_t* p,
                                                                               size_t n) {
  uint64_t a = 0, b = 0, c = 0, d = 0;
  for (size_t i = 0; i + 4 <= n; i += 4) {
    a += p[i];
    b += p[i + 1];
    c += p[i + 2];
    d += p[i + 3];
  }
  return a ^ b ^ c ^ d;
}

volatile uint64_t g_sink;

struct Options {
  int threads = 0;
  size_t mib = 1024;
  int passes = 5;
  bool json = false;
};

[[noreturn]] void Usage(const char* why) {
  std::fprintf(stderr, "membw: %s\nusage: membw [--threads N] [--mib M] [--passes P] [--json]\n",
               why);
  std::exit(2);
}

long PositiveArg(int argc, char** argv, int& i) {
  if (i + 1 >= argc) Usage((std::string(argv[i]) + " needs a value").c_str());
  char* end = nullptr;
  long v = std::strtol(argv[i + 1], &end, 10);
  if (*end != '\0' || v <= 0) {
    Usage((std::string(argv[i]) + " wants a positive integer, not '" + argv[i + 1] + "'").c_str());
  }
  ++i;
  return v;
}

Options Parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--threads") {
      o.threads = static_cast<int>(PositiveArg(argc, argv, i));
    } else if (a == "--mib") {
      o.mib = static_cast<size_t>(PositiveArg(argc, argv, i));
    } else if (a == "--passes") {
      o.passes = static_cast<int>(PositiveArg(argc, argv, i));
    } else if (a == "--json") {
      o.json = true;
    } else {
      Usage(("unknown argument '" + a + "'").c_str());
    }
  }
  if (o.threads == 0)
    o.threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = Parse(argc, argv);
  const size_t words = o.mib * 1024 * 1024 / sizeof(uint64_t);
  std::vector<uint64_t> buf(words);
  for (size_t i = 0; i < words; ++i) buf[i] = i * 0x9e3779b97f4a7c15ull;  // every page touched

  using Clock = std::chrono::steady_clock;
  std::vector<double> rates;
  std::vector<uint64_t> sinks(o.threads);
  for (int pass = 0; pass < o.passes; ++pass) {
    std::barrier start(o.threads + 1);
    std::vector<std::thread> threads;
    const size_t slice = words / o.threads;
    for (int t = 0; t < o.threads; ++t) {
      threads.emplace_back([&, t] {
        start.arrive_and_wait();
        sinks[t] += SumWords(buf.data() + t * slice, slice);
      });
    }
    start.arrive_and_wait();
    auto t0 = Clock::now();
    for (auto& th : threads) th.join();
    double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    rates.push_back(static_cast<double>(slice * o.threads * sizeof(uint64_t)) / seconds / 1e9);
  }
  uint64_t sink = 0;
  for (uint64_t s : sinks) sink ^= s;
  g_sink = sink;  // the sums are used, so the reads cannot be optimised away
  double best = *std::max_element(rates.begin(), rates.end());
  if (o.json) {
    std::printf("{\"threads\": %d, \"mib\": %zu, \"passes\": %d, \"gb_per_s\": %.2f, \"all\": [",
                o.threads, o.mib, o.passes, best);
    for (size_t i = 0; i < rates.size(); ++i) std::printf("%s%.2f", i ? ", " : "", rates[i]);
    std::printf("]}\n");
  } else {
    std::printf("read bandwidth: %.2f GB/s (best of %d passes over %zu MiB, %d threads)\n", best,
                o.passes, o.mib, o.threads);
  }
  return 0;
}
