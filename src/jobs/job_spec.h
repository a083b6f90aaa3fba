// A managed job as its user describes it: the YAML spec file (docs/jobs-spec.md), its checks,
// and the JSON form the store keeps.
//
// ParseJobSpec reads the YAML and refuses, with kInvalidArgument, anything it does not
// understand: unknown fields at any level, duplicate fields, values of the wrong type or out of
// range. Each message names the file, the line and the field:
//   train.yaml:7: resources.gpus: must be an integer from 0 to 64, got "eight"
//   train.yaml:12: unknown field "checkpointing" (did you mean "checkpoint"?)
// It never throws and never crashes, whatever the input. It checks the spec on its own only:
// whether any node of the fleet can run it is the scheduler's question.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "base/status.h"

namespace tf::jobs {

// YAML capacity: any | spot | on-demand | prefer-spot (spot nodes first, on-demand ones when no
// spot node has room).
enum class CapacityType { kAny, kSpot, kOnDemand, kPreferSpot };

// "any", "spot", "on-demand", "prefer-spot".
std::string_view CapacityTypeName(CapacityType type);

// What one node of the job needs.
struct Resources {
  int gpus = 0;
  int cpus = 1;
  int64_t memory_bytes = 0;  // 0: no particular amount
  // A share of one GPU instead of whole ones (gpus 0): this much of its memory, declared; the
  // scheduler packs shares onto GPUs by it (nothing enforces it on the GPU itself).
  int64_t gpu_memory_bytes = 0;
  friend bool operator==(const Resources&, const Resources&) = default;
};

struct CheckpointSettings {
  std::string dir = "checkpoints";  // relative to the job's working directory
  TimeMs sync_interval_ms = 5 * kMinuteMs;
  bool enabled = true;
  friend bool operator==(const CheckpointSettings&, const CheckpointSettings&) = default;
};

// Which failures start another attempt, and how long to wait before it.
struct RetryPolicy {
  bool on_interruption = true;         // spot reclaim, drain
  bool on_node_lost = true;            // the node stopped answering
  bool on_error = false;               // the process exited non-zero
  int max_attempts = 3;                // attempts in total, including the first (1..100)
  TimeMs backoff_ms = 10 * kSecondMs;  // before the 2nd attempt; doubles each time
  TimeMs max_backoff_ms = 5 * kMinuteMs;
  friend bool operator==(const RetryPolicy&, const RetryPolicy&) = default;
};

// A Python virtual environment for the job's processes (`python:` in docs/jobs-spec.md), made
// by the setup step before the spec's own `setup:` commands, with the system's packages visible
// in it. Nothing is fetched from a package index: pip looks only in `wheels`.
struct PythonSettings {
  bool venv = false;
  std::string requirements;  // a requirements file in the code, installed into the venv
  std::string wheels;        // a directory of wheels in the code, where pip looks
  friend bool operator==(const PythonSettings&, const PythonSettings&) = default;
};

// A metric read from the job's stdout: `regex` has exactly one capture group, the number.
struct MetricDefinition {
  std::string name;
  std::string regex;  // ECMAScript syntax (std::regex)
  friend bool operator==(const MetricDefinition&, const MetricDefinition&) = default;
};

struct JobSpec {
  std::string name;                  // required, [a-z0-9][a-z0-9-]{0,62}
  std::vector<std::string> command;  // argv; a YAML string s becomes {"/bin/sh", "-c", s}
  std::string code;                  // directory to upload, relative to the spec file; "" = none
  std::map<std::string, std::string> env;  // names [A-Za-z_][A-Za-z0-9_]*, none reserved
  Resources resources;                     // per node
  int nodes = 1;                           // 1..64
  std::string processes_per_node = "1";    // "1".."64" or "gpu" (one per GPU)
  nlohmann::json hyperparameters = nlohmann::json::object();  // name -> string, number or bool
  CheckpointSettings checkpoint;
  RetryPolicy retry;
  TimeMs max_runtime_ms = 0;  // 0: no limit
  // 0: a drain (or a spot notice) stops the job at once, so that it checkpoints and resumes
  // elsewhere. Above 0: the job keeps running while its node drains, until this long before
  // the drain's deadline, and then has this long to stop (a service that is replaced first).
  TimeMs drain_grace_ms = 0;
  CapacityType capacity = CapacityType::kAny;
  int priority = 0;                                  // -1000..1000, higher runs first
  std::map<std::string, std::string> node_selector;  // labels a node must have
  bool allow_zone_split = false;  // whether a multi-node job may span availability zones
  std::vector<MetricDefinition> metrics;
  // Datasets of the project the job reads (docs/datasets.md): named to its processes in
  // TENSORFLEET_DATASETS and TENSORFLEET_DATASET_<NAME>.
  std::vector<std::string> datasets;
  // Commands run before the job's first rank on a node (each with /bin/sh -c, in the code's
  // directory), and again only when the code or the commands change: what they make is kept
  // on the node between attempts (worker/setup_step.h).
  std::vector<std::string> setup;
  PythonSettings python;
  friend bool operator==(const JobSpec&, const JobSpec&) = default;
};

// The environment variable that carries hyperparameter `name` to the job's processes:
// TENSORFLEET_HP_ and the name in upper case, with "." and "-" as "_" ("model.dim" ->
// TENSORFLEET_HP_MODEL_DIM). A spec's hyperparameters each have their own.
std::string HyperparameterEnvName(std::string_view name);

// The environment variable that carries dataset `name` to the job's processes:
// TENSORFLEET_DATASET_ and the name in upper case, with "." and "-" as "_".
std::string DatasetEnvName(std::string_view name);

// Reads a YAML spec. `source_name` (usually the file name) starts every error message.
Result<JobSpec> ParseJobSpec(std::string_view yaml_text, std::string_view source_name);

// Checks every value of `spec` against the rules of docs/jobs-spec.md (what ParseJobSpec
// checks after reading the types). kInvalidArgument "<field path>: <what is wrong>" for the
// first problem, with the field named as the YAML spells it.
Status ValidateJobSpec(const JobSpec& spec);

// The spec as the store keeps it: every field, in canonical units (milliseconds, bytes), named
// as in JobSpec ("sync_interval_ms", "memory_bytes").
nlohmann::json JobSpecToJson(const JobSpec& spec);

// The inverse of JobSpecToJson: JobSpecFromJson(JobSpecToJson(s)) == s for every valid s.
// A missing field takes its default (name and command are required); an unknown field, a
// value of the wrong type or one that ValidateJobSpec refuses is kInvalidArgument.
Result<JobSpec> JobSpecFromJson(const nlohmann::json& json);

}  // namespace tf::jobs
