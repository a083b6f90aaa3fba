#include "endpoints/shared_traffic.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace tf::endpoints {
namespace {

using Json = nlohmann::json;

constexpr double kBucketGrowth = 1.04;
constexpr double kSmallestSeconds = 1e-5;  // 10 us: everything below shares bucket 0
constexpr int kMaxBucket = 1000;           // 1.04^1000 x 10 us: far beyond any request

int BucketOf(double seconds) {
  if (!(seconds > kSmallestSeconds)) return 0;
  int b = 1 + static_cast<int>(
                  std::floor(std::log(seconds / kSmallestSeconds) / std::log(kBucketGrowth)));
  return std::min(b, kMaxBucket);
}

// The geometric middle of a bucket.
double MiddleOf(int bucket) {
  if (bucket == 0) return kSmallestSeconds / 2;
  return kSmallestSeconds * std::pow(kBucketGrowth, bucket - 0.5);
}

RecentSummary SummaryOf(const TrafficSlice& t) {
  RecentSummary out;
  const double window_seconds = static_cast<double>(out.window_ms) / kSecondMs;
  out.requests = t.requests;
  out.errors = t.errors;
  out.completion_tokens = t.completion_tokens;
  out.requests_per_second = static_cast<double>(t.requests) / window_seconds;
  out.tokens_per_second = static_cast<double>(t.completion_tokens) / window_seconds;
  out.p50_seconds = t.seconds.Percentile(50);
  out.p90_seconds = t.seconds.Percentile(90);
  out.p99_seconds = t.seconds.Percentile(99);
  out.p50_first_byte_seconds = t.first_byte_seconds.Percentile(50);
  return out;
}

}  // namespace

void LatencyHistogram::Add(double seconds) {
  ++counts_[BucketOf(seconds)];
  ++count_;
}

void LatencyHistogram::Merge(const LatencyHistogram& other) {
  for (const auto& [bucket, n] : other.counts_) counts_[bucket] += n;
  count_ += other.count_;
}

double LatencyHistogram::Percentile(double p) const {
  if (count_ == 0) return 0;
  const auto rank = std::clamp<int64_t>(
      static_cast<int64_t>(std::ceil(p / 100.0 * static_cast<double>(count_))), 1, count_);
  int64_t seen = 0;
  for (const auto& [bucket, n] : counts_) {
    seen += n;
    if (seen >= rank) return MiddleOf(bucket);
  }
  return MiddleOf(counts_.rbegin()->first);
}

Json LatencyHistogram::ToJson() const {
  Json out = Json::object();
  for (const auto& [bucket, n] : counts_) out[std::to_string(bucket)] = n;
  return out;
}

Result<LatencyHistogram> LatencyHistogram::FromJson(const Json& j) {
  if (!j.is_object()) return InvalidArgument("a latency histogram must be an object");
  LatencyHistogram h;
  for (const auto& [key, value] : j.items()) {
    int bucket = -1;
    try {
      size_t used = 0;
      bucket = std::stoi(key, &used);
      if (used != key.size()) bucket = -1;
    } catch (const std::exception&) {
      bucket = -1;
    }
    if (bucket < 0 || bucket > kMaxBucket || !value.is_number_integer() ||
        value.get<int64_t>() < 0) {
      return InvalidArgument("latency histogram: bad bucket '" + key + "'");
    }
    h.counts_[bucket] += value.get<int64_t>();
    h.count_ += value.get<int64_t>();
  }
  return h;
}

void TrafficSlice::Add(const RequestRecord& r) {
  ++requests;
  if (r.status >= 500 || r.status == 429) ++errors;
  completion_tokens += r.completion_tokens;
  if (r.status / 100 == 2) {
    seconds.Add(r.seconds);
    first_byte_seconds.Add(r.first_byte_seconds);
  }
}

void TrafficSlice::Merge(const TrafficSlice& other) {
  requests += other.requests;
  errors += other.errors;
  completion_tokens += other.completion_tokens;
  seconds.Merge(other.seconds);
  first_byte_seconds.Merge(other.first_byte_seconds);
}

std::string TrafficSlice::ToJson() const {
  return Json{{"requests", requests},
              {"errors", errors},
              {"completion_tokens", completion_tokens},
              {"seconds", seconds.ToJson()},
              {"first_byte_seconds", first_byte_seconds.ToJson()}}
      .dump();
}

Result<TrafficSlice> TrafficSlice::FromJson(const std::string& text) {
  Json j = Json::parse(text, nullptr, false);
  if (!j.is_object()) return InvalidArgument("a traffic slice must be a JSON object");
  TrafficSlice t;
  for (auto [name, field] : {std::pair{"requests", &t.requests},
                             {"errors", &t.errors},
                             {"completion_tokens", &t.completion_tokens}}) {
    auto it = j.find(name);
    if (it == j.end() || !it->is_number_integer()) {
      return InvalidArgument(std::string("traffic slice: '") + name + "' must be an integer");
    }
    *field = it->get<int64_t>();
  }
  TF_ASSIGN_OR_RETURN(t.seconds, LatencyHistogram::FromJson(j.value("seconds", Json())));
  TF_ASSIGN_OR_RETURN(t.first_byte_seconds,
                      LatencyHistogram::FromJson(j.value("first_byte_seconds", Json())));
  return t;
}

Status TrafficPublisher::Publish() {
  const TimeMs now = clock_.Now();
  const TimeMs closed = now / kTrafficIntervalMs * kTrafficIntervalMs;
  if (published_until_ == 0) published_until_ = closed - kRecentWindowMs;
  if (closed <= published_until_) return OkStatus();
  std::vector<store::EndpointTrafficRecord> rows;
  for (const std::string& endpoint : recent_.Endpoints()) {
    std::map<TimeMs, TrafficSlice> intervals;
    for (const RequestRecord& r : recent_.Between(endpoint, published_until_, closed)) {
      intervals[r.at / kTrafficIntervalMs * kTrafficIntervalMs].Add(r);
    }
    for (const auto& [start, slice] : intervals) {
      rows.push_back({server_id_, endpoint, start, slice.ToJson()});
    }
  }
  if (!rows.empty()) TF_RETURN_IF_ERROR(store_.AddEndpointTraffic(rows, now - kTrafficForgetMs));
  published_until_ = closed;
  return OkStatus();
}

Result<RecentSummary> TrafficView::Summary(const std::string& endpoint_id, TimeMs now,
                                           int* servers) const {
  const TimeMs from = now - kRecentWindowMs;
  std::vector<store::EndpointTrafficRecord> rows;
  if (shared_ != nullptr) {
    TF_ASSIGN_OR_RETURN(rows, shared_->ListEndpointTraffic(endpoint_id, from));
  }
  std::set<std::string> others;
  TrafficSlice merged;
  for (const store::EndpointTrafficRecord& row : rows) {
    if (row.server_id == server_id_ || row.bucket_start + kTrafficIntervalMs > now) continue;
    TF_ASSIGN_OR_RETURN(TrafficSlice slice, TrafficSlice::FromJson(row.summary_json));
    merged.Merge(slice);
    others.insert(row.server_id);
  }
  const std::vector<RequestRecord> own = recent_.Between(endpoint_id, from + 1, now + 1);
  if (servers != nullptr) *servers = static_cast<int>(others.size()) + (own.empty() ? 0 : 1);
  if (others.empty()) return recent_.Summarize(endpoint_id, now);
  for (const RequestRecord& r : own) merged.Add(r);
  return SummaryOf(merged);
}

}  // namespace tf::endpoints
