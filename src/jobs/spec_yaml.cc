// ParseJobSpec: YAML text -> JobSpec. Each mapping of the spec is a table of its fields, each
// with the function that reads its value; a key not in the table is an unknown field. Types
// are checked while reading, ranges and cross-field rules afterwards by FindSpecProblem
// (spec_rules.cc), whose field path is turned back into the line it was written on.
#include <array>
#include <exception>

#include "jobs/job_spec.h"
#include "jobs/job_spec_node.h"
#include "jobs/spec_fields.h"
#include "jobs/spec_reader.h"
#include "jobs/spec_rules.h"
#include "jobs/spec_text.h"
#include "jobs/yaml_document.h"

namespace tf::jobs {
namespace {

using Reader = SpecReader;
using Field = SpecField;

Status ReadCommand(Reader& r, const Field& f, JobSpec& spec) {
  return ReadCommandArgs(r, f, spec.command);
}

Status ReadHyperparameters(Reader& r, const Field& f, JobSpec& spec) {
  TF_ASSIGN_OR_RETURN(auto entries, r.Entries(f));
  for (const Field& entry : entries) {
    TF_ASSIGN_OR_RETURN(spec.hyperparameters[entry.key], r.TypedScalar(entry));
  }
  return OkStatus();
}

Status ReadProcessesPerNode(Reader& r, const Field& f, JobSpec& spec) {
  if (f.node.IsScalar() && f.node.Scalar() == "gpu") {
    spec.processes_per_node = "gpu";
    return OkStatus();
  }
  auto n = r.Int(f, kProcessesPerNodeRange);
  if (!n.ok()) {
    return r.Error(f, "must be a number from 1 to 64 or \"gpu\", got " + Describe(f.node));
  }
  spec.processes_per_node = std::to_string(*n);
  return OkStatus();
}

Status ReadCapacity(Reader& r, const Field& f, JobSpec& spec) {
  static constexpr std::array<std::pair<CapacityType, std::string_view>, 4> kChoices = {{
      {CapacityType::kAny, "any"},
      {CapacityType::kSpot, "spot"},
      {CapacityType::kOnDemand, "on-demand"},
      {CapacityType::kPreferSpot, "prefer-spot"},
  }};
  return ReadChoice(r, f, kChoices, spec.capacity);
}

Status ReadRetryOn(Reader& r, const Field& f, RetryPolicy& retry) {
  static constexpr std::array<std::string_view, 3> kNames = {"interruption", "node-lost", "error"};
  std::vector<Field> items;
  if (f.node.IsScalar()) {
    items.push_back(f);  // "on: error" is a list of one
  } else {
    TF_ASSIGN_OR_RETURN(items, r.Items(f, "a list of interruption, node-lost, error"));
  }
  retry.on_interruption = retry.on_node_lost = retry.on_error = false;
  for (const Field& item : items) {
    TF_ASSIGN_OR_RETURN(std::string text, r.String(item));
    if (text == "interruption") {
      retry.on_interruption = true;
    } else if (text == "node-lost") {
      retry.on_node_lost = true;
    } else if (text == "error") {
      retry.on_error = true;
    } else {
      return r.Error(item, OneOfMessage(kNames, text));
    }
  }
  return OkStatus();
}

constexpr std::array<FieldRule<CheckpointSettings>, 3> kCheckpointRules = {{
    {"dir", StringField<CheckpointSettings, &CheckpointSettings::dir>},
    {"sync_interval", DurationField<CheckpointSettings, &CheckpointSettings::sync_interval_ms>},
    {"enabled", BoolField<CheckpointSettings, &CheckpointSettings::enabled>},
}};

constexpr std::array<FieldRule<RetryPolicy>, 4> kRetryRules = {{
    {"on", ReadRetryOn},
    {"max_attempts", IntField<RetryPolicy, &RetryPolicy::max_attempts, kMaxAttemptsRange>},
    {"backoff", DurationField<RetryPolicy, &RetryPolicy::backoff_ms>},
    {"max_backoff", DurationField<RetryPolicy, &RetryPolicy::max_backoff_ms>},
}};

constexpr std::array<FieldRule<MetricDefinition>, 2> kMetricRules = {{
    {"name", StringField<MetricDefinition, &MetricDefinition::name>},
    {"regex", StringField<MetricDefinition, &MetricDefinition::regex>},
}};

Status ReadMetrics(Reader& r, const Field& f, JobSpec& spec) {
  TF_ASSIGN_OR_RETURN(auto items, r.Items(f, "a list of {name, regex}"));
  for (const Field& item : items) {
    MetricDefinition def;
    TF_RETURN_IF_ERROR(ReadMapping(r, item, kMetricRules, def));
    spec.metrics.push_back(std::move(def));
  }
  return OkStatus();
}

Status ReadEnv(Reader& r, const Field& f, JobSpec& spec) { return ReadStringMap(r, f, spec.env); }

Status ReadNodeSelector(Reader& r, const Field& f, JobSpec& spec) {
  return ReadStringMap(r, f, spec.node_selector);
}

Status ReadResources(Reader& r, const Field& f, JobSpec& spec) {
  return ReadMapping(r, f, kResourceRules, spec.resources);
}

Status ReadCheckpoint(Reader& r, const Field& f, JobSpec& spec) {
  return ReadMapping(r, f, kCheckpointRules, spec.checkpoint);
}

Status ReadRetry(Reader& r, const Field& f, JobSpec& spec) {
  return ReadMapping(r, f, kRetryRules, spec.retry);
}

// In the order docs/jobs-spec.md lists them.
Status ReadDatasets(Reader& r, const Field& f, JobSpec& spec) {
  TF_ASSIGN_OR_RETURN(auto items, r.Items(f, "a list of dataset names"));
  spec.datasets.clear();
  for (const Field& item : items) {
    TF_ASSIGN_OR_RETURN(std::string name, r.String(item));
    spec.datasets.push_back(std::move(name));
  }
  return OkStatus();
}

Status ReadSetup(Reader& r, const Field& f, JobSpec& spec) {
  spec.setup.clear();
  if (f.node.IsScalar()) {  // one command
    TF_ASSIGN_OR_RETURN(std::string command, r.String(f));
    spec.setup.push_back(std::move(command));
    return OkStatus();
  }
  TF_ASSIGN_OR_RETURN(auto items, r.Items(f, "a command or a list of commands"));
  for (const Field& item : items) {
    TF_ASSIGN_OR_RETURN(std::string command, r.String(item));
    spec.setup.push_back(std::move(command));
  }
  return OkStatus();
}

constexpr std::array<FieldRule<PythonSettings>, 3> kPythonRules = {{
    {"venv", BoolField<PythonSettings, &PythonSettings::venv>},
    {"requirements", StringField<PythonSettings, &PythonSettings::requirements>},
    {"wheels", StringField<PythonSettings, &PythonSettings::wheels>},
}};

Status ReadPython(Reader& r, const Field& f, JobSpec& spec) {
  return ReadMapping(r, f, kPythonRules, spec.python);
}

constexpr std::array<FieldRule<JobSpec>, 20> kSpecRules = {{
    {"name", StringField<JobSpec, &JobSpec::name>},
    {"command", ReadCommand},
    {"code", StringField<JobSpec, &JobSpec::code>},
    {"env", ReadEnv},
    {"resources", ReadResources},
    {"nodes", IntField<JobSpec, &JobSpec::nodes, kNodesRange>},
    {"processes_per_node", ReadProcessesPerNode},
    {"hyperparameters", ReadHyperparameters},
    {"checkpoint", ReadCheckpoint},
    {"retry", ReadRetry},
    {"max_runtime", DurationField<JobSpec, &JobSpec::max_runtime_ms>},
    {"drain_grace", DurationField<JobSpec, &JobSpec::drain_grace_ms>},
    {"capacity", ReadCapacity},
    {"priority", IntField<JobSpec, &JobSpec::priority, kPriorityRange>},
    {"node_selector", ReadNodeSelector},
    {"allow_zone_split", BoolField<JobSpec, &JobSpec::allow_zone_split>},
    {"metrics", ReadMetrics},
    {"datasets", ReadDatasets},
    {"setup", ReadSetup},
    {"python", ReadPython},
}};

Result<JobSpec> ParseNode(const YAML::Node& document, std::string_view source) {
  Reader reader(source);
  if (IsNullValue(document)) return reader.Error(NodeLine(document, 1), "", "the spec is empty");
  Field top{document, "", "", NodeLine(document, 1)};
  if (!top.node.IsMap()) {
    return reader.Error(top, "the spec must be a mapping of fields (name, command, ...), got " +
                                 Describe(top.node));
  }
  JobSpec spec;
  TF_RETURN_IF_ERROR(ReadMapping(reader, top, kSpecRules, spec));
  if (auto problem = FindSpecProblem(spec)) {
    const int line = problem->path.empty() ? top.line : reader.LineOf(problem->path);
    return reader.Error(line, problem->path, problem->message);
  }
  return spec;
}

Result<JobSpec> Parse(std::string_view text, std::string_view source) {
  if (text.size() > kMaxSpecBytes) {
    return InvalidArgument(std::string(source) + ": the spec is larger than " +
                           std::to_string(kMaxSpecBytes / 1024) + " KiB");
  }
  TF_ASSIGN_OR_RETURN(YAML::Node document, LoadOneDocument(text, source));
  return ParseNode(document, source);
}

}  // namespace

std::string_view CapacityTypeName(CapacityType type) {
  switch (type) {
    case CapacityType::kAny:
      return "any";
    case CapacityType::kSpot:
      return "spot";
    case CapacityType::kOnDemand:
      return "on-demand";
    case CapacityType::kPreferSpot:
      return "prefer-spot";
  }
  return "any";
}

Result<JobSpec> ParseJobSpec(std::string_view yaml_text, std::string_view source_name) {
  return ReadSpecGuarded<JobSpec>(
      source_name, [&](const std::string& source) { return Parse(yaml_text, source); });
}

Result<JobSpec> ParseJobSpecNode(const YAML::Node& node, std::string_view source_name) {
  return ReadSpecGuarded<JobSpec>(
      source_name, [&](const std::string& source) { return ParseNode(node, source); });
}

}  // namespace tf::jobs
