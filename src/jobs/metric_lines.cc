#include "jobs/metric_lines.h"

#include <charconv>
#include <cmath>
#include <exception>

#include "jobs/metric_regex.h"

namespace tf::jobs {
namespace {

using Json = nlohmann::json;

constexpr size_t kMaxMetricNameBytes = 128;

// The whole of `text` as a finite double ("1.23", "-4e-3", "+5"), or false.
bool ReadNumber(std::string_view text, double* out) {
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  if (text.empty()) return false;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, *out);
  return ec == std::errc() && ptr == end && std::isfinite(*out);
}

// Appends the sample of one definition if `re` matches `line`.
void MatchOne(const std::string& name, const std::regex& re, std::string_view line,
              std::vector<MetricSample>* samples) {
  std::cmatch match;
  bool found = false;
  try {
    found = std::regex_search(line.data(), line.data() + line.size(), match, re);
  } catch (const std::exception&) {  // regex_error(error_complexity) or error_stack
    return;
  }
  if (!found || match.size() < 2 || !match[1].matched) return;
  double value = 0;
  if (!ReadNumber(std::string_view(match[1].first, match[1].length()), &value)) return;
  samples->push_back({name, value, -1});
}

std::string_view Head(std::string_view line) { return line.substr(0, kMaxMatchedLineBytes); }

}  // namespace

bool IsValidMetricName(std::string_view name) {
  if (name.empty() || name.size() > kMaxMetricNameBytes) return false;
  auto letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  if (!letter(name[0])) return false;
  for (char c : name) {
    bool ok = letter(c) || (c >= '0' && c <= '9') || c == '.' || c == ':' || c == '/' || c == '-';
    if (!ok) return false;
  }
  return true;
}

Result<MetricSample> ParseMetricLine(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.find_first_not_of(" \t") == std::string_view::npos) {
    return InvalidArgument("empty line");
  }
  if (line.size() > kMaxMetricLineBytes) {
    return InvalidArgument("line is longer than " + std::to_string(kMaxMetricLineBytes) + " bytes");
  }
  Json j = Json::parse(line.begin(), line.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return InvalidArgument("not valid JSON");
  if (!j.is_object()) return InvalidArgument("not a JSON object");
  MetricSample sample;
  bool has_name = false;
  bool has_value = false;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& key = it.key();
    const Json& v = it.value();
    if (key == "name") {
      if (!v.is_string() || !IsValidMetricName(v.get_ref<const std::string&>())) {
        return InvalidArgument(
            "\"name\" must be a string of letters, digits and _ . : / - (up to 128, starting "
            "with a letter or _)");
      }
      sample.name = v.get<std::string>();
      has_name = true;
    } else if (key == "value") {
      if (!v.is_number()) return InvalidArgument("\"value\" must be a number");
      sample.value = v.get<double>();
      has_value = true;
    } else if (key == "step") {
      if (v.is_null()) {
        sample.step = -1;
      } else if (v.is_number_unsigned() && v.get<uint64_t>() <= uint64_t{INT64_MAX}) {
        sample.step = v.get<int64_t>();
      } else if (v.is_number_integer() && v.get<int64_t>() >= 0) {
        sample.step = v.get<int64_t>();
      } else if (v.is_number_float() && v.get<double>() >= 0 && v.get<double>() < 9.0e18 &&
                 std::floor(v.get<double>()) == v.get<double>()) {
        sample.step = static_cast<int64_t>(v.get<double>());  // 10.0 from a float counter
      } else {
        return InvalidArgument("\"step\" must be a whole number >= 0");
      }
    } else {
      return InvalidArgument("unknown field \"" + key +
                             "\" (a metric line has \"name\", \"value\" and \"step\")");
    }
  }
  if (!has_name) return InvalidArgument("\"name\" is missing");
  if (!has_value) return InvalidArgument("\"value\" is missing");
  return sample;
}

Result<MetricMatcher> MetricMatcher::Create(const std::vector<MetricDefinition>& definitions) {
  MetricMatcher matcher;
  for (size_t i = 0; i < definitions.size(); ++i) {
    auto re = CompileMetricRegex(definitions[i].regex);
    if (!re.ok()) {
      return re.status().WithContext("metrics[" + std::to_string(i) + "].regex");
    }
    matcher.definitions_.emplace_back(definitions[i].name, std::move(*re));
  }
  return matcher;
}

std::vector<MetricSample> MetricMatcher::Match(std::string_view line) const {
  std::vector<MetricSample> samples;
  for (const auto& [name, re] : definitions_) MatchOne(name, re, Head(line), &samples);
  return samples;
}

std::vector<MetricSample> MatchMetricDefinitions(const std::vector<MetricDefinition>& defs,
                                                 std::string_view line) {
  std::vector<MetricSample> samples;
  for (const MetricDefinition& def : defs) {
    auto re = CompileMetricRegex(def.regex);
    if (re.ok()) MatchOne(def.name, *re, Head(line), &samples);
  }
  return samples;
}

}  // namespace tf::jobs
