// The regular expressions of metric definitions: checked when a spec is read, compiled once
// when a job's output is read.
#pragma once

#include <regex>
#include <string_view>

#include "base/status.h"

namespace tf::jobs {

inline constexpr size_t kMaxMetricRegexBytes = 1024;

// Compiles `pattern` as an ECMAScript std::regex with exactly one capture group (the value).
// kInvalidArgument saying why for a pattern that is too long, nests groups more than 32
// deep, would grow past 10,000 states once counted repetitions ("{1000}") are expanded
// (std::regex copies the repeated part that many times), has a back-reference, does not
// compile, or has no capture
// group or several. Never throws.
Result<std::regex> CompileMetricRegex(std::string_view pattern);

}  // namespace tf::jobs
