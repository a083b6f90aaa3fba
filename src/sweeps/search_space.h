// A sweep's search space: the hyperparameters it varies and how (docs/sweeps.md). Read from
// YAML, every error naming the file, line and parameter:
//
//   parameters:
//     lr: {type: loguniform, low: 1e-5, high: 1e-2}
//     layers: {type: int, low: 2, high: 8}
//     optimizer: {type: categorical, choices: [adamw, sgd]}
//     warmup: {type: fixed, value: 100}
//
// A continuous parameter takes `grid_points: N` for grid search (N values evenly spaced, on a
// log scale for loguniform).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace tf::sweeps {

enum class ParamKind { kUniform, kLogUniform, kInt, kIntLog, kCategorical, kFixed };

struct Param {
  std::string name;
  ParamKind kind = ParamKind::kUniform;
  double low = 0, high = 0;             // uniform, loguniform, int, int_log
  std::vector<nlohmann::json> choices;  // categorical
  nlohmann::json value;                 // fixed
  int grid_points = 0;                  // uniform, loguniform: values on a grid (0: none)
};

struct SearchSpace {
  std::vector<Param> params;  // in the order written
};

// "uniform", "loguniform", "int", "int_log", "categorical", "fixed".
std::string_view ParamKindName(ParamKind kind);

// Reads the `parameters` mapping of `yaml` (other top-level keys are left to the caller).
// kInvalidArgument "<source>:<line>: parameters.<name>.<field>: <what>" for inverted or missing
// bounds, a log scale through zero, an unknown type (naming the known ones), empty or repeated
// choices, or a name the job spec would refuse as a hyperparameter.
Result<SearchSpace> ParseSearchSpace(std::string_view yaml, std::string_view source);

}  // namespace tf::sweeps
