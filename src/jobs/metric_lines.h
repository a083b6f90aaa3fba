// Metrics a job reports, two ways (docs/jobs-spec.md, "Metrics"):
//   - JSON lines {"name": "loss", "value": 1.23, "step": 10} that the process appends to the
//     file named by $TENSORFLEET_METRICS_FILE;
//   - lines of its stdout that a metric definition's regex matches (SageMaker style).
// Both are pure functions of the line; reading files and streams is the caller's.
#pragma once

#include <cstdint>
#include <regex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "jobs/job_spec.h"

namespace tf::jobs {

// Longer lines of the metrics file are refused.
inline constexpr size_t kMaxMetricLineBytes = 4096;

// A matcher reads only the first 1 KiB of a stdout line. std::regex backtracks and recurses
// per character: a pattern such as ".*loss=([0-9.]+)" costs about n^2 steps on a line of n
// bytes that does not match (~50 ms at 1 KiB, ~1 s at 4 KiB on one core).
inline constexpr size_t kMaxMatchedLineBytes = 1024;

struct MetricSample {
  std::string name;
  double value = 0;
  int64_t step = -1;  // -1: none given
  friend bool operator==(const MetricSample&, const MetricSample&) = default;
};

// [A-Za-z_][A-Za-z0-9_.:/-]*, at most 128 characters ("loss", "train:accuracy", "eval/bleu").
bool IsValidMetricName(std::string_view name);

// Parses one line of the metrics file: a JSON object with "name" (a valid metric name),
// "value" (a finite number) and optionally "step" (a whole number >= 0); a trailing "\r" is
// ignored. kInvalidArgument with the reason for anything else, including other fields and an
// empty line (callers skip the line and count it).
Result<MetricSample> ParseMetricLine(std::string_view line);

// The definitions of one job with their regexes compiled once. Thread-compatible: Match is
// const and may be called from several threads at once.
class MetricMatcher {
 public:
  // kInvalidArgument "metrics[i].regex: ..." for a definition whose regex does not compile
  // (ParseJobSpec has already refused those).
  static Result<MetricMatcher> Create(const std::vector<MetricDefinition>& definitions);

  // One sample (step -1) per definition whose regex matches somewhere in the first
  // kMaxMatchedLineBytes of `line` and whose capture group reads as a finite number; in the
  // order of the definitions.
  std::vector<MetricSample> Match(std::string_view line) const;

 private:
  std::vector<std::pair<std::string, std::regex>> definitions_;
};

// Match() for a one-off line: compiles the definitions each call, skipping any that do not
// compile. Prefer a MetricMatcher for a stream of lines.
std::vector<MetricSample> MatchMetricDefinitions(const std::vector<MetricDefinition>& defs,
                                                 std::string_view line);

}  // namespace tf::jobs
