// The gateway's Prometheus metrics, per endpoint (docs/endpoints.md, "Metrics"): requests by
// status, end-to-end latency and time to the first byte as histograms, completion tokens, and,
// at each scrape, the queue depth, the requests in flight and the replicas by state. Only
// endpoints that exist get series (a request for an unknown model is not counted here), so the
// label values stay bounded. Thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>

#include "base/mutex.h"
#include "endpoints/load_board.h"
#include "endpoints/routing_table.h"

namespace tf::endpoints {

struct EndpointLabels {
  std::string project_id;
  std::string endpoint;     // its name
  std::string endpoint_id;  // for the load board; not a label
};

class GatewayMetrics {
 public:
  // One request answered (for a stream: once its last byte was relayed).
  void ObserveRequest(const EndpointLabels& e, int status, double seconds);
  // The time from a request's arrival to the first byte of its answer.
  void ObserveFirstByte(const EndpointLabels& e, double seconds);
  void AddCompletionTokens(const EndpointLabels& e, int64_t tokens);

  // Appends every series, the gauges read from `load` and `routes` now.
  void Render(std::string& out, LoadBoard& load, const RoutingTable& routes) const;

 private:
  static constexpr std::array<double, 12> kBuckets = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                                      0.5,   1,    2.5,   5,    10,  30};
  struct Histogram {
    std::array<uint64_t, kBuckets.size()> counts{};
    uint64_t total = 0;
    double sum = 0;
    void Observe(double seconds);
  };
  using Key = std::pair<std::string, std::string>;  // (project id, endpoint)
  struct Series {
    std::string endpoint_id;
    std::map<int, uint64_t> requests;  // by status
    Histogram latency;
    Histogram first_byte;
    int64_t completion_tokens = 0;
  };
  Series& SeriesOf(const EndpointLabels& e) REQUIRES(mu_);

  mutable Mutex mu_;
  std::map<Key, Series> series_ GUARDED_BY(mu_);
};

}  // namespace tf::endpoints
