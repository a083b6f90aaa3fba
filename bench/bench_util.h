// What the queue benchmarks share: flags, the throughput and latency loops, and the output (a
// table on stdout and one JSON object per line for scripts).
//
// Throughput: N threads each repeat a cycle (send a batch, receive a batch, delete what was
// received) and report how many messages they completed. After a warm-up the completed count is
// sampled twice, `seconds` apart: messages/s = completed messages (sent, received and deleted)
// per second.
// Latency: one thread repeats a single-message round trip (send 1, receive 1, delete 1, one after
// the other) for `seconds`; the percentiles are of the whole round trip.
#pragma once

#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

namespace tf::bench {

// --name=value or --name value; a flag with no value is "true".
class Flags {
 public:
  Flags(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
      std::string arg = argv[i];
      if (arg.rfind("--", 0) != 0) {
        std::fprintf(stderr, "unexpected argument '%s'\n", arg.c_str());
        std::exit(2);
      }
      arg = arg.substr(2);
      size_t eq = arg.find('=');
      if (eq != std::string::npos) {
        values_[arg.substr(0, eq)] = arg.substr(eq + 1);
      } else if (i + 1 < argc && std::string(argv[i + 1]).rfind("--", 0) != 0) {
        values_[arg] = argv[++i];
      } else {
        values_[arg] = "true";
      }
    }
  }
  std::string Get(const std::string& name, const std::string& fallback) const {
    auto it = values_.find(name);
    return it == values_.end() ? fallback : it->second;
  }
  double Number(const std::string& name, double fallback) const {
    auto it = values_.find(name);
    return it == values_.end() ? fallback : std::atof(it->second.c_str());
  }
  bool Has(const std::string& name) const { return values_.count(name) > 0; }

 private:
  std::map<std::string, std::string> values_;
};

// One line of the results.
struct Row {
  std::string system;  // "tensorfleet sqlite", "redis streams", ...
  std::string path;    // "direct", "http", "appendfsync always", ...
  std::string kind;    // "throughput" or "latency"
  int threads = 1;
  int batch = 1;
  double seconds = 0;    // measured time
  int64_t messages = 0;  // completed in the measured time
  double messages_per_s = 0;
  double p50_us = 0, p90_us = 0, p99_us = 0;  // latency rows only
  int64_t errors = 0;
  // CPU time (user + system) of this whole process per 1,000 messages over the measured time;
  // throughput rows only. It counts the benchmark's clients, and the server only where it runs
  // in the same process (queue_bench's HTTP case), not a separate server (PostgreSQL, Redis).
  double process_cpu_ms_per_1k = 0;
  std::string note;
};

// User + system CPU time this process has used so far, in milliseconds.
inline double ProcessCpuMs() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  auto ms = [](const timeval& t) { return t.tv_sec * 1e3 + t.tv_usec / 1e3; };
  return ms(u.ru_utime) + ms(u.ru_stime);
}

inline double Percentile(std::vector<double>& sorted_us, double p) {
  if (sorted_us.empty()) return 0;
  size_t i = static_cast<size_t>(p / 100.0 * static_cast<double>(sorted_us.size() - 1) + 0.5);
  return sorted_us[std::min(i, sorted_us.size() - 1)];
}

// A cycle completes some messages; it returns how many, or -1 after a failure (counted as an
// error; the loop goes on).
using Cycle = std::function<int()>;

struct Timing {
  double warmup_s = 1;
  double seconds = 8;  // 0 or less: the case is skipped
};

// Runs `make_cycle(thread)` on each of `threads` threads until the measurement ends.
inline Row MeasureThroughput(int threads, const Timing& t,
                             const std::function<Cycle(int thread)>& make_cycle) {
  std::atomic<int64_t> completed{0};
  std::atomic<int64_t> errors{0};
  std::atomic<bool> stop{false};
  std::vector<Cycle> cycles;
  for (int i = 0; i < threads; ++i) cycles.push_back(make_cycle(i));
  std::vector<std::thread> pool;
  for (int i = 0; i < threads; ++i) {
    pool.emplace_back([&, i] {
      while (!stop.load(std::memory_order_relaxed)) {
        int n = cycles[i]();
        if (n < 0) {
          errors.fetch_add(1);
          std::this_thread::sleep_for(std::chrono::milliseconds(10));
        } else {
          completed.fetch_add(n, std::memory_order_relaxed);
        }
      }
    });
  }
  using Clock = std::chrono::steady_clock;
  std::this_thread::sleep_for(std::chrono::duration<double>(t.warmup_s));
  int64_t c0 = completed.load();
  int64_t e0 = errors.load();
  double cpu0 = ProcessCpuMs();
  auto t0 = Clock::now();
  std::this_thread::sleep_for(std::chrono::duration<double>(t.seconds));
  int64_t c1 = completed.load();
  int64_t e1 = errors.load();
  double cpu1 = ProcessCpuMs();
  auto t1 = Clock::now();
  stop = true;
  for (auto& th : pool) th.join();
  Row row;
  row.kind = "throughput";
  row.threads = threads;
  row.seconds = std::chrono::duration<double>(t1 - t0).count();
  row.messages = c1 - c0;
  row.messages_per_s = static_cast<double>(row.messages) / row.seconds;
  row.errors = e1 - e0;
  if (row.messages > 0) row.process_cpu_ms_per_1k = (cpu1 - cpu0) * 1000 / row.messages;
  return row;
}

// Repeats `round_trip` (which returns false on failure) on this thread.
inline Row MeasureLatency(const Timing& t, const std::function<bool()>& round_trip) {
  using Clock = std::chrono::steady_clock;
  auto warm_end = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                     std::chrono::duration<double>(t.warmup_s));
  while (Clock::now() < warm_end) (void)round_trip();
  std::vector<double> us;
  int64_t errors = 0;
  auto t0 = Clock::now();
  auto end =
      t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(t.seconds));
  for (auto now = t0; now < end;) {
    bool ok = round_trip();
    auto after = Clock::now();
    if (ok) {
      us.push_back(std::chrono::duration<double, std::micro>(after - now).count());
    } else {
      ++errors;
    }
    now = after;
  }
  Row row;
  row.kind = "latency";
  row.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  row.messages = static_cast<int64_t>(us.size());
  row.messages_per_s = static_cast<double>(us.size()) / row.seconds;
  std::sort(us.begin(), us.end());
  row.p50_us = Percentile(us, 50);
  row.p90_us = Percentile(us, 90);
  row.p99_us = Percentile(us, 99);
  row.errors = errors;
  return row;
}

inline nlohmann::json RowToJson(const Row& r) {
  return {{"system", r.system},
          {"path", r.path},
          {"kind", r.kind},
          {"threads", r.threads},
          {"batch", r.batch},
          {"seconds", r.seconds},
          {"messages", r.messages},
          {"messages_per_s", r.messages_per_s},
          {"p50_us", r.p50_us},
          {"p90_us", r.p90_us},
          {"p99_us", r.p99_us},
          {"errors", r.errors},
          {"process_cpu_ms_per_1k", r.process_cpu_ms_per_1k},
          {"note", r.note}};
}

// Prints rows as they come, and appends each to the --json file if one was given.
class Report {
 public:
  explicit Report(const std::string& json_path) {
    if (!json_path.empty()) json_.open(json_path, std::ios::app);
    std::printf("%-22s %-20s %-10s %7s %5s %12s %10s %10s %10s %6s %10s\n", "system", "path",
                "kind", "threads", "batch", "messages/s", "p50 ms", "p90 ms", "p99 ms", "errors",
                "cpu ms/1k");
    std::fflush(stdout);
  }
  void Add(const Row& r) {
    if (r.kind == "latency") {
      std::printf("%-22s %-20s %-10s %7d %5d %12s %10.3f %10.3f %10.3f %6lld\n", r.system.c_str(),
                  r.path.c_str(), r.kind.c_str(), r.threads, r.batch, "-", r.p50_us / 1000,
                  r.p90_us / 1000, r.p99_us / 1000, static_cast<long long>(r.errors));
    } else {
      std::printf("%-22s %-20s %-10s %7d %5d %12.0f %10s %10s %10s %6lld %10.1f\n",
                  r.system.c_str(), r.path.c_str(), r.kind.c_str(), r.threads, r.batch,
                  r.messages_per_s, "-", "-", "-", static_cast<long long>(r.errors),
                  r.process_cpu_ms_per_1k);
    }
    if (!r.note.empty()) std::printf("%22s note: %s\n", "", r.note.c_str());
    std::fflush(stdout);
    if (json_.is_open()) {
      json_ << RowToJson(r).dump() << "\n";
      json_.flush();
    }
  }

 private:
  std::ofstream json_;
};

// A message body of `n` printable bytes.
inline std::string Body(size_t n) {
  std::string s(n, 'x');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>('a' + i % 26);
  return s;
}

}  // namespace tf::bench
