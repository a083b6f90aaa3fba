#include "endpoints/autoscaler.h"

#include <algorithm>
#include <optional>

#include "jobs/quantities.h"

namespace tf::endpoints {
namespace {

int CeilDiv(int64_t a, int64_t b) { return static_cast<int>((a + b - 1) / b); }

// The samples of the last `window` (the latest alone for 0), or nothing when the history does
// not reach back that far: a window is judged only once it has been watched whole.
std::optional<std::span<const LoadSample>> Window(std::span<const LoadSample> history,
                                                  TimeMs window, TimeMs now) {
  if (history.empty()) return std::nullopt;
  if (window == 0) return history.last(1);
  if (history.front().at > now - window) return std::nullopt;
  auto first = std::find_if(history.begin(), history.end(),
                            [&](const LoadSample& s) { return s.at > now - window; });
  if (first == history.end()) return std::nullopt;  // nothing sampled lately: no judgement
  return history.subspan(static_cast<size_t>(first - history.begin()));
}

std::string Count(int n, std::string_view one, std::string_view many) {
  return std::to_string(n) + " " + std::string(n == 1 ? one : many);
}

std::string Change(int from, int to) {
  return "from " + std::to_string(from) + " to " + std::to_string(to);
}

struct Target {
  int replicas;
  std::string reason;
};

// Rules 1-5 of autoscaler.h: the serving count wanted.
Target DesiredServing(const EndpointSpec& spec, std::span<const LoadSample> history, int current,
                      TimeMs now) {
  const Autoscaling& a = spec.autoscaling;
  if (current < spec.min_replicas) {
    return {spec.min_replicas, "below replicas.min: " + Change(current, spec.min_replicas)};
  }
  if (current > spec.max_replicas) {
    return {spec.max_replicas, "above replicas.max: " + Change(current, spec.max_replicas)};
  }
  if (history.empty()) return {current, "no load observed yet"};
  const LoadSample& latest = history.back();
  int latest_wants = std::clamp(RecommendedReplicas(a, latest), 1, spec.max_replicas);
  if (current == 0 && latest.queued + latest.in_flight > 0) {
    return {latest_wants, Count(latest.queued, "request", "requests") +
                              " waiting and no replica: " + Change(0, latest_wants)};
  }
  if (auto window = Window(history, a.upscale_delay_ms, now)) {
    int least = spec.max_replicas;
    for (const LoadSample& s : *window) least = std::min(least, RecommendedReplicas(a, s));
    if (least > current) {
      std::string held = a.upscale_delay_ms == 0
                             ? std::string("")
                             : " for " + jobs::FormatDuration(a.upscale_delay_ms);
      return {least, "load above the target of " + std::to_string(a.target) + " per replica" +
                         held + ": " + Change(current, least)};
    }
  }
  if (spec.min_replicas == 0 && current > 0) {
    if (auto window = Window(history, a.scale_to_zero_after_ms, now)) {
      bool idle = std::all_of(window->begin(), window->end(), [](const LoadSample& s) {
        return s.arrived == 0 && s.queued == 0 && s.in_flight == 0;
      });
      if (idle && a.scale_to_zero_after_ms > 0) {
        return {0, "no request for " + jobs::FormatDuration(a.scale_to_zero_after_ms) + ": " +
                       Change(current, 0)};
      }
    }
  }
  if (auto window = Window(history, a.downscale_delay_ms, now)) {
    int most = 0;
    for (const LoadSample& s : *window) most = std::max(most, RecommendedReplicas(a, s));
    int to = std::max({most, spec.min_replicas, 1});
    if (to < current) {
      return {to, "load below the target of " + std::to_string(a.target) + " per replica for " +
                      jobs::FormatDuration(a.downscale_delay_ms) + ": " + Change(current, to)};
    }
  }
  return {current, "steady at " + Count(current, "replica", "replicas")};
}

}  // namespace

int RecommendedReplicas(const Autoscaling& autoscaling, const LoadSample& s) {
  int target = std::max(autoscaling.target, 1);
  switch (autoscaling.metric) {
    case ScalingMetric::kOngoingRequests:
      return CeilDiv(int64_t{s.in_flight} + s.queued, target);
    case ScalingMetric::kQueueDepth:
      return s.busy_replicas + CeilDiv(s.queued, target);
  }
  return 0;
}

ScalingDecision DecideScale(const EndpointSpec& spec, std::span<const LoadSample> history,
                            const ReplicaCounts& replicas, TimeMs now) {
  int current = replicas.Serving();
  Target target = DesiredServing(spec, history, current, now);
  ScalingDecision d;
  d.serving = target.replicas;
  d.warm = spec.warm_pool;
  d.reason = std::move(target.reason);
  if (d.serving > current) {
    int need = d.serving - current;
    d.promote = std::min(need, replicas.warm);
    d.start_serving = need - d.promote;
    if (d.promote > 0) {
      d.reason += " (" + Count(d.promote, "warm replica", "warm replicas") + " promoted)";
    }
  } else if (d.serving < current) {
    int extra = current - d.serving;
    int room = std::max(0, spec.warm_pool - replicas.Warm());
    d.demote = std::min({extra, room, replicas.ready});
    d.stop_serving = extra - d.demote;
  }
  int warm_after = replicas.Warm() - d.promote + d.demote;
  if (warm_after < spec.warm_pool) {
    d.start_warm = spec.warm_pool - warm_after;
  } else if (warm_after > spec.warm_pool) {
    d.stop_warm = warm_after - spec.warm_pool;
  }
  return d;
}

}  // namespace tf::endpoints
