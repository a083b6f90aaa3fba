#include "api/metrics.h"

#include <cstdio>

namespace tf::api {

void Metrics::ObserveRequest(const std::string& route, const std::string& method, int status,
                             double seconds) {
  MutexLock lock(mu_);
  requests_[{route, method, status}] += 1;
  Histogram& h = latency_[{route, method}];
  for (size_t i = 0; i < kBuckets.size(); ++i) {
    if (seconds <= kBuckets[i]) h.counts[i] += 1;
  }
  h.total += 1;
  h.sum += seconds;
}

void Metrics::Render(std::string& out) const {
  RenderRequests(out);
  for (const auto& collect : collectors_) collect(out);
}

void Metrics::RenderRequests(std::string& out) const {
  MutexLock lock(mu_);
  char buf[512];
  out += "# HELP tensorfleet_http_requests_total HTTP requests by route, method and status.\n";
  out += "# TYPE tensorfleet_http_requests_total counter\n";
  for (const auto& [key, n] : requests_) {
    const auto& [route, method, status] = key;
    std::snprintf(
        buf, sizeof buf,
        "tensorfleet_http_requests_total{route=\"%s\",method=\"%s\",status=\"%d\"} %llu\n",
        route.c_str(), method.c_str(), status, static_cast<unsigned long long>(n));
    out += buf;
  }
  out += "# HELP tensorfleet_http_request_seconds Time to answer an HTTP request.\n";
  out += "# TYPE tensorfleet_http_request_seconds histogram\n";
  for (const auto& [key, h] : latency_) {
    const auto& [route, method] = key;
    for (size_t i = 0; i < kBuckets.size(); ++i) {
      std::snprintf(
          buf, sizeof buf,
          "tensorfleet_http_request_seconds_bucket{route=\"%s\",method=\"%s\",le=\"%g\"} %llu\n",
          route.c_str(), method.c_str(), kBuckets[i], static_cast<unsigned long long>(h.counts[i]));
      out += buf;
    }
    std::snprintf(
        buf, sizeof buf,
        "tensorfleet_http_request_seconds_bucket{route=\"%s\",method=\"%s\",le=\"+Inf\"} %llu\n"
        "tensorfleet_http_request_seconds_sum{route=\"%s\",method=\"%s\"} %.6f\n"
        "tensorfleet_http_request_seconds_count{route=\"%s\",method=\"%s\"} %llu\n",
        route.c_str(), method.c_str(), static_cast<unsigned long long>(h.total), route.c_str(),
        method.c_str(), h.sum, route.c_str(), method.c_str(),
        static_cast<unsigned long long>(h.total));
    out += buf;
  }
}

}  // namespace tf::api
