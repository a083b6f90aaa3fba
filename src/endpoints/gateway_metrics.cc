#include "endpoints/gateway_metrics.h"

#include <cstdio>

namespace tf::endpoints {
namespace {

std::string Labels(const std::string& project_id, const std::string& endpoint) {
  return "project_id=\"" + project_id + "\",endpoint=\"" + endpoint + "\"";
}

std::string Number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

}  // namespace

void GatewayMetrics::Histogram::Observe(double seconds) {
  for (size_t i = 0; i < kBuckets.size(); ++i) {
    if (seconds <= kBuckets[i]) ++counts[i];
  }
  ++total;
  sum += seconds;
}

GatewayMetrics::Series& GatewayMetrics::SeriesOf(const EndpointLabels& e) {
  Series& s = series_[{e.project_id, e.endpoint}];
  s.endpoint_id = e.endpoint_id;
  return s;
}

void GatewayMetrics::ObserveRequest(const EndpointLabels& e, int status, double seconds) {
  MutexLock lock(mu_);
  Series& s = SeriesOf(e);
  ++s.requests[status];
  s.latency.Observe(seconds);
}

void GatewayMetrics::ObserveFirstByte(const EndpointLabels& e, double seconds) {
  MutexLock lock(mu_);
  SeriesOf(e).first_byte.Observe(seconds);
}

void GatewayMetrics::AddCompletionTokens(const EndpointLabels& e, int64_t tokens) {
  MutexLock lock(mu_);
  SeriesOf(e).completion_tokens += tokens;
}

void GatewayMetrics::Render(std::string& out, LoadBoard& load, const RoutingTable& routes) const {
  std::map<Key, Series> series;
  {
    MutexLock lock(mu_);
    series = series_;
  }
  auto histogram = [&](const char* name, const char* help, const std::map<Key, Series>& all,
                       Histogram Series::*member) {
    out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " histogram\n";
    for (const auto& [key, s] : all) {
      const Histogram& h = s.*member;
      std::string labels = Labels(key.first, key.second);
      for (size_t i = 0; i < kBuckets.size(); ++i) {
        out += std::string(name) + "_bucket{" + labels + ",le=\"" + Number(kBuckets[i]) + "\"} " +
               std::to_string(h.counts[i]) + "\n";
      }
      out += std::string(name) + "_bucket{" + labels + ",le=\"+Inf\"} " + std::to_string(h.total) +
             "\n";
      out += std::string(name) + "_sum{" + labels + "} " + Number(h.sum) + "\n";
      out += std::string(name) + "_count{" + labels + "} " + std::to_string(h.total) + "\n";
    }
  };
  out += "# HELP tensorfleet_endpoint_requests_total Requests answered through the gateway.\n";
  out += "# TYPE tensorfleet_endpoint_requests_total counter\n";
  for (const auto& [key, s] : series) {
    for (const auto& [status, n] : s.requests) {
      out += "tensorfleet_endpoint_requests_total{" + Labels(key.first, key.second) + ",code=\"" +
             std::to_string(status) + "\"} " + std::to_string(n) + "\n";
    }
  }
  histogram("tensorfleet_endpoint_request_seconds",
            "From a request's arrival at the gateway to the last byte of its answer.", series,
            &Series::latency);
  histogram("tensorfleet_endpoint_first_byte_seconds",
            "From a request's arrival at the gateway to the first byte of its answer (the first "
            "token of a stream).",
            series, &Series::first_byte);
  out +=
      "# HELP tensorfleet_endpoint_completion_tokens_total Tokens generated, as the replicas' "
      "usage reported them (answers that were not streamed).\n";
  out += "# TYPE tensorfleet_endpoint_completion_tokens_total counter\n";
  for (const auto& [key, s] : series) {
    out += "tensorfleet_endpoint_completion_tokens_total{" + Labels(key.first, key.second) + "} " +
           std::to_string(s.completion_tokens) + "\n";
  }
  out += "# HELP tensorfleet_endpoint_queue_depth Requests waiting for a replica.\n";
  out += "# TYPE tensorfleet_endpoint_queue_depth gauge\n";
  for (const auto& [key, s] : series) {
    out += "tensorfleet_endpoint_queue_depth{" + Labels(key.first, key.second) + "} " +
           std::to_string(load.QueuedOf(s.endpoint_id)) + "\n";
  }
  out += "# HELP tensorfleet_endpoint_in_flight Requests being answered by replicas.\n";
  out += "# TYPE tensorfleet_endpoint_in_flight gauge\n";
  for (const auto& [key, s] : series) {
    out += "tensorfleet_endpoint_in_flight{" + Labels(key.first, key.second) + "} " +
           std::to_string(load.InFlightTotalOf(s.endpoint_id)) + "\n";
  }
  out += "# HELP tensorfleet_endpoint_replicas Replicas by state, as the gateway last read them.\n";
  out += "# TYPE tensorfleet_endpoint_replicas gauge\n";
  for (const Route& r : routes.All()) {
    for (const auto& [state, n] : r.replicas_by_state) {
      out += "tensorfleet_endpoint_replicas{" + Labels(r.project_id, r.name) + ",state=\"" + state +
             "\"} " + std::to_string(n) + "\n";
    }
  }
}

}  // namespace tf::endpoints
