#include "jobs/hyperparameter_settings.h"

#include "jobs/spec_reader.h"

namespace tf::jobs {

Result<std::pair<std::string, nlohmann::json>> ParseHyperparameterSetting(std::string_view text) {
  const size_t eq = text.find('=');
  if (eq == std::string_view::npos) {
    return InvalidArgument("--set '" + std::string(text) + "': expected NAME=VALUE");
  }
  std::string name(text.substr(0, eq));
  if (name.empty()) {
    return InvalidArgument("--set '" + std::string(text) + "': the name before '=' is empty");
  }
  std::string value(text.substr(eq + 1));
  if (value.empty()) return std::pair{name, nlohmann::json("")};
  auto typed = TypeScalarText(value);
  if (!typed.ok())
    return InvalidArgument("--set " + name + ": '" + value + "' " + typed.status().message());
  return std::pair{name, *typed};
}

Status ApplyHyperparameterSettings(JobSpec& spec, const nlohmann::json& settings) {
  if (settings.is_null()) return OkStatus();
  if (!settings.is_object()) {
    return InvalidArgument("'set' must be an object of hyperparameter names to values");
  }
  if (!spec.hyperparameters.is_object()) spec.hyperparameters = nlohmann::json::object();
  for (const auto& [name, value] : settings.items()) {
    if (!value.is_string() && !value.is_number() && !value.is_boolean()) {
      return InvalidArgument("--set " + name + ": must be a string, a number or true/false");
    }
    spec.hyperparameters[name] = value;
  }
  Status valid = ValidateJobSpec(spec);
  if (!valid.ok() && valid.message().find("hyperparameters.") != std::string::npos) {
    return InvalidArgument("--set: " + valid.message());
  }
  return valid;
}

}  // namespace tf::jobs
