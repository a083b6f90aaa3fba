#include "sweeps/sweep_spec.h"

#include <cmath>
#include <map>
#include <utility>

#include "jobs/job_spec_node.h"
#include "jobs/spec_reader.h"
#include "jobs/yaml_document.h"

namespace tf::sweeps {
namespace {

constexpr std::string_view kSweepFields[] = {
    "name", "job",        "parameters",   "objective", "strategy",
    "seed", "max_trials", "max_parallel", "budget",    "early_stopping"};
constexpr std::string_view kSweepObjectiveFields[] = {"metric", "goal", "value"};
constexpr std::string_view kEarlyStoppingFields[] = {
    "type",     "resource",  "min_resource", "max_resource", "reduction_factor",
    "brackets", "min_trials"};
constexpr size_t kMaxSweepName = 56;  // "-" and a trial number of up to 6 more fit 63

using Field = jobs::SpecField;
using FieldMap = std::map<std::string, const Field*, std::less<>>;

class SweepReader {
 public:
  SweepReader(std::string_view source,
              const std::function<Result<std::string>(const std::string&)>& read_file)
      : source_(source), reader_(source), read_file_(read_file) {}

  Result<SweepSpec> Read(std::string_view yaml) {
    TF_ASSIGN_OR_RETURN(YAML::Node root, jobs::LoadOneDocument(yaml, source_));
    if (jobs::IsNullValue(root)) return reader_.Error(1, "", "the sweep spec is empty");
    Field top{root, "", "", 1};
    TF_ASSIGN_OR_RETURN(auto entries, reader_.Entries(top, kSweepFields));
    FieldMap by_key;
    for (const auto& e : entries) by_key[e.key] = &e;
    SweepSpec spec;
    TF_ASSIGN_OR_RETURN(const Field* name, Want(by_key, "name", 1));
    TF_ASSIGN_OR_RETURN(spec.name, reader_.String(*name));
    TF_RETURN_IF_ERROR(CheckName(spec.name, *name));
    TF_ASSIGN_OR_RETURN(const Field* job, Want(by_key, "job", 1));
    TF_ASSIGN_OR_RETURN(spec.job, ReadJob(*job));
    TF_ASSIGN_OR_RETURN(spec.space, ParseSearchSpace(yaml, source_));
    TF_ASSIGN_OR_RETURN(const Field* objective, Want(by_key, "objective", 1));
    TF_ASSIGN_OR_RETURN(spec.objective, ReadObjective(*objective));
    if (const Field* f = Find(by_key, "strategy")) {
      TF_ASSIGN_OR_RETURN(spec.strategy, reader_.String(*f));
      if (auto made = NewStrategy(spec.strategy, spec.space, 0); !made.ok()) {
        return reader_.Error(*f, made.status().message());
      }
    }
    if (const Field* f = Find(by_key, "seed")) {
      TF_ASSIGN_OR_RETURN(int64_t seed, reader_.Int(*f, {0, INT64_MAX}));
      spec.seed = static_cast<uint64_t>(seed);
    }
    if (const Field* f = Find(by_key, "max_parallel")) {
      TF_ASSIGN_OR_RETURN(int64_t n, reader_.Int(*f, {1, kMaxSweepParallel}));
      spec.max_parallel = static_cast<int>(n);
    }
    if (const Field* f = Find(by_key, "budget")) {
      TF_ASSIGN_OR_RETURN(nlohmann::json v, reader_.TypedScalar(*f));
      if (!v.is_number() || !(v.get<double>() > 0)) {
        return reader_.Error(*f,
                             "must be a number of dollars above 0, got " + jobs::Describe(f->node));
      }
      spec.budget = v.get<double>();
    }
    TF_RETURN_IF_ERROR(ReadMaxTrials(by_key, spec));
    TF_RETURN_IF_ERROR(ReadEarlyStopping(by_key, spec));
    return spec;
  }

  // Only `strategy` (for hyperband) and `early_stopping`, other keys left to the caller.
  Result<EarlyStopping> ReadEarlyStoppingOnly(std::string_view yaml) {
    TF_ASSIGN_OR_RETURN(YAML::Node root, jobs::LoadOneDocument(yaml, source_));
    if (jobs::IsNullValue(root)) return reader_.Error(1, "", "the file is empty");
    Field top{root, "", "", 1};
    TF_ASSIGN_OR_RETURN(auto entries, reader_.Entries(top));
    FieldMap by_key;
    for (const auto& e : entries) by_key[e.key] = &e;
    SweepSpec spec;
    if (const Field* f = Find(by_key, "strategy")) {
      TF_ASSIGN_OR_RETURN(spec.strategy, reader_.String(*f));
    }
    TF_RETURN_IF_ERROR(ReadEarlyStopping(by_key, spec));
    if (!spec.early_stopping) return reader_.Error(1, "", "'early_stopping' is missing");
    return *spec.early_stopping;
  }

 private:
  static const Field* Find(const FieldMap& by_key, std::string_view key) {
    auto it = by_key.find(key);
    return it == by_key.end() || jobs::IsNullValue(it->second->node) ? nullptr : it->second;
  }

  Result<const Field*> Want(const FieldMap& by_key, std::string_view key, int line) {
    if (const Field* f = Find(by_key, key)) return f;
    return reader_.Error(line, "", "'" + std::string(key) + "' is missing");
  }

  Status CheckName(const std::string& name, const Field& f) {
    jobs::JobSpec probe;
    probe.name = name;
    probe.command = {"true"};
    if (name.size() > kMaxSweepName || !jobs::ValidateJobSpec(probe).ok()) {
      return reader_.Error(f, "must be 1-" + std::to_string(kMaxSweepName) +
                                  " lowercase letters, digits and -, starting with a letter or "
                                  "digit (its trials' jobs are named after it), got '" +
                                  name + "'");
    }
    return OkStatus();
  }

  // `job: PATH` reads the file, whose errors name it; `job: {...}` reads the mapping here,
  // whose errors name this file's lines and the field under "job.".
  Result<jobs::JobSpec> ReadJob(const Field& f) {
    if (f.node.IsScalar()) {
      TF_ASSIGN_OR_RETURN(std::string path, reader_.String(f));
      Result<std::string> text = read_file_(path);
      if (!text.ok()) {
        return reader_.Error(f, "cannot read the job spec: " + text.status().message());
      }
      return jobs::ParseJobSpec(*text, path);
    }
    if (!f.node.IsMap()) {
      return reader_.Error(f, "must be a job spec file's path or a job spec (a mapping), got " +
                                  jobs::Describe(f.node));
    }
    Result<jobs::JobSpec> job = jobs::ParseJobSpecNode(f.node, source_);
    if (job.ok()) return job;
    // "<source>:<line>: <path>: <what>" -> "<source>:<line>: job.<path>: <what>"
    std::string message = job.status().message();
    const size_t after_line = message.find(": ", source_.size() + 1);
    if (message.starts_with(source_ + ":") && after_line != std::string::npos) {
      message.insert(after_line + 2, "job.");
    }
    return InvalidArgument(message);
  }

  Result<Objective> ReadObjective(const Field& f) {
    TF_ASSIGN_OR_RETURN(auto entries, reader_.Entries(f, kSweepObjectiveFields));
    FieldMap by_key;
    for (const auto& e : entries) by_key[e.key] = &e;
    Objective o;
    const Field* metric = Find(by_key, "metric");
    if (!metric) return reader_.Error(f, "needs the 'metric' that the trials report");
    TF_ASSIGN_OR_RETURN(o.metric, reader_.String(*metric));
    if (o.metric.empty()) return reader_.Error(*metric, "must name a metric");
    if (const Field* goal = Find(by_key, "goal")) {
      TF_ASSIGN_OR_RETURN(std::string name, reader_.String(*goal));
      auto parsed = ParseGoal(name);
      if (!parsed.ok()) return reader_.Error(*goal, parsed.status().message());
      o.goal = *parsed;
    }
    if (const Field* value = Find(by_key, "value")) {
      TF_ASSIGN_OR_RETURN(std::string which, reader_.String(*value));
      if (which != "last" && which != "best") {
        return reader_.Error(*value,
                             "must be last (the trial's last report) or best, got '" + which + "'");
      }
      o.best = which == "best";
    }
    return o;
  }

  Status ReadMaxTrials(const FieldMap& by_key, SweepSpec& spec) {
    int64_t grid_points = 0;
    if (spec.strategy == "grid") {
      TF_ASSIGN_OR_RETURN(grid_points, GridPoints(spec.space));  // made once already above
    }
    const Field* f = Find(by_key, "max_trials");
    if (!f) {
      if (grid_points == 0) {
        return reader_.Error(1, "",
                             "'max_trials' is missing (only a grid has a number of its own)");
      }
      if (grid_points > kMaxSweepTrials) {
        return reader_.Error(1, "",
                             "the grid has " + std::to_string(grid_points) +
                                 " points: set max_trials (at most " +
                                 std::to_string(kMaxSweepTrials) + ")");
      }
      spec.max_trials = static_cast<int>(grid_points);
      return OkStatus();
    }
    TF_ASSIGN_OR_RETURN(int64_t n, reader_.Int(*f, {1, kMaxSweepTrials}));
    spec.max_trials = static_cast<int>(n);
    return OkStatus();
  }

  Result<double> Number(const Field& f) {
    TF_ASSIGN_OR_RETURN(nlohmann::json v, reader_.TypedScalar(f));
    if (!v.is_number()) return reader_.Error(f, "must be a number, got " + jobs::Describe(f.node));
    return v.get<double>();
  }

  Status ReadEarlyStopping(const FieldMap& by_key, SweepSpec& spec) {
    const Field* f = Find(by_key, "early_stopping");
    const bool hyperband = spec.strategy == "hyperband";
    if (!f) {
      if (hyperband) {
        return reader_.Error(1, "",
                             "strategy hyperband needs early_stopping's resources: "
                             "early_stopping: {resource: step, min_resource: 1, "
                             "max_resource: 81}");
      }
      return OkStatus();
    }
    TF_ASSIGN_OR_RETURN(auto entries, reader_.Entries(*f, kEarlyStoppingFields));
    FieldMap fields;
    for (const auto& e : entries) fields[e.key] = &e;
    EarlyStopping rule;
    if (const Field* type = Find(fields, "type")) {
      TF_ASSIGN_OR_RETURN(std::string name, reader_.String(*type));
      auto parsed = ParseStopRule(name);
      if (!parsed.ok()) return reader_.Error(*type, parsed.status().message());
      rule.rule = *parsed;
      if (hyperband && rule.rule != StopRule::kAsha) {
        return reader_.Error(*type, "strategy hyperband stops trials by asha over its brackets");
      }
    } else if (!hyperband) {
      return reader_.Error(*f, "needs a type: asha or median");
    }
    if (const Field* resource = Find(fields, "resource")) {
      TF_ASSIGN_OR_RETURN(rule.resource, reader_.String(*resource));
      if (rule.resource.empty()) return reader_.Error(*resource, "must name a metric");
    }
    const Field* max = Find(fields, "max_resource");
    if (!max)
      return reader_.Error(*f, "needs max_resource: a trial's full budget in " + rule.resource);
    TF_ASSIGN_OR_RETURN(rule.max_resource, Number(*max));
    if (const Field* min = Find(fields, "min_resource")) {
      TF_ASSIGN_OR_RETURN(rule.min_resource, Number(*min));
    }
    if (const Field* eta = Find(fields, "reduction_factor")) {
      TF_ASSIGN_OR_RETURN(rule.reduction_factor, Number(*eta));
    }
    const Field* brackets = Find(fields, "brackets");
    const Field* min_trials = Find(fields, "min_trials");
    if (brackets && (!hyperband || rule.rule != StopRule::kAsha)) {
      return reader_.Error(*brackets, "is strategy hyperband's");
    }
    if (min_trials && rule.rule != StopRule::kMedian) {
      return reader_.Error(*min_trials, "is the median rule's");
    }
    if (min_trials) {
      TF_ASSIGN_OR_RETURN(int64_t n, reader_.Int(*min_trials, {1, kMaxSweepTrials}));
      rule.min_trials = static_cast<int>(n);
    }
    if (hyperband) rule.brackets = HyperbandBrackets(rule);
    if (brackets) {
      TF_ASSIGN_OR_RETURN(int64_t n, reader_.Int(*brackets, {1, 64}));
      rule.brackets = static_cast<int>(n);
    }
    if (Status valid = Validate(rule); !valid.ok()) {
      // Name the field the message starts with.
      const std::string& message = valid.message();
      const std::string field = message.substr(0, message.find(' '));
      const Field* at = Find(fields, field);
      return at ? reader_.Error(*at, message.substr(message.find(' ') + 1))
                : reader_.Error(*f, message);
    }
    spec.early_stopping = rule;
    return OkStatus();
  }

  std::string source_;
  jobs::SpecReader reader_;
  std::function<Result<std::string>(const std::string&)> read_file_;
};

}  // namespace

Result<SweepSpec> ParseSweepSpec(
    std::string_view yaml, std::string_view source,
    const std::function<Result<std::string>(const std::string& path)>& read_file) {
  return jobs::ReadSpecGuarded<SweepSpec>(
      source, [&](const std::string& name) { return SweepReader(name, read_file).Read(yaml); });
}

Result<EarlyStopping> ParseEarlyStopping(std::string_view yaml, std::string_view source) {
  auto no_files = [](const std::string& path) -> Result<std::string> {
    return InvalidArgument("no job is read here: " + path);
  };
  return jobs::ReadSpecGuarded<EarlyStopping>(source, [&](const std::string& name) {
    return SweepReader(name, no_files).ReadEarlyStoppingOnly(yaml);
  });
}

Result<jobs::JobSpec> TrialJob(const SweepSpec& sweep, int trial, const nlohmann::json& params) {
  jobs::JobSpec job = sweep.job;
  job.name = sweep.name + "-" + std::to_string(trial);
  if (!job.hyperparameters.is_object()) job.hyperparameters = nlohmann::json::object();
  for (const auto& [key, value] : params.items()) job.hyperparameters[key] = value;
  if (Status valid = jobs::ValidateJobSpec(job); !valid.ok()) {
    return InvalidArgument("trial " + std::to_string(trial) + "'s job: " + valid.message());
  }
  return job;
}

}  // namespace tf::sweeps
