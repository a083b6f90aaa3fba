// Request counters and latency histograms, rendered in Prometheus text format. Thread-safe.
#pragma once

#include <array>
#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "base/mutex.h"

namespace tf::api {

class Metrics {
 public:
  // route: the pattern that matched ("/v1/queues/{name}"), so label values stay bounded.
  void ObserveRequest(const std::string& route, const std::string& method, int status,
                      double seconds);
  // Appends the request metrics in Prometheus text exposition format, then what each collector
  // appends. Collectors may block (Render runs on the blocking pool).
  void Render(std::string& out) const;
  // Adds text computed at each scrape (gauges read from the store). Call before serving starts.
  void AddCollector(std::function<void(std::string&)> collect) {
    collectors_.push_back(std::move(collect));
  }

 private:
  void RenderRequests(std::string& out) const;

  static constexpr std::array<double, 10> kBuckets = {0.0005, 0.001, 0.0025, 0.005, 0.01,
                                                      0.025,  0.05,  0.1,    0.5,   2.5};
  struct Histogram {
    std::array<uint64_t, kBuckets.size()> counts{};
    uint64_t total = 0;
    double sum = 0;
  };
  mutable Mutex mu_;
  std::map<std::tuple<std::string, std::string, int>, uint64_t> requests_ GUARDED_BY(mu_);
  std::map<std::pair<std::string, std::string>, Histogram> latency_ GUARDED_BY(mu_);
  std::vector<std::function<void(std::string&)>> collectors_;  // fixed before serving starts
};

}  // namespace tf::api
