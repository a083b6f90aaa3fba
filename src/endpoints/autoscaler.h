// The autoscaler: a pure function from an endpoint's recent load and its replicas to how many
// replicas it should have, and why (docs/endpoints.md, "Autoscaling"). The gateway samples
// the load once per decision interval; the controller applies the decision. No clock, no
// state of its own: the history is the state, so a decision can be replayed and tested.
//
// The rules, in the order they are tried:
//   1. below replicas.min, or above replicas.max: to the bound.
//   2. from zero: any request waiting starts replicas at once (no upscale delay): a request
//      that arrives at an endpoint scaled to zero waits in the gateway's queue, not in vain.
//   3. scale out: when every sample of the last upscale_delay recommends more replicas than
//      there are, to the least of those recommendations (with no delay: the latest's).
//   4. scale to zero: with replicas.min 0, when no request arrived, waited or ran for
//      scale_to_zero_after.
//   5. scale in: when every sample of the last downscale_delay recommends fewer, to the most
//      of those (never below 1 here: zero is rule 4's).
// A sample recommends ceil((in_flight + queued) / target) replicas for target_ongoing_requests,
// and busy_replicas + ceil(queued / target) for target_queue_depth. A window is judged only
// once the history covers it, so a fresh history holds the count where it is.
//
// The warm pool (warm_pool replicas loaded and out of rotation) is kept whatever the load:
// a scale-out promotes warm replicas first and starts replacements behind them; a scale-in
// moves replicas back into a pool that is short before it stops any.
#pragma once

#include <span>
#include <string>

#include "base/clock.h"
#include "endpoints/endpoint_spec.h"

namespace tf::endpoints {

// The load of one endpoint over one decision interval, as the gateway saw it.
struct LoadSample {
  TimeMs at = 0;
  int arrived = 0;        // requests that arrived since the previous sample
  int queued = 0;         // waiting for a replica, at `at`
  int in_flight = 0;      // being served, at `at`
  int busy_replicas = 0;  // serving replicas with at least one request in flight
};

// The endpoint's replicas by state.
struct ReplicaCounts {
  int ready = 0;     // in rotation
  int starting = 0;  // started for rotation, not ready yet
  int warm = 0;      // loaded, out of rotation
  int warming = 0;   // started for the warm pool, not ready yet
  int Serving() const { return ready + starting; }
  int Warm() const { return warm + warming; }
};

struct ScalingDecision {
  int serving = 0;  // replicas wanted in rotation (ready or starting)
  int warm = 0;     // replicas wanted in the warm pool
  int promote = 0;  // warm (ready) replicas to put into rotation now
  int demote = 0;   // replicas to take out of rotation into the warm pool
  int start_serving = 0;
  int start_warm = 0;
  int stop_serving = 0;  // drained: their in-flight requests finish first
  int stop_warm = 0;
  std::string reason;  // for people: "3 requests waiting and no replica: from 0 to 1"
  bool Changes() const {
    return promote + demote + start_serving + start_warm + stop_serving + stop_warm > 0;
  }
};

// What the endpoint should do now. `history` is oldest first and may be empty.
ScalingDecision DecideScale(const EndpointSpec& spec, std::span<const LoadSample> history,
                            const ReplicaCounts& replicas, TimeMs now);

// How many replicas one sample asks for under `autoscaling` (before replicas.min and max).
int RecommendedReplicas(const Autoscaling& autoscaling, const LoadSample& sample);

}  // namespace tf::endpoints
