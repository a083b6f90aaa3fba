// Latency at a fixed request rate (open loop): POSTs a body to a URL at --rate requests per
// second for --seconds, spread over --connections keep-alive connections (one thread each), and
// prints the percentiles of each request's latency as one JSON line. Each request's latency
// counts from when it was due, not from when it was sent, so that a slow answer that delays the
// next request shows in the figures (no coordinated omission).
//
//   http_latency_bench --url http://127.0.0.1:8470/openai/v1/chat/completions
//       --header "Authorization: Bearer TOKEN" --body '{"model":"m","messages":[...]}'
//       --rate 1000 --seconds 10 --connections 16
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "http/http.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  std::string url;
  std::string body = "{}";
  tf::http::Headers headers = {{"Content-Type", "application/json"}};
  double rate = 1000;
  double seconds = 10;
  double warmup = 1;
  int connections = 16;
};

bool ParseFlags(int argc, char** argv, Options& o) {
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--url") {
      o.url = value;
    } else if (flag == "--body") {
      o.body = value;
    } else if (flag == "--header") {
      size_t colon = value.find(':');
      if (colon == std::string::npos) return false;
      size_t start = value.find_first_not_of(' ', colon + 1);
      o.headers.emplace_back(value.substr(0, colon), value.substr(start));
    } else if (flag == "--rate") {
      o.rate = std::stod(value);
    } else if (flag == "--seconds") {
      o.seconds = std::stod(value);
    } else if (flag == "--warmup") {
      o.warmup = std::stod(value);
    } else if (flag == "--connections") {
      o.connections = std::stoi(value);
    } else {
      return false;
    }
  }
  return !o.url.empty() && o.rate > 0 && o.connections > 0;
}

// ParseFlags, with a number that does not parse as a usage error.
bool Parse(int argc, char** argv, Options& o) {
  try {
    return ParseFlags(argc, argv, o);
  } catch (const std::exception&) {
    return false;
  }
}

double Percentile(std::vector<double>& v, double p) {
  if (v.empty()) return 0;
  size_t k = std::min(v.size() - 1, static_cast<size_t>(p / 100.0 * static_cast<double>(v.size())));
  std::nth_element(v.begin(), v.begin() + static_cast<long>(k), v.end());
  return v[k];
}

}  // namespace

int Run(int argc, char** argv) {
  Options o;
  if (!Parse(argc, argv, o)) {
    std::fprintf(stderr,
                 "usage: http_latency_bench --url URL [--body JSON] [--header 'Name: value']... "
                 "[--rate N] [--seconds S] [--warmup S] [--connections C]\n");
    return 2;
  }
  size_t slash = o.url.find('/', o.url.find("//") + 2);
  std::string base = o.url.substr(0, slash);
  std::string target = slash == std::string::npos ? "/" : o.url.substr(slash);

  // Request n of connection c is due at start + (n * connections + c) / rate.
  const auto start = Clock::now() + std::chrono::milliseconds(200);
  const double total = o.warmup + o.seconds;
  std::mutex mu;
  std::vector<double> latencies_ms;
  int errors = 0, non_2xx = 0;
  std::vector<std::thread> threads;
  for (int c = 0; c < o.connections; ++c) {
    threads.emplace_back([&, c] {
      auto client = tf::http::Client::Create(base);
      if (!client.ok()) return;
      std::vector<double> mine;
      int my_errors = 0, my_non_2xx = 0;
      for (long n = 0;; ++n) {
        double due_s = static_cast<double>(n * o.connections + c) / o.rate;
        if (due_s >= total) break;
        auto due = start + std::chrono::duration_cast<Clock::duration>(
                               std::chrono::duration<double>(due_s));
        std::this_thread::sleep_until(due);
        auto r = (*client)->Send("POST", target, o.headers, o.body, std::chrono::seconds(30));
        double ms = std::chrono::duration<double, std::milli>(Clock::now() - due).count();
        if (!r.ok()) {
          ++my_errors;
        } else if (r->status / 100 != 2) {
          ++my_non_2xx;
        } else if (due_s >= o.warmup) {
          mine.push_back(ms);
        }
      }
      std::lock_guard lock(mu);
      latencies_ms.insert(latencies_ms.end(), mine.begin(), mine.end());
      errors += my_errors;
      non_2xx += my_non_2xx;
    });
  }
  for (auto& t : threads) t.join();
  nlohmann::json out = {{"url", o.url},
                        {"rate", o.rate},
                        {"seconds", o.seconds},
                        {"connections", o.connections},
                        {"requests", latencies_ms.size()},
                        {"errors", errors},
                        {"non_2xx", non_2xx},
                        {"p50_ms", Percentile(latencies_ms, 50)},
                        {"p90_ms", Percentile(latencies_ms, 90)},
                        {"p99_ms", Percentile(latencies_ms, 99)},
                        {"p999_ms", Percentile(latencies_ms, 99.9)},
                        {"max_ms", Percentile(latencies_ms, 100)}};
  std::cout << out.dump() << std::endl;
  return errors == 0 && non_2xx == 0 ? 0 : 1;
}

int main(int argc, char** argv) {
  try {
    return Run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "http_latency_bench: %s\n", e.what());
    return 1;
  }
}
