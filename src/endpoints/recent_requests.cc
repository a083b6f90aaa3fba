#include "endpoints/recent_requests.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace tf::endpoints {
namespace {

// The nearest-rank percentile `p` (0-100) of sorted `values`.
double Percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(sorted.size())));
  return sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1];
}

}  // namespace

void RecentRequests::Add(const std::string& endpoint_id, const RequestRecord& record) {
  MutexLock lock(mu_);
  std::deque<RequestRecord>& records = by_endpoint_[endpoint_id];
  records.push_back(record);
  while (records.size() > kMaxRecentRequests ||
         (!records.empty() && records.front().at <= record.at - kRecentWindowMs)) {
    records.pop_front();
  }
  if (++adds_ % 1024 == 0) {  // a deleted endpoint's records go once they are all stale
    std::erase_if(by_endpoint_, [&](const auto& entry) {
      return entry.second.empty() || entry.second.back().at <= record.at - kRecentWindowMs;
    });
  }
}

RecentSummary RecentRequests::Summarize(const std::string& endpoint_id, TimeMs now) const {
  RecentSummary out;
  std::vector<double> seconds, first_byte;
  {
    MutexLock lock(mu_);
    auto it = by_endpoint_.find(endpoint_id);
    if (it == by_endpoint_.end()) return out;
    for (const RequestRecord& r : it->second) {
      if (r.at <= now - kRecentWindowMs || r.at > now) continue;
      ++out.requests;
      if (r.status >= 500 || r.status == 429) ++out.errors;
      out.completion_tokens += r.completion_tokens;
      if (r.status / 100 == 2) {
        seconds.push_back(r.seconds);
        first_byte.push_back(r.first_byte_seconds);
      }
    }
  }
  std::sort(seconds.begin(), seconds.end());
  std::sort(first_byte.begin(), first_byte.end());
  const double window_seconds = static_cast<double>(out.window_ms) / kSecondMs;
  out.requests_per_second = static_cast<double>(out.requests) / window_seconds;
  out.tokens_per_second = static_cast<double>(out.completion_tokens) / window_seconds;
  out.p50_seconds = Percentile(seconds, 50);
  out.p90_seconds = Percentile(seconds, 90);
  out.p99_seconds = Percentile(seconds, 99);
  out.p50_first_byte_seconds = Percentile(first_byte, 50);
  return out;
}

std::vector<std::string> RecentRequests::Endpoints() const {
  MutexLock lock(mu_);
  std::vector<std::string> out;
  for (const auto& [id, records] : by_endpoint_) {
    if (!records.empty()) out.push_back(id);
  }
  return out;
}

std::vector<RequestRecord> RecentRequests::Between(const std::string& endpoint_id, TimeMs from,
                                                   TimeMs to) const {
  MutexLock lock(mu_);
  std::vector<RequestRecord> out;
  auto it = by_endpoint_.find(endpoint_id);
  if (it == by_endpoint_.end()) return out;
  for (const RequestRecord& r : it->second) {
    if (r.at >= from && r.at < to) out.push_back(r);
  }
  return out;
}

}  // namespace tf::endpoints
