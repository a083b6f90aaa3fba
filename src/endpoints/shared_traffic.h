// Endpoints' recent traffic across the servers that share a store (docs/endpoints.md, "Several
// servers"). Each server's gateway records what it answered (recent_requests.h). With a shared
// store, each server also writes every closed interval of kTrafficIntervalMs in which it
// answered an endpoint (TrafficPublisher: counts, tokens and latency histograms), and
// `endpoint describe` on any server adds the other servers' intervals of the window to its own
// requests (TrafficView). An idle server writes nothing.
#pragma once

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "endpoints/recent_requests.h"
#include "store/store.h"

namespace tf::endpoints {

inline constexpr TimeMs kTrafficIntervalMs = 5'000;
inline constexpr TimeMs kTrafficForgetMs = 3'600'000;  // older intervals are deleted

// Latencies as counts in logarithmic buckets, each 4% wider than the one below, so that the
// histograms of several servers add up: a percentile read from them is within 2% of the exact
// one (the bucket's geometric middle).
class LatencyHistogram {
 public:
  void Add(double seconds);
  void Merge(const LatencyHistogram& other);
  // The nearest-rank percentile `p` (0-100) in seconds; 0 when empty.
  double Percentile(double p) const;
  int64_t count() const { return count_; }
  nlohmann::json ToJson() const;  // {"bucket": count, ...}
  // InvalidArgument for anything ToJson would not write.
  static Result<LatencyHistogram> FromJson(const nlohmann::json& j);

 private:
  std::map<int, int64_t> counts_;  // by bucket
  int64_t count_ = 0;
};

// What a gateway answered of one endpoint over some time.
struct TrafficSlice {
  int64_t requests = 0;
  int64_t errors = 0;  // 5xx and 429
  int64_t completion_tokens = 0;
  LatencyHistogram seconds, first_byte_seconds;  // of the requests answered 2xx

  void Add(const RequestRecord& r);
  void Merge(const TrafficSlice& other);
  std::string ToJson() const;
  static Result<TrafficSlice> FromJson(const std::string& text);
};

// Writes this server's closed intervals. Not thread-safe: one caller (the endpoint loop).
class TrafficPublisher {
 public:
  TrafficPublisher(store::EndpointStore& store, const RecentRequests& recent, const Clock& clock,
                   std::string server_id)
      : store_(store), recent_(recent), clock_(clock), server_id_(std::move(server_id)) {}

  // Writes each interval closed since the last call in which an endpoint had requests, one row
  // per endpoint and interval, and forgets intervals older than kTrafficForgetMs. Writes
  // nothing when none had any. After a failed write the same intervals are written next time.
  Status Publish();

 private:
  store::EndpointStore& store_;
  const RecentRequests& recent_;
  const Clock& clock_;
  const std::string server_id_;
  TimeMs published_until_ = 0;  // intervals that end at or before this are written
};

// An endpoint's traffic over the last kRecentWindowMs, as `describe` shows it: this server's
// requests, and with a shared store the other servers' published intervals added.
class TrafficView {
 public:
  // `shared` null: this server's requests only (the store is not shared).
  TrafficView(const RecentRequests& recent, store::EndpointStore* shared, std::string server_id)
      : recent_(recent), shared_(shared), server_id_(std::move(server_id)) {}

  // Exact (nearest-rank percentiles over this server's requests) when no other server
  // answered the endpoint in the window; else the merged histograms' percentiles. `servers`
  // (optional) gets how many servers answered.
  Result<RecentSummary> Summary(const std::string& endpoint_id, TimeMs now,
                                int* servers = nullptr) const;

 private:
  const RecentRequests& recent_;
  store::EndpointStore* shared_;
  const std::string server_id_;
};

}  // namespace tf::endpoints
