// Request counters and latency histograms, rendered in Prometheus text format. Thread-safe.
#pragma once

#include <array>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

namespace tf::api {

class Metrics {
 public:
  // route: the pattern that matched ("/v1/queues/{name}"), so label values stay bounded.
  void ObserveRequest(const std::string& route, const std::string& method, int status,
                      double seconds);
  // Appends the request metrics in Prometheus text exposition format.
  void Render(std::string& out) const;

 private:
  static constexpr std::array<double, 10> kBuckets = {0.0005, 0.001, 0.0025, 0.005, 0.01,
                                                      0.025,  0.05,  0.1,    0.5,   2.5};
  struct Histogram {
    std::array<uint64_t, kBuckets.size()> counts{};
    uint64_t total = 0;
    double sum = 0;
  };
  mutable std::mutex mu_;
  std::map<std::tuple<std::string, std::string, int>, uint64_t> requests_;  // guarded by mu_
  std::map<std::pair<std::string, std::string>, Histogram> latency_;        // guarded by mu_
};

}  // namespace tf::api
