// An endpoint as its user describes it (docs/endpoints.md): the model, the server that serves
// it, what one replica needs, how many replicas and how they scale, and how requests wait.
//
// ParseEndpointSpec reads the YAML as ParseJobSpec reads a job's, with the same guarantees:
// unknown or duplicate fields, wrong types and values out of range are kInvalidArgument naming
// the file, the line and the field,
//   chat.yaml:9: replicas.max: must be at least replicas.min (2), got 1
//   chat.yaml:4: engine: unknown field "comand" (did you mean "command"?)
// and it never throws. Whether a node can hold a replica is the scheduler's question.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "jobs/job_spec.h"

namespace tf::endpoints {

// Where the weights come from.
enum class ModelSourceKind {
  kPath,       // a directory or GGUF file on every node: "/models/llama-1b"
  kObjects,    // objects of the project: "tf://BUCKET/PREFIX", fetched once per node
  kJobOutput,  // a job's output/model: {job: NAME_OR_ID}
};

struct ModelSource {
  ModelSourceKind kind = ModelSourceKind::kPath;
  std::string location;  // the path, the "tf://..." URL, or the job's name or id
  friend bool operator==(const ModelSource&, const ModelSource&) = default;
};

enum class EngineKind {
  kBuiltin,  // `tensorfleet engine serve` on the replica's node
  kCommand,  // any OpenAI-compatible server, started with `command`
};

// When a started replica may take requests: GET `path` answers 200 within `timeout_ms` of
// the start.
struct Readiness {
  std::string path = "/health";
  TimeMs timeout_ms = 10 * kMinuteMs;
  friend bool operator==(const Readiness&, const Readiness&) = default;
};

struct EngineSpec {
  EngineKind kind = EngineKind::kBuiltin;
  // The built-in engine's options (as `tensorfleet engine serve` takes them).
  int threads = 0;                // 0: resources.cpus; never more than that
  std::string quantize = "none";  // none, q8_0, q4_0
  int64_t kv_cache_bytes = int64_t{1} << 30;
  int max_batch = 16;
  // A command engine's argv ({"/bin/sh", "-c", s} for a string), with the placeholders
  // {model}, {port} and {gpus} replaced when a replica starts.
  std::vector<std::string> command;
  Readiness readiness;
  friend bool operator==(const EngineSpec&, const EngineSpec&) = default;
};

// What the autoscaler aims at.
enum class ScalingMetric {
  kOngoingRequests,  // requests being served or waiting, per serving replica
  kQueueDepth,       // requests waiting for a replica, per replica to add
};

struct Autoscaling {
  ScalingMetric metric = ScalingMetric::kOngoingRequests;
  int target = 2;                                 // of the metric
  TimeMs upscale_delay_ms = 0;                    // load above target this long: scale out
  TimeMs downscale_delay_ms = 2 * kMinuteMs;      // below target this long: scale in
  TimeMs scale_to_zero_after_ms = 5 * kMinuteMs;  // no request this long: zero (if min is 0)
  friend bool operator==(const Autoscaling&, const Autoscaling&) = default;
};

enum class SpotPolicy { kNever, kPrefer, kOnly };  // YAML spot: never | prefer | only

struct EndpointSpec {
  std::string name;  // required, as a job's name; what clients send as `model`
  ModelSource model;
  EngineSpec engine;
  std::map<std::string, std::string> env;  // for the server's process, as a job's env
  jobs::Resources resources;               // per replica
  // A share of one GPU, declared: replicas with gpu_memory are packed onto GPUs by it (and
  // take no whole GPU, so resources.gpus must be 0).
  int64_t gpu_memory_bytes = 0;
  int min_replicas = 1;
  int max_replicas = 1;
  Autoscaling autoscaling;
  int warm_pool = 0;  // replicas loaded and held out of rotation, promoted first on a scale-out
  SpotPolicy spot = SpotPolicy::kNever;
  std::map<std::string, std::string> node_selector;
  int max_queue = 100;                  // requests waiting for a replica; beyond: 429
  TimeMs queue_timeout_ms = kMinuteMs;  // a request that waited this long: 503
  friend bool operator==(const EndpointSpec&, const EndpointSpec&) = default;
};

// "path", "objects", "job".
std::string_view ModelSourceKindName(ModelSourceKind kind);
// "builtin", "command".
std::string_view EngineKindName(EngineKind kind);
// "ongoing_requests", "queue_depth".
std::string_view ScalingMetricName(ScalingMetric metric);
// "never", "prefer", "only".
std::string_view SpotPolicyName(SpotPolicy policy);

// Reads a YAML spec. `source_name` (usually the file name) starts every error message.
Result<EndpointSpec> ParseEndpointSpec(std::string_view yaml_text, std::string_view source_name);

// The first rule of docs/endpoints.md that `spec` breaks, as "<field path>: <what is wrong>".
Status ValidateEndpointSpec(const EndpointSpec& spec);

// The spec as the store keeps it: every field, in canonical units (milliseconds, bytes).
nlohmann::json EndpointSpecToJson(const EndpointSpec& spec);

// The inverse of EndpointSpecToJson; a missing field takes its default, an unknown one or a
// value ValidateEndpointSpec refuses is kInvalidArgument.
Result<EndpointSpec> EndpointSpecFromJson(const nlohmann::json& json);

}  // namespace tf::endpoints
