// Fuzzes what reads a job spec or a job's metrics from outside: the YAML spec (yaml-cpp
// underneath, then the field readers and rules), the JSON form a spec is stored in, metric
// lines, and the stdout matchers. Any crash, hang, exception or sanitizer report is a bug; so
// is a spec that is accepted but does not survive the trip through its stored JSON unchanged.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "jobs/job_spec.h"
#include "jobs/metric_lines.h"

namespace {

// Definitions in the style users write, applied to every line of the input.
const tf::jobs::MetricMatcher& FixedMatcher() {
  static const auto* matcher = new tf::jobs::MetricMatcher(
      *tf::jobs::MetricMatcher::Create({{"loss", "loss[=: ]+([-+0-9.eE]+)"},
                                        {"acc", R"(acc(?:uracy)?=([0-9.]+)%?)"},
                                        {"step", R"(^step (\d+)/\d+)"}}));
  return *matcher;
}

void CheckStoredForm(const tf::jobs::JobSpec& spec) {
  // The store keeps the JSON as text: dump() throws on strings that are not UTF-8.
  std::string text = tf::jobs::JobSpecToJson(spec).dump();
  auto back = tf::jobs::JobSpecFromJson(nlohmann::json::parse(text));
  if (!back.ok() || !(*back == spec)) std::abort();
  // An accepted spec's regexes compile.
  if (!tf::jobs::MetricMatcher::Create(spec.metrics).ok()) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);

  auto spec = tf::jobs::ParseJobSpec(input, "fuzz.yaml");
  if (spec.ok()) CheckStoredForm(*spec);

  // The same bytes as the store's JSON (a spec written by another version, or corrupted).
  auto json = nlohmann::json::parse(input, nullptr, /*allow_exceptions=*/false);
  if (!json.is_discarded()) {
    auto from_json = tf::jobs::JobSpecFromJson(json);
    if (from_json.ok()) CheckStoredForm(*from_json);
  }

  // Line by line, as a metrics file and as stdout.
  while (!input.empty()) {
    size_t end = input.find('\n');
    std::string_view line = input.substr(0, end);
    (void)tf::jobs::ParseMetricLine(line);
    (void)FixedMatcher().Match(line);
    if (end == std::string_view::npos) break;
    input.remove_prefix(end + 1);
  }
  return 0;
}
