#include "sweeps/search_space.h"

#include <array>
#include <cmath>

#include "jobs/job_spec.h"
#include "jobs/spec_reader.h"
#include "jobs/yaml_document.h"

namespace tf::sweeps {
namespace {

constexpr std::array<std::pair<ParamKind, std::string_view>, 6> kKinds = {{
    {ParamKind::kUniform, "uniform"},
    {ParamKind::kLogUniform, "loguniform"},
    {ParamKind::kInt, "int"},
    {ParamKind::kIntLog, "int_log"},
    {ParamKind::kCategorical, "categorical"},
    {ParamKind::kFixed, "fixed"},
}};
constexpr std::string_view kFields[] = {"type", "low", "high", "choices", "value", "grid_points"};
constexpr size_t kMaxChoices = 1000;
constexpr int kMaxGridPoints = 1000;

class SpaceReader {
 public:
  explicit SpaceReader(std::string_view source) : reader_(source) {}

  Result<SearchSpace> Read(const YAML::Node& root) {
    jobs::SpecField top{root, "", "", 1};
    if (jobs::IsNullValue(root)) return reader_.Error(1, "", "no parameters: the file is empty");
    TF_ASSIGN_OR_RETURN(auto entries, reader_.Entries(top));
    const jobs::SpecField* parameters = nullptr;
    for (const auto& e : entries) {
      if (e.key == "parameters") parameters = &e;
    }
    if (!parameters) return reader_.Error(1, "", "'parameters' is missing");
    TF_ASSIGN_OR_RETURN(auto params, reader_.Entries(*parameters));
    if (params.empty()) return reader_.Error(*parameters, "names no parameter");
    SearchSpace space;
    for (const auto& p : params) {
      TF_ASSIGN_OR_RETURN(Param param, ReadParam(p));
      space.params.push_back(std::move(param));
    }
    TF_RETURN_IF_ERROR(CheckNames(space, *parameters));
    return space;
  }

 private:
  Result<double> Number(const jobs::SpecField& f) {
    TF_ASSIGN_OR_RETURN(nlohmann::json v, reader_.TypedScalar(f));
    if (!v.is_number()) return reader_.Error(f, "must be a number, got " + jobs::Describe(f.node));
    return v.get<double>();
  }

  Result<Param> ReadParam(const jobs::SpecField& field) {
    Param p;
    p.name = field.key;
    TF_ASSIGN_OR_RETURN(auto entries, reader_.Entries(field, kFields));
    const jobs::SpecField* type = nullptr;
    std::map<std::string, const jobs::SpecField*> by_key;
    for (const auto& e : entries) by_key[e.key] = &e;
    if (auto it = by_key.find("type"); it != by_key.end()) type = it->second;
    if (!type) {
      return reader_.Error(field,
                           "needs a type: uniform, loguniform, int, int_log, "
                           "categorical or fixed");
    }
    TF_ASSIGN_OR_RETURN(std::string kind, reader_.String(*type));
    bool known = false;
    for (const auto& [k, name] : kKinds) {
      if (name == kind) {
        p.kind = k;
        known = true;
      }
    }
    if (!known) {
      return reader_.Error(*type, "unknown type '" + kind +
                                      "' (uniform, loguniform, int, int_log, categorical, fixed)");
    }
    auto want = [&](std::string_view key) -> Result<const jobs::SpecField*> {
      auto it = by_key.find(std::string(key));
      if (it == by_key.end()) {
        return reader_.Error(
            field, std::string(ParamKindName(p.kind)) + " needs '" + std::string(key) + "'");
      }
      return it->second;
    };
    auto refuse_others = [&](std::initializer_list<std::string_view> allowed) -> Status {
      for (const auto& [key, f] : by_key) {
        if (key == "type" || std::find(allowed.begin(), allowed.end(), key) != allowed.end()) {
          continue;
        }
        return reader_.Error(
            *f, "is not a field of a " + std::string(ParamKindName(p.kind)) + " parameter");
      }
      return OkStatus();
    };
    switch (p.kind) {
      case ParamKind::kUniform:
      case ParamKind::kLogUniform:
      case ParamKind::kInt:
      case ParamKind::kIntLog: {
        const bool continuous = p.kind == ParamKind::kUniform || p.kind == ParamKind::kLogUniform;
        TF_RETURN_IF_ERROR(continuous ? refuse_others({"low", "high", "grid_points"})
                                      : refuse_others({"low", "high"}));
        TF_ASSIGN_OR_RETURN(const jobs::SpecField* low, want("low"));
        TF_ASSIGN_OR_RETURN(const jobs::SpecField* high, want("high"));
        TF_ASSIGN_OR_RETURN(p.low, Number(*low));
        TF_ASSIGN_OR_RETURN(p.high, Number(*high));
        const bool integer = !continuous;
        if (integer && (p.low != std::floor(p.low) || p.high != std::floor(p.high))) {
          return reader_.Error(p.low != std::floor(p.low) ? *low : *high, "must be an integer");
        }
        if (integer ? p.high < p.low : p.high <= p.low) {
          return reader_.Error(*high, "must be " + std::string(integer ? "at least" : "above") +
                                          " low (" + low->node.Scalar() + ")");
        }
        const bool log = p.kind == ParamKind::kLogUniform || p.kind == ParamKind::kIntLog;
        if (log && p.low <= 0) {
          return reader_.Error(*low, "must be above 0 on a log scale");
        }
        if (auto it = by_key.find("grid_points"); it != by_key.end()) {
          TF_ASSIGN_OR_RETURN(int64_t n, reader_.Int(*it->second, {2, kMaxGridPoints}));
          p.grid_points = static_cast<int>(n);
        }
        break;
      }
      case ParamKind::kCategorical: {
        TF_RETURN_IF_ERROR(refuse_others({"choices"}));
        TF_ASSIGN_OR_RETURN(const jobs::SpecField* choices, want("choices"));
        TF_ASSIGN_OR_RETURN(auto items, reader_.Items(*choices, "a list of values"));
        if (items.empty() || items.size() > kMaxChoices) {
          return reader_.Error(*choices,
                               "must list 1 to " + std::to_string(kMaxChoices) + " values");
        }
        for (const auto& item : items) {
          TF_ASSIGN_OR_RETURN(nlohmann::json v, reader_.TypedScalar(item));
          if (std::find(p.choices.begin(), p.choices.end(), v) != p.choices.end()) {
            return reader_.Error(item, "repeats the value " + v.dump());
          }
          p.choices.push_back(std::move(v));
        }
        break;
      }
      case ParamKind::kFixed: {
        TF_RETURN_IF_ERROR(refuse_others({"value"}));
        TF_ASSIGN_OR_RETURN(const jobs::SpecField* value, want("value"));
        TF_ASSIGN_OR_RETURN(p.value, reader_.TypedScalar(*value));
        break;
      }
    }
    return p;
  }

  // The names become the job's hyperparameters: the job spec's rules apply to them.
  Status CheckNames(const SearchSpace& space, const jobs::SpecField& parameters) {
    jobs::JobSpec probe;
    probe.name = "sweep";
    probe.command = {"true"};
    for (const Param& p : space.params) probe.hyperparameters[p.name] = 0;
    Status valid = jobs::ValidateJobSpec(probe);
    if (valid.ok()) return OkStatus();
    std::string message = valid.message();
    const std::string prefix = "hyperparameters.";
    if (message.starts_with(prefix)) message = "parameters." + message.substr(prefix.size());
    return reader_.Error(reader_.LineOf(message.substr(0, message.find(':'))), "", message);
  }

  jobs::SpecReader reader_;
};

}  // namespace

std::string_view ParamKindName(ParamKind kind) {
  for (const auto& [k, name] : kKinds) {
    if (k == kind) return name;
  }
  return "?";
}

Result<SearchSpace> ParseSearchSpace(std::string_view yaml, std::string_view source) {
  TF_ASSIGN_OR_RETURN(YAML::Node root, jobs::LoadOneDocument(yaml, source));
  return SpaceReader(source).Read(root);
}

}  // namespace tf::sweeps
