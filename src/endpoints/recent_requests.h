// The requests an endpoint's gateway answered lately, for `endpoint describe`: how many, how
// fast, how many tokens, over the last few minutes (the Prometheus metrics in
// gateway_metrics.h count since the start, for a scraper to difference). Thread-safe.
#pragma once

#include <deque>
#include <map>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/mutex.h"

namespace tf::endpoints {

inline constexpr TimeMs kRecentWindowMs = 5 * kMinuteMs;
inline constexpr size_t kMaxRecentRequests = 20'000;  // per endpoint; the oldest go first

struct RequestRecord {
  TimeMs at = 0;                  // when it ended
  int status = 0;                 // the status the client got
  double seconds = 0;             // arrival to the last byte
  double first_byte_seconds = 0;  // arrival to the first byte (a stream's first token)
  int64_t completion_tokens = 0;  // from the answer's usage, or a stream's events
};

struct RecentSummary {
  TimeMs window_ms = kRecentWindowMs;
  int64_t requests = 0;
  int64_t errors = 0;  // 5xx, and 429
  double requests_per_second = 0;
  // Percentiles of the requests answered 2xx (nearest rank); 0 with none.
  double p50_seconds = 0, p90_seconds = 0, p99_seconds = 0;
  double p50_first_byte_seconds = 0;
  int64_t completion_tokens = 0;
  double tokens_per_second = 0;
};

class RecentRequests {
 public:
  void Add(const std::string& endpoint_id, const RequestRecord& record);
  // Over (now - kRecentWindowMs, now].
  RecentSummary Summarize(const std::string& endpoint_id, TimeMs now) const;
  // The endpoints with records, and an endpoint's records that ended in [from, to).
  std::vector<std::string> Endpoints() const;
  std::vector<RequestRecord> Between(const std::string& endpoint_id, TimeMs from, TimeMs to) const;

 private:
  mutable Mutex mu_;
  std::map<std::string, std::deque<RequestRecord>> by_endpoint_ GUARDED_BY(mu_);
  uint64_t adds_ GUARDED_BY(mu_) = 0;  // every so often, endpoints gone quiet are forgotten
};

}  // namespace tf::endpoints
