#include "jobs/spec_rules.h"

#include <cctype>
#include <cmath>
#include <map>
#include <set>

#include "jobs/metric_lines.h"
#include "jobs/metric_regex.h"
#include "jobs/quantities.h"
#include "jobs/spec_text.h"

namespace tf::jobs {
namespace {

using Problem = std::optional<SpecProblem>;

bool IsLower(char c) { return c >= 'a' && c <= 'z'; }
bool IsLetter(char c) { return IsLower(c) || (c >= 'A' && c <= 'Z'); }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsAlnum(char c) { return IsLetter(c) || IsDigit(c); }

Problem Fail(std::string path, std::string message) {
  return SpecProblem{std::move(path), std::move(message)};
}

Problem CheckInt(const std::string& path, int64_t value, IntRange range) {
  if (value >= range.min && value <= range.max) return std::nullopt;
  return Fail(path, IntRangeMessage(range, std::to_string(value)));
}

Problem CheckDuration(const std::string& path, TimeMs value, IntRange range) {
  if (value >= range.min && value <= range.max) return std::nullopt;
  return Fail(path, "must be a duration from " + FormatDuration(range.min) + " to " +
                        FormatDuration(range.max) + ", got " +
                        (value < 0 ? std::to_string(value) + "ms" : FormatDuration(value)));
}

bool IsJobName(std::string_view name) {
  if (name.empty() || name.size() > kMaxNameBytes) return false;
  if (!IsLower(name[0]) && !IsDigit(name[0])) return false;
  for (char c : name) {
    if (!IsLower(c) && !IsDigit(c) && c != '-') return false;
  }
  return true;
}

bool IsEnvName(std::string_view name) {
  if (name.empty() || name.size() > kMaxKeyBytes) return false;
  if (!IsLetter(name[0]) && name[0] != '_') return false;
  for (char c : name) {
    if (!IsAlnum(c) && c != '_') return false;
  }
  return true;
}

bool IsHyperparameterName(std::string_view name) {
  if (name.empty() || name.size() > kMaxKeyBytes) return false;
  if (!IsLetter(name[0]) && name[0] != '_') return false;
  for (char c : name) {
    if (!IsAlnum(c) && c != '_' && c != '.' && c != '-') return false;
  }
  return true;
}

// Kubernetes-like: "gpu", "zone", "nvidia.com/gpu.product".
bool IsLabelKey(std::string_view key) {
  if (key.empty() || key.size() > kMaxKeyBytes) return false;
  if (!IsAlnum(key.front()) || !IsAlnum(key.back())) return false;
  for (char c : key) {
    if (!IsAlnum(c) && c != '-' && c != '_' && c != '.' && c != '/') return false;
  }
  return true;
}

bool IsLabelValue(std::string_view value) {
  if (value.size() > kMaxLabelValueBytes) return false;
  for (char c : value) {
    if (!IsAlnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

// Text that becomes an argument, a variable or a path: UTF-8 (the stored JSON holds nothing
// else) without NUL (which ends a C string).
Problem CheckText(const std::string& path, const std::string& value) {
  if (value.find('\0') != std::string::npos) return Fail(path, "must not contain a NUL byte");
  if (!IsValidUtf8(value)) return Fail(path, "must be valid UTF-8");
  return std::nullopt;
}

Problem CheckPathBytes(const std::string& path, const std::string& value) {
  if (value.size() > kMaxPathBytes) {
    return Fail(path, "must be at most " + std::to_string(kMaxPathBytes) + " bytes");
  }
  return CheckText(path, value);
}

Problem CheckCommand(const JobSpec& spec) {
  if (spec.command.empty()) return Fail("command", "is required");
  if (spec.command.size() > kMaxCommandArgs) {
    return Fail("command", "must have at most " + std::to_string(kMaxCommandArgs) +
                               " arguments, got " + std::to_string(spec.command.size()));
  }
  size_t bytes = 0;
  for (size_t i = 0; i < spec.command.size(); ++i) {
    const std::string& arg = spec.command[i];
    std::string path = "command[" + std::to_string(i) + "]";
    if (i == 0 && arg.empty()) return Fail(path, "the program must not be empty");
    if (auto p = CheckText(path, arg)) return p;
    bytes += arg.size();
  }
  if (bytes > kMaxCommandBytes) {
    return Fail("command", "must be at most " + std::to_string(kMaxCommandBytes / 1024) +
                               " KiB in all, got " + std::to_string(bytes) + " bytes");
  }
  return std::nullopt;
}

Problem CheckCode(const JobSpec& spec) { return CheckPathBytes("code", spec.code); }

Problem CheckEnv(const JobSpec& spec) {
  if (spec.env.size() > kMaxEnvVars) {
    return Fail("env", "must have at most " + std::to_string(kMaxEnvVars) + " variables, got " +
                           std::to_string(spec.env.size()));
  }
  size_t bytes = 0;
  for (const auto& [name, value] : spec.env) {
    std::string path = "env." + name;
    if (!IsEnvName(name)) {
      return Fail(path,
                  "is not a valid variable name (letters, digits and _, not starting "
                  "with a digit, up to " +
                      std::to_string(kMaxKeyBytes) + ")");
    }
    if (IsPlatformEnvName(name)) {
      return Fail(path,
                  "is set by the platform (names starting with TENSORFLEET_ and "
                  "torchrun's RANK, WORLD_SIZE, MASTER_ADDR, ... are reserved)");
    }
    if (auto p = CheckText(path, value)) return p;
    bytes += name.size() + value.size();
  }
  if (bytes > kMaxEnvBytes) {
    return Fail("env", "must be at most " + std::to_string(kMaxEnvBytes / 1024) +
                           " KiB in all, got " + std::to_string(bytes) + " bytes");
  }
  return std::nullopt;
}

Problem CheckResources(const JobSpec& spec) {
  const Resources& r = spec.resources;
  if (auto p = CheckInt("resources.gpus", r.gpus, kGpusRange)) return p;
  if (auto p = CheckInt("resources.cpus", r.cpus, kCpusRange)) return p;
  if (r.memory_bytes < 0 || r.memory_bytes > kMaxMemoryBytes) {
    return Fail(
        "resources.memory",
        "must be from 0 to " + FormatMemory(kMaxMemoryBytes) + ", got " +
            (r.memory_bytes < 0 ? std::to_string(r.memory_bytes) : FormatMemory(r.memory_bytes)));
  }
  if (r.memory_bytes > 0 && r.memory_bytes < kMinMemoryBytes) {
    // "memory: 16" is 16 bytes: almost surely a forgotten unit.
    return Fail("resources.memory",
                "must be 0 or at least 1Mi, got " + std::to_string(r.memory_bytes) +
                    " bytes (a number without a unit is bytes: 16Gi is 16 GiB)");
  }
  if (r.gpu_memory_bytes < 0 || r.gpu_memory_bytes > kMaxGpuMemoryBytes ||
      (r.gpu_memory_bytes > 0 && r.gpu_memory_bytes < kMinMemoryBytes)) {
    return Fail("resources.gpu_memory",
                "must be 0 or from 1Mi to " + FormatMemory(kMaxGpuMemoryBytes) + ", got " +
                    (r.gpu_memory_bytes < kMinMemoryBytes ? std::to_string(r.gpu_memory_bytes)
                                                          : FormatMemory(r.gpu_memory_bytes)));
  }
  if (r.gpu_memory_bytes > 0 && r.gpus != 0) {
    return Fail("resources.gpu_memory",
                "is a share of one GPU, so resources.gpus must be 0 (a job has either whole GPUs "
                "or a share of one), got resources.gpus " +
                    std::to_string(r.gpus));
  }
  if (auto p = CheckInt("nodes", spec.nodes, kNodesRange)) return p;
  const std::string& ppn = spec.processes_per_node;
  if (ppn == "gpu") {
    if (r.gpus == 0) {
      return Fail("processes_per_node",
                  "\"gpu\" starts one process per GPU, so it needs "
                  "resources.gpus of at least 1");
    }
    return std::nullopt;
  }
  bool canonical = !ppn.empty() && ppn.size() <= 2 && ppn[0] != '0' && IsDigit(ppn[0]) &&
                   (ppn.size() == 1 || IsDigit(ppn[1]));
  if (!canonical || std::stoi(ppn) > kProcessesPerNodeRange.max) {
    return Fail("processes_per_node",
                "must be a number from 1 to 64 or \"gpu\", got " + Quote(ppn));
  }
  return std::nullopt;
}

Problem CheckHyperparameters(const JobSpec& spec) {
  const nlohmann::json& h = spec.hyperparameters;
  if (!h.is_object()) return Fail("hyperparameters", "must be a mapping of names to values");
  if (h.size() > kMaxHyperparameters) {
    return Fail("hyperparameters", "must have at most " + std::to_string(kMaxHyperparameters) +
                                       " entries, got " + std::to_string(h.size()));
  }
  std::map<std::string, std::string> variables;  // variable -> the name that has it
  for (auto it = h.begin(); it != h.end(); ++it) {
    std::string path = "hyperparameters." + it.key();
    if (!IsHyperparameterName(it.key())) {
      return Fail(path,
                  "is not a valid name (letters, digits, _ . -, not starting with a "
                  "digit, up to " +
                      std::to_string(kMaxKeyBytes) + ")");
    }
    std::string variable = HyperparameterEnvName(it.key());
    if (auto [other, added] = variables.emplace(variable, it.key()); !added) {
      return Fail(path, "has the same variable as " + Quote(other->second) + " (" + variable +
                            "); rename one");
    }
    const nlohmann::json& v = it.value();
    if (v.is_string()) {
      const std::string& text = v.get_ref<const std::string&>();
      if (text.size() > kMaxHyperparameterBytes) {
        return Fail(path, "must be at most " + std::to_string(kMaxHyperparameterBytes) + " bytes");
      }
      if (!IsValidUtf8(text)) return Fail(path, "must be valid UTF-8");
    } else if (v.is_number_float()) {
      if (!std::isfinite(v.get<double>())) return Fail(path, "must be a finite number");
    } else if (!v.is_number() && !v.is_boolean()) {
      return Fail(path, "must be a string, a number or true/false");
    }
  }
  return std::nullopt;
}

// A path inside the job's working directory (its code): not empty, relative, no "..".
Problem CheckInsideWorkdir(const std::string& path, const std::string& dir) {
  if (dir.empty()) return Fail(path, "must not be empty");
  if (dir.front() == '/') {
    return Fail(path, "must be relative to the job's working directory, got " + Quote(dir));
  }
  if (dir == ".." || dir.starts_with("../") || dir.ends_with("/..") ||
      dir.find("/../") != std::string::npos) {
    return Fail(path, "must stay inside the job's working directory, got " + Quote(dir));
  }
  return CheckPathBytes(path, dir);
}

Problem CheckCheckpointAndRetry(const JobSpec& spec) {
  if (auto p = CheckInsideWorkdir("checkpoint.dir", spec.checkpoint.dir)) return p;
  if (auto p = CheckDuration("checkpoint.sync_interval", spec.checkpoint.sync_interval_ms,
                             kSyncIntervalRange)) {
    return p;
  }
  const RetryPolicy& r = spec.retry;
  if (auto p = CheckInt("retry.max_attempts", r.max_attempts, kMaxAttemptsRange)) return p;
  if (auto p = CheckDuration("retry.backoff", r.backoff_ms, kBackoffRange)) return p;
  if (auto p = CheckDuration("retry.max_backoff", r.max_backoff_ms, kMaxBackoffRange)) return p;
  if (r.max_backoff_ms < r.backoff_ms) {
    return Fail("retry.max_backoff", "must be at least retry.backoff (" +
                                         FormatDuration(r.backoff_ms) + "), got " +
                                         FormatDuration(r.max_backoff_ms));
  }
  return std::nullopt;
}

Problem CheckScheduling(const JobSpec& spec) {
  if (auto p = CheckDuration("max_runtime", spec.max_runtime_ms, kMaxRuntimeRange)) return p;
  if (auto p = CheckDuration("drain_grace", spec.drain_grace_ms, kDrainGraceRange)) return p;
  if (auto p = CheckInt("priority", spec.priority, kPriorityRange)) return p;
  if (spec.node_selector.size() > kMaxNodeSelectorLabels) {
    return Fail("node_selector", "must have at most " + std::to_string(kMaxNodeSelectorLabels) +
                                     " labels, got " + std::to_string(spec.node_selector.size()));
  }
  for (const auto& [key, value] : spec.node_selector) {
    std::string path = "node_selector." + key;
    if (!IsLabelKey(key)) {
      return Fail(path,
                  "is not a valid label (letters, digits and - _ . /, starting and "
                  "ending with a letter or digit, up to " +
                      std::to_string(kMaxKeyBytes) + ")");
    }
    if (!IsLabelValue(value)) {
      return Fail(path, "must be a label value (letters, digits and - _ ., up to " +
                            std::to_string(kMaxLabelValueBytes) + "), got " + Quote(value));
    }
  }
  return std::nullopt;
}

Problem CheckMetrics(const JobSpec& spec) {
  if (spec.metrics.size() > kMaxMetricDefinitions) {
    return Fail("metrics", "must have at most " + std::to_string(kMaxMetricDefinitions) +
                               " definitions, got " + std::to_string(spec.metrics.size()));
  }
  std::set<std::string_view> names;
  for (size_t i = 0; i < spec.metrics.size(); ++i) {
    const MetricDefinition& m = spec.metrics[i];
    std::string path = "metrics[" + std::to_string(i) + "]";
    if (m.name.empty()) return Fail(path + ".name", "is required");
    if (m.regex.empty()) return Fail(path + ".regex", "is required");
    if (!IsValidMetricName(m.name)) {
      return Fail(path + ".name",
                  "must be letters, digits and _ . : / - (up to 128, starting "
                  "with a letter or _), got " +
                      Quote(m.name));
    }
    if (!names.insert(m.name).second) {
      return Fail(path + ".name", "defines " + Quote(m.name) + " a second time");
    }
    if (!IsValidUtf8(m.regex)) return Fail(path + ".regex", "must be valid UTF-8");
    auto re = CompileMetricRegex(m.regex);
    if (!re.ok()) return Fail(path + ".regex", re.status().message());
  }
  return std::nullopt;
}

// The dataset service's names (datasets/dataset_index.h): [a-z0-9][a-z0-9._-]{0,62}.
bool IsDatasetName(const std::string& name) {
  if (name.empty() || name.size() > 63) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    bool ok = IsLower(c) || IsDigit(c) || (i > 0 && (c == '.' || c == '_' || c == '-'));
    if (!ok) return false;
  }
  return true;
}

constexpr size_t kMaxDatasets = 32;

Problem CheckDatasets(const JobSpec& spec) {
  if (spec.datasets.size() > kMaxDatasets) {
    return Fail("datasets", "must name at most " + std::to_string(kMaxDatasets) +
                                " datasets, got " + std::to_string(spec.datasets.size()));
  }
  std::map<std::string, std::string> variables;  // variable -> the dataset that has it
  for (size_t i = 0; i < spec.datasets.size(); ++i) {
    const std::string& name = spec.datasets[i];
    std::string path = "datasets[" + std::to_string(i) + "]";
    if (!IsDatasetName(name)) {
      return Fail(path,
                  "must be a dataset name (1-63 of a-z, 0-9, '.', '_', '-', starting "
                  "with a letter or digit), got " +
                      Quote(name));
    }
    auto [it, added] = variables.emplace(DatasetEnvName(name), name);
    if (!added) {
      return Fail(path, it->second == name ? "names " + Quote(name) + " a second time"
                                           : Quote(name) + " and " + Quote(it->second) +
                                                 " would share the variable " + it->first);
    }
  }
  return std::nullopt;
}

constexpr size_t kMaxSetupCommands = 32;

Problem CheckSetup(const JobSpec& spec) {
  if (spec.setup.size() > kMaxSetupCommands) {
    return Fail("setup", "must have at most " + std::to_string(kMaxSetupCommands) +
                             " commands, got " + std::to_string(spec.setup.size()));
  }
  size_t bytes = 0;
  for (size_t i = 0; i < spec.setup.size(); ++i) {
    std::string path = "setup[" + std::to_string(i) + "]";
    if (spec.setup[i].find_first_not_of(" \t\n") == std::string::npos) {
      return Fail(path, "must not be empty");
    }
    if (auto p = CheckText(path, spec.setup[i])) return p;
    bytes += spec.setup[i].size();
  }
  if (bytes > kMaxCommandBytes) {
    return Fail("setup", "must be at most " + std::to_string(kMaxCommandBytes / 1024) +
                             " KiB in all, got " + std::to_string(bytes) + " bytes");
  }
  const PythonSettings& python = spec.python;
  for (const auto& [field, value] : {std::pair{"python.requirements", &python.requirements},
                                     {"python.wheels", &python.wheels}}) {
    if (value->empty()) continue;
    if (!python.venv) return Fail(field, "needs python.venv: true (it installs into the venv)");
    if (auto p = CheckInsideWorkdir(field, *value)) return p;
  }
  return std::nullopt;
}

}  // namespace

std::string DatasetEnvName(std::string_view name) {
  std::string variable = "TENSORFLEET_DATASET_";
  for (char c : name) {
    variable += IsAlnum(c) ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : '_';
  }
  return variable;
}

std::string IntRangeMessage(IntRange range, std::string_view got) {
  return "must be an integer from " + std::to_string(range.min) + " to " +
         std::to_string(range.max) + ", got " + std::string(got);
}

std::string HyperparameterEnvName(std::string_view name) {
  std::string variable = "TENSORFLEET_HP_";
  for (char c : name) {
    variable += IsAlnum(c) ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : '_';
  }
  return variable;
}

bool IsPlatformEnvName(std::string_view name) {
  static const std::set<std::string_view, std::less<>> kSet = {
      "RANK",      "LOCAL_RANK",  "WORLD_SIZE",  "LOCAL_WORLD_SIZE",    "GROUP_RANK",
      "NODE_RANK", "MASTER_ADDR", "MASTER_PORT", "CUDA_VISIBLE_DEVICES"};
  if (name == kEngineApiKeyEnv) return false;
  return name.starts_with("TENSORFLEET_") || kSet.count(name) > 0;
}

std::optional<SpecProblem> FindSpecProblem(const JobSpec& spec) {
  if (spec.name.empty()) return Fail("name", "is required");
  if (!IsJobName(spec.name)) {
    return Fail("name",
                "must be 1-63 lowercase letters, digits and -, starting with a letter "
                "or digit, got " +
                    Quote(spec.name));
  }
  for (auto check :
       {CheckCommand, CheckCode, CheckEnv, CheckResources, CheckHyperparameters,
        CheckCheckpointAndRetry, CheckScheduling, CheckMetrics, CheckDatasets, CheckSetup}) {
    if (auto p = check(spec)) return p;
  }
  return std::nullopt;
}

Status ValidateJobSpec(const JobSpec& spec) {
  if (auto p = FindSpecProblem(spec)) return InvalidArgument(p->path + ": " + p->message);
  return OkStatus();
}

}  // namespace tf::jobs
