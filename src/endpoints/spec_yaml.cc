// ParseEndpointSpec: YAML text -> EndpointSpec, with the jobs' spec reader and field tables
// (jobs/spec_fields.h): types are checked while reading, ranges and cross-field rules afterwards
// by FindEndpointProblem, whose field path is turned back into the line it was written on.
#include <array>
#include <exception>

#include "endpoints/endpoint_spec.h"
#include "endpoints/spec_rules.h"
#include "jobs/spec_fields.h"
#include "jobs/spec_reader.h"
#include "jobs/yaml_document.h"

namespace tf::endpoints {
namespace {

using jobs::FieldRule;
using Reader = jobs::SpecReader;
using Field = jobs::SpecField;

Status ReadName(Reader& r, const Field& f, EndpointSpec& spec) {
  TF_ASSIGN_OR_RETURN(spec.name, r.String(f));
  return OkStatus();
}

Status ReadJobModel(Reader& r, const Field& f, ModelSource& model) {
  model.kind = ModelSourceKind::kJobOutput;
  TF_ASSIGN_OR_RETURN(model.location, r.String(f));
  return OkStatus();
}

constexpr std::array<FieldRule<ModelSource>, 1> kModelRules = {{{"job", ReadJobModel}}};

// "model: /models/x", "model: tf://bucket/prefix" or "model: {job: NAME}".
Status ReadModel(Reader& r, const Field& f, EndpointSpec& spec) {
  if (f.node.IsMap()) {
    TF_RETURN_IF_ERROR(jobs::ReadMapping(r, f, kModelRules, spec.model));
    if (spec.model.kind != ModelSourceKind::kJobOutput) {
      return r.Error(f, "a mapping names the job whose output/model to serve: {job: NAME}");
    }
    return OkStatus();
  }
  TF_ASSIGN_OR_RETURN(spec.model.location, r.String(f));
  spec.model.kind =
      spec.model.location.starts_with("tf://") ? ModelSourceKind::kObjects : ModelSourceKind::kPath;
  return OkStatus();
}

Status ReadKvCache(Reader& r, const Field& f, EngineSpec& e) {
  TF_ASSIGN_OR_RETURN(e.kv_cache_bytes, r.Memory(f));
  return OkStatus();
}

constexpr std::array<FieldRule<EngineSpec>, 4> kBuiltinRules = {{
    {"threads", jobs::IntField<EngineSpec, &EngineSpec::threads, kThreadsRange>},
    {"quantize", jobs::StringField<EngineSpec, &EngineSpec::quantize>},
    {"kv_cache", ReadKvCache},
    {"max_batch", jobs::IntField<EngineSpec, &EngineSpec::max_batch, kMaxBatchRange>},
}};

constexpr std::array<FieldRule<Readiness>, 2> kReadinessRules = {{
    {"path", jobs::StringField<Readiness, &Readiness::path>},
    {"timeout", jobs::DurationField<Readiness, &Readiness::timeout_ms>},
}};

Status ReadBuiltin(Reader& r, const Field& f, EngineSpec& e) {
  e.kind = EngineKind::kBuiltin;
  return jobs::ReadMapping(r, f, kBuiltinRules, e);
}

// A string runs under /bin/sh -c, as a job's command does; a list is the argv.
Status ReadCommand(Reader& r, const Field& f, EngineSpec& e) {
  e.kind = EngineKind::kCommand;
  return jobs::ReadCommandArgs(r, f, e.command);
}

Status ReadReadiness(Reader& r, const Field& f, EngineSpec& e) {
  return jobs::ReadMapping(r, f, kReadinessRules, e.readiness);
}

constexpr std::array<FieldRule<EngineSpec>, 3> kEngineRules = {{
    {"builtin", ReadBuiltin},
    {"command", ReadCommand},
    {"readiness", ReadReadiness},
}};

// "engine: builtin", or a mapping with one of builtin and command, and readiness.
Status ReadEngine(Reader& r, const Field& f, EndpointSpec& spec) {
  if (f.node.IsScalar()) {
    TF_ASSIGN_OR_RETURN(std::string kind, r.String(f));
    if (kind != "builtin") {
      return r.Error(f, "must be builtin or a mapping with builtin: {...} or command: ..., got " +
                            jobs::Quote(kind));
    }
    return OkStatus();
  }
  TF_ASSIGN_OR_RETURN(auto entries, r.Entries(f));
  bool builtin = false, command = false;
  for (const Field& entry : entries) {
    builtin |= entry.key == "builtin";
    command |= entry.key == "command";
  }
  if (builtin && command) {
    return r.Error(f, "has both builtin and command: an endpoint runs one server");
  }
  return jobs::ReadMapping(r, f, kEngineRules, spec.engine);
}

Status ReadResources(Reader& r, const Field& f, EndpointSpec& spec) {
  return jobs::ReadMapping(r, f, jobs::kResourceRules, spec.resources);
}

Status ReadGpuMemory(Reader& r, const Field& f, EndpointSpec& spec) {
  TF_ASSIGN_OR_RETURN(spec.gpu_memory_bytes, r.Memory(f));
  return OkStatus();
}

constexpr std::array<FieldRule<EndpointSpec>, 2> kReplicaRules = {{
    {"min", jobs::IntField<EndpointSpec, &EndpointSpec::min_replicas, kReplicasRange>},
    {"max", jobs::IntField<EndpointSpec, &EndpointSpec::max_replicas, kReplicasRange>},
}};

Status ReadReplicas(Reader& r, const Field& f, EndpointSpec& spec) {
  bool max_given = false;
  TF_ASSIGN_OR_RETURN(auto entries, r.Entries(f));
  for (const Field& entry : entries) max_given |= entry.key == "max";
  TF_RETURN_IF_ERROR(jobs::ReadMapping(r, f, kReplicaRules, spec));
  // "replicas: {min: 3}" means a fixed 3 rather than min 3, max 1.
  if (!max_given && spec.max_replicas < spec.min_replicas) spec.max_replicas = spec.min_replicas;
  return OkStatus();
}

template <ScalingMetric metric>
Status ReadTarget(Reader& r, const Field& f, Autoscaling& a) {
  TF_ASSIGN_OR_RETURN(int64_t target, r.Int(f, kTargetRange));
  a.metric = metric;
  a.target = static_cast<int>(target);
  return OkStatus();
}

constexpr std::array<FieldRule<Autoscaling>, 5> kAutoscalingRules = {{
    {"target_ongoing_requests", ReadTarget<ScalingMetric::kOngoingRequests>},
    {"target_queue_depth", ReadTarget<ScalingMetric::kQueueDepth>},
    {"upscale_delay", jobs::DurationField<Autoscaling, &Autoscaling::upscale_delay_ms>},
    {"downscale_delay", jobs::DurationField<Autoscaling, &Autoscaling::downscale_delay_ms>},
    {"scale_to_zero_after", jobs::DurationField<Autoscaling, &Autoscaling::scale_to_zero_after_ms>},
}};

Status ReadAutoscaling(Reader& r, const Field& f, EndpointSpec& spec) {
  TF_ASSIGN_OR_RETURN(auto entries, r.Entries(f));
  int targets = 0;
  for (const Field& entry : entries) targets += entry.key.starts_with("target_");
  if (targets > 1) {
    return r.Error(f, "has both target_ongoing_requests and target_queue_depth: choose one");
  }
  return jobs::ReadMapping(r, f, kAutoscalingRules, spec.autoscaling);
}

Status ReadSpot(Reader& r, const Field& f, EndpointSpec& spec) {
  static constexpr std::array<std::pair<SpotPolicy, std::string_view>, 3> kChoices = {{
      {SpotPolicy::kNever, "never"},
      {SpotPolicy::kPrefer, "prefer"},
      {SpotPolicy::kOnly, "only"},
  }};
  return jobs::ReadChoice(r, f, kChoices, spec.spot);
}

Status ReadEnv(Reader& r, const Field& f, EndpointSpec& spec) {
  return jobs::ReadStringMap(r, f, spec.env);
}

Status ReadNodeSelector(Reader& r, const Field& f, EndpointSpec& spec) {
  return jobs::ReadStringMap(r, f, spec.node_selector);
}

// In the order docs/endpoints.md lists them.
constexpr std::array<FieldRule<EndpointSpec>, 13> kSpecRules = {{
    {"name", ReadName},
    {"model", ReadModel},
    {"engine", ReadEngine},
    {"env", ReadEnv},
    {"resources", ReadResources},
    {"gpu_memory", ReadGpuMemory},
    {"replicas", ReadReplicas},
    {"autoscaling", ReadAutoscaling},
    {"warm_pool", jobs::IntField<EndpointSpec, &EndpointSpec::warm_pool, kWarmPoolRange>},
    {"spot", ReadSpot},
    {"node_selector", ReadNodeSelector},
    {"max_queue", jobs::IntField<EndpointSpec, &EndpointSpec::max_queue, kMaxQueueRange>},
    {"queue_timeout", jobs::DurationField<EndpointSpec, &EndpointSpec::queue_timeout_ms>},
}};

Result<EndpointSpec> Parse(std::string_view text, std::string_view source) {
  if (text.size() > jobs::kMaxSpecBytes) {
    return InvalidArgument(std::string(source) + ": the spec is larger than " +
                           std::to_string(jobs::kMaxSpecBytes / 1024) + " KiB");
  }
  TF_ASSIGN_OR_RETURN(YAML::Node document, jobs::LoadOneDocument(text, source));
  Reader reader(source);
  if (jobs::IsNullValue(document)) return reader.Error(1, "", "the spec is empty");
  Field top{document, "", "", jobs::NodeLine(document, 1)};
  if (!top.node.IsMap()) {
    return reader.Error(top, "the spec must be a mapping of fields (name, model, ...), got " +
                                 jobs::Describe(top.node));
  }
  EndpointSpec spec;
  TF_RETURN_IF_ERROR(jobs::ReadMapping(reader, top, kSpecRules, spec));
  if (auto problem = FindEndpointProblem(spec)) {
    return reader.Error(reader.LineOf(problem->path), problem->path, problem->message);
  }
  return spec;
}

}  // namespace

Result<EndpointSpec> ParseEndpointSpec(std::string_view yaml_text, std::string_view source_name) {
  return jobs::ReadSpecGuarded<EndpointSpec>(
      source_name, [&](const std::string& source) { return Parse(yaml_text, source); });
}

Status ValidateEndpointSpec(const EndpointSpec& spec) {
  if (auto problem = FindEndpointProblem(spec)) {
    return InvalidArgument(problem->path + ": " + problem->message);
  }
  return OkStatus();
}

}  // namespace tf::endpoints
