// EndpointSpec <-> the JSON the store keeps. The JSON names the struct's fields and units;
// reading it back is as strict as reading YAML (jobs/json_fields.h, then the same rules).
#include <array>
#include <utility>

#include "endpoints/endpoint_spec.h"
#include "jobs/json_fields.h"

namespace tf::endpoints {
namespace {

using Json = nlohmann::json;

// Reads an enum written by its name; `names` pairs each value with it.
template <typename E, size_t N>
void ReadEnum(jobs::JsonFields& fields, std::string_view key,
              const std::array<std::pair<E, std::string_view>, N>& names, E& out) {
  std::string text;
  for (const auto& [value, name] : names) {
    if (value == out) text = name;
  }
  fields.Read(key, text);
  for (const auto& [value, name] : names) {
    if (text == name) {
      out = value;
      return;
    }
  }
  std::string message = "must be one of";
  for (size_t i = 0; i < N; ++i)
    message += (i ? ", \"" : " \"") + std::string(names[i].second) + "\"";
  fields.Fail(std::string(key), message);
}

constexpr std::array<std::pair<ModelSourceKind, std::string_view>, 3> kModelKinds = {{
    {ModelSourceKind::kPath, "path"},
    {ModelSourceKind::kObjects, "objects"},
    {ModelSourceKind::kJobOutput, "job"},
}};
constexpr std::array<std::pair<EngineKind, std::string_view>, 2> kEngineKinds = {{
    {EngineKind::kBuiltin, "builtin"},
    {EngineKind::kCommand, "command"},
}};
constexpr std::array<std::pair<ScalingMetric, std::string_view>, 2> kMetrics = {{
    {ScalingMetric::kOngoingRequests, "ongoing_requests"},
    {ScalingMetric::kQueueDepth, "queue_depth"},
}};
constexpr std::array<std::pair<SpotPolicy, std::string_view>, 3> kSpotPolicies = {{
    {SpotPolicy::kNever, "never"},
    {SpotPolicy::kPrefer, "prefer"},
    {SpotPolicy::kOnly, "only"},
}};

template <typename E, size_t N>
std::string_view NameOf(const std::array<std::pair<E, std::string_view>, N>& names, E value) {
  for (const auto& [v, name] : names) {
    if (v == value) return name;
  }
  return "?";
}

}  // namespace

std::string_view ModelSourceKindName(ModelSourceKind kind) { return NameOf(kModelKinds, kind); }
std::string_view EngineKindName(EngineKind kind) { return NameOf(kEngineKinds, kind); }
std::string_view ScalingMetricName(ScalingMetric metric) { return NameOf(kMetrics, metric); }
std::string_view SpotPolicyName(SpotPolicy policy) { return NameOf(kSpotPolicies, policy); }

nlohmann::json EndpointSpecToJson(const EndpointSpec& spec) {
  const EngineSpec& e = spec.engine;
  const Autoscaling& a = spec.autoscaling;
  const jobs::Resources& r = spec.resources;
  return Json{
      {"name", spec.name},
      {"model",
       {{"kind", std::string(ModelSourceKindName(spec.model.kind))},
        {"location", spec.model.location}}},
      {"engine",
       {{"kind", std::string(EngineKindName(e.kind))},
        {"threads", e.threads},
        {"quantize", e.quantize},
        {"kv_cache_bytes", e.kv_cache_bytes},
        {"max_batch", e.max_batch},
        {"command", e.command},
        {"readiness", {{"path", e.readiness.path}, {"timeout_ms", e.readiness.timeout_ms}}}}},
      {"env", spec.env},
      {"resources", {{"gpus", r.gpus}, {"cpus", r.cpus}, {"memory_bytes", r.memory_bytes}}},
      {"gpu_memory_bytes", spec.gpu_memory_bytes},
      {"replicas", {{"min", spec.min_replicas}, {"max", spec.max_replicas}}},
      {"autoscaling",
       {{"metric", std::string(ScalingMetricName(a.metric))},
        {"target", a.target},
        {"upscale_delay_ms", a.upscale_delay_ms},
        {"downscale_delay_ms", a.downscale_delay_ms},
        {"scale_to_zero_after_ms", a.scale_to_zero_after_ms}}},
      {"warm_pool", spec.warm_pool},
      {"spot", std::string(SpotPolicyName(spec.spot))},
      {"node_selector", spec.node_selector},
      {"max_queue", spec.max_queue},
      {"queue_timeout_ms", spec.queue_timeout_ms},
  };
}

Result<EndpointSpec> EndpointSpecFromJson(const nlohmann::json& json) {
  if (!json.is_object()) return InvalidArgument("an endpoint spec must be a JSON object");
  Status status;
  EndpointSpec spec;
  jobs::JsonFields top(&json, "", &status);
  top.Read("name", spec.name);
  jobs::JsonFields model = top.Object("model");
  ReadEnum(model, "kind", kModelKinds, spec.model.kind);
  model.Read("location", spec.model.location);
  model.Finish();
  jobs::JsonFields engine = top.Object("engine");
  EngineSpec& e = spec.engine;
  ReadEnum(engine, "kind", kEngineKinds, e.kind);
  engine.Read("threads", e.threads);
  engine.Read("quantize", e.quantize);
  engine.Read("kv_cache_bytes", e.kv_cache_bytes);
  engine.Read("max_batch", e.max_batch);
  engine.Read("command", e.command);
  jobs::JsonFields readiness = engine.Object("readiness");
  readiness.Read("path", e.readiness.path);
  readiness.Read("timeout_ms", e.readiness.timeout_ms);
  readiness.Finish();
  engine.Finish();
  top.Read("env", spec.env);
  jobs::JsonFields resources = top.Object("resources");
  resources.Read("gpus", spec.resources.gpus);
  resources.Read("cpus", spec.resources.cpus);
  resources.Read("memory_bytes", spec.resources.memory_bytes);
  resources.Finish();
  top.Read("gpu_memory_bytes", spec.gpu_memory_bytes);
  jobs::JsonFields replicas = top.Object("replicas");
  replicas.Read("min", spec.min_replicas);
  replicas.Read("max", spec.max_replicas);
  replicas.Finish();
  jobs::JsonFields autoscaling = top.Object("autoscaling");
  Autoscaling& a = spec.autoscaling;
  ReadEnum(autoscaling, "metric", kMetrics, a.metric);
  autoscaling.Read("target", a.target);
  autoscaling.Read("upscale_delay_ms", a.upscale_delay_ms);
  autoscaling.Read("downscale_delay_ms", a.downscale_delay_ms);
  autoscaling.Read("scale_to_zero_after_ms", a.scale_to_zero_after_ms);
  autoscaling.Finish();
  top.Read("warm_pool", spec.warm_pool);
  ReadEnum(top, "spot", kSpotPolicies, spec.spot);
  top.Read("node_selector", spec.node_selector);
  top.Read("max_queue", spec.max_queue);
  top.Read("queue_timeout_ms", spec.queue_timeout_ms);
  top.Finish();
  TF_RETURN_IF_ERROR(status);
  TF_RETURN_IF_ERROR(ValidateEndpointSpec(spec));
  return spec;
}

}  // namespace tf::endpoints
