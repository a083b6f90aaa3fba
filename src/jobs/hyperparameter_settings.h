// One-off hyperparameter values for a job, as `tensorfleet run job.yaml --set lr=3e-4` gives
// them: each adds a name to the spec's hyperparameters or replaces its value, and the job sees
// them as it sees the spec's own (TENSORFLEET_HP_*, TENSORFLEET_HYPERPARAMETERS).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>

#include "base/status.h"
#include "jobs/job_spec.h"

namespace tf::jobs {

// "name=value", the value typed as the spec's YAML types an unquoted one: true/false, an
// integer, a number, else text ("lr=3e-4" -> 0.0003, "model=llama" -> "llama"; "name=" is the
// empty string). kInvalidArgument naming the setting when it has no "=" or no name, or a value
// that is null or a number out of range.
Result<std::pair<std::string, nlohmann::json>> ParseHyperparameterSetting(std::string_view text);

// Sets each of `settings` (an object of names to strings, numbers or true/false) in the spec's
// hyperparameters and checks the spec again. kInvalidArgument "--set NAME: ..." for a setting
// the spec's rules refuse.
Status ApplyHyperparameterSettings(JobSpec& spec, const nlohmann::json& settings);

}  // namespace tf::jobs
