// JobSpec <-> the JSON the store keeps (JobSpecToJson, JobSpecFromJson). The JSON names the
// struct's fields and units; reading it back is as strict as reading YAML: the same rules
// (ValidateJobSpec), no unknown fields, no value of the wrong type.
#include "jobs/job_spec.h"
#include "jobs/json_fields.h"
#include "jobs/spec_rules.h"

namespace tf::jobs {
namespace {

using Json = nlohmann::json;

void ReadCapacity(JsonFields& fields, CapacityType& out) {
  std::string name(CapacityTypeName(out));
  fields.Read("capacity", name);
  for (CapacityType type : {CapacityType::kAny, CapacityType::kSpot, CapacityType::kOnDemand,
                            CapacityType::kPreferSpot}) {
    if (name == CapacityTypeName(type)) {
      out = type;
      return;
    }
  }
  fields.Fail("capacity", "must be \"any\", \"spot\", \"on-demand\" or \"prefer-spot\"");
}

void ReadMetrics(JsonFields& fields, std::vector<MetricDefinition>& out) {
  const Json* metrics = fields.Raw("metrics");
  if (metrics == nullptr) return;
  if (!metrics->is_array()) return fields.Fail("metrics", "must be an array");
  Status status;
  for (size_t i = 0; i < metrics->size(); ++i) {
    JsonFields item(&(*metrics)[i], "metrics[" + std::to_string(i) + "]", &status);
    MetricDefinition def;
    item.Read("name", def.name);
    item.Read("regex", def.regex);
    item.Finish();
    out.push_back(std::move(def));
  }
  if (!status.ok()) fields.Fail("", status.message());
}

}  // namespace

nlohmann::json JobSpecToJson(const JobSpec& spec) {
  Json metrics = Json::array();
  for (const MetricDefinition& m : spec.metrics) {
    metrics.push_back({{"name", m.name}, {"regex", m.regex}});
  }
  const Resources& r = spec.resources;
  const CheckpointSettings& c = spec.checkpoint;
  const RetryPolicy& retry = spec.retry;
  return Json{
      {"name", spec.name},
      {"command", spec.command},
      {"code", spec.code},
      {"env", spec.env},
      {"resources",
       {{"gpus", r.gpus},
        {"gpu_memory_bytes", r.gpu_memory_bytes},
        {"cpus", r.cpus},
        {"memory_bytes", r.memory_bytes}}},
      {"nodes", spec.nodes},
      {"processes_per_node", spec.processes_per_node},
      {"hyperparameters", spec.hyperparameters},
      {"checkpoint",
       {{"dir", c.dir}, {"sync_interval_ms", c.sync_interval_ms}, {"enabled", c.enabled}}},
      {"retry",
       {{"on_interruption", retry.on_interruption},
        {"on_node_lost", retry.on_node_lost},
        {"on_error", retry.on_error},
        {"max_attempts", retry.max_attempts},
        {"backoff_ms", retry.backoff_ms},
        {"max_backoff_ms", retry.max_backoff_ms}}},
      {"max_runtime_ms", spec.max_runtime_ms},
      {"drain_grace_ms", spec.drain_grace_ms},
      {"capacity", std::string(CapacityTypeName(spec.capacity))},
      {"priority", spec.priority},
      {"node_selector", spec.node_selector},
      {"allow_zone_split", spec.allow_zone_split},
      {"metrics", std::move(metrics)},
      {"datasets", spec.datasets},
      {"setup", spec.setup},
      {"python",
       {{"venv", spec.python.venv},
        {"requirements", spec.python.requirements},
        {"wheels", spec.python.wheels}}},
  };
}

Result<JobSpec> JobSpecFromJson(const nlohmann::json& json) {
  if (!json.is_object()) return InvalidArgument("a job spec must be a JSON object");
  Status status;
  JobSpec spec;
  JsonFields top(&json, "", &status);
  top.Read("name", spec.name);
  top.Read("command", spec.command);
  top.Read("code", spec.code);
  top.Read("env", spec.env);
  JsonFields resources = top.Object("resources");
  resources.Read("gpus", spec.resources.gpus);
  resources.Read("cpus", spec.resources.cpus);
  resources.Read("memory_bytes", spec.resources.memory_bytes);
  resources.Read("gpu_memory_bytes", spec.resources.gpu_memory_bytes);
  resources.Finish();
  top.Read("nodes", spec.nodes);
  top.Read("processes_per_node", spec.processes_per_node);
  if (const Json* h = top.Raw("hyperparameters")) spec.hyperparameters = *h;
  JsonFields checkpoint = top.Object("checkpoint");
  checkpoint.Read("dir", spec.checkpoint.dir);
  checkpoint.Read("sync_interval_ms", spec.checkpoint.sync_interval_ms);
  checkpoint.Read("enabled", spec.checkpoint.enabled);
  checkpoint.Finish();
  JsonFields retry = top.Object("retry");
  retry.Read("on_interruption", spec.retry.on_interruption);
  retry.Read("on_node_lost", spec.retry.on_node_lost);
  retry.Read("on_error", spec.retry.on_error);
  retry.Read("max_attempts", spec.retry.max_attempts);
  retry.Read("backoff_ms", spec.retry.backoff_ms);
  retry.Read("max_backoff_ms", spec.retry.max_backoff_ms);
  retry.Finish();
  top.Read("max_runtime_ms", spec.max_runtime_ms);
  top.Read("drain_grace_ms", spec.drain_grace_ms);
  ReadCapacity(top, spec.capacity);
  top.Read("priority", spec.priority);
  top.Read("node_selector", spec.node_selector);
  top.Read("allow_zone_split", spec.allow_zone_split);
  ReadMetrics(top, spec.metrics);
  top.Read("datasets", spec.datasets);
  top.Read("setup", spec.setup);
  JsonFields python = top.Object("python");
  python.Read("venv", spec.python.venv);
  python.Read("requirements", spec.python.requirements);
  python.Read("wheels", spec.python.wheels);
  python.Finish();
  top.Finish();
  TF_RETURN_IF_ERROR(status);
  TF_RETURN_IF_ERROR(ValidateJobSpec(spec));
  return spec;
}

}  // namespace tf::jobs
