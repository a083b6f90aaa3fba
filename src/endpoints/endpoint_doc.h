// What the store keeps of an endpoint beyond its index (store::EndpointRecord.doc_json): the
// spec, its generation (bumped by every change of the spec, so that a rolling update can tell
// old replicas from new), the replicas, and the latest scaling decisions with their reasons.
#pragma once

#include <deque>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "endpoints/endpoint_spec.h"

namespace tf::endpoints {

// One replica of an endpoint.
struct Replica {
  std::string id;          // "rep_<hex>"
  int generation = 0;      // of the spec it runs
  std::string state;       // starting, warming (for the warm pool), ready, warm, draining
  std::string job_id;      // the job that runs it ("" until submitted)
  std::string node_id;     // where it runs ("" until placed)
  std::string address;     // host:port its server listens on ("" until started)
  std::string key;         // its server's own API key, which only the gateway sends
  TimeMs since = 0;        // when it entered `state`
  int failed_checks = 0;   // liveness checks failed in a row
  bool stop_sent = false;  // draining: its job has been asked to stop
  // Its node is draining: it serves on (out of the autoscaler's count, so that a replacement
  // starts) until a replacement joins the rotation, then drains.
  bool leaving = false;
  bool on_spot = false;  // its node is spot capacity (known once placed)
  // Started on spot, under `spot: prefer`, to take the place of a replica that fell back to
  // on-demand capacity: when it joins the rotation, one on-demand replica drains. It is not in
  // the autoscaler's count meanwhile.
  bool to_spot = false;
  friend bool operator==(const Replica&, const Replica&) = default;
};

// One decision of the autoscaler that changed something, for `describe`.
struct ScalingEvent {
  TimeMs at = 0;
  int serving = 0;
  int warm = 0;
  std::string reason;
  friend bool operator==(const ScalingEvent&, const ScalingEvent&) = default;
};

inline constexpr size_t kMaxScalingEvents = 20;  // the latest kept

struct EndpointDoc {
  EndpointSpec spec;
  int generation = 1;
  std::vector<Replica> replicas;
  std::deque<ScalingEvent> scaling;  // oldest first, at most kMaxScalingEvents
  friend bool operator==(const EndpointDoc&, const EndpointDoc&) = default;
};

nlohmann::json EndpointDocToJson(const EndpointDoc& doc);
// kInvalidArgument (naming the field) for a document this version cannot read.
Result<EndpointDoc> EndpointDocFromJson(const nlohmann::json& json);

}  // namespace tf::endpoints
