#include "jobs/spec_reader.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "jobs/quantities.h"
#include "jobs/spec_text.h"

namespace tf::jobs {
namespace {

bool IsOneOf(std::string_view text, std::initializer_list<std::string_view> options) {
  return std::find(options.begin(), options.end(), text) != options.end();
}

bool AllDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// [-+]?[0-9]+, YAML 1.2's decimal integer.
bool IsIntText(std::string_view s) {
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) s.remove_prefix(1);
  return AllDigits(s);
}

// [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?, YAML 1.2's float (finite ones).
bool IsFloatText(std::string_view s) {
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) s.remove_prefix(1);
  size_t e = s.find_first_of("eE");
  std::string_view mantissa = s.substr(0, e);
  if (e != std::string_view::npos) {
    std::string_view exponent = s.substr(e + 1);
    if (!exponent.empty() && (exponent[0] == '-' || exponent[0] == '+')) exponent.remove_prefix(1);
    if (!AllDigits(exponent)) return false;
  }
  size_t point = mantissa.find('.');
  if (point == std::string_view::npos) return AllDigits(mantissa);
  std::string_view whole = mantissa.substr(0, point);
  std::string_view fraction = mantissa.substr(point + 1);
  if (whole.empty()) return AllDigits(fraction);
  return AllDigits(whole) && (fraction.empty() || AllDigits(fraction));
}

std::string_view WithoutPlus(std::string_view s) {
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);
  return s;
}

}  // namespace

std::string Describe(const YAML::Node& node) {
  if (IsNullValue(node)) return "nothing";
  if (node.IsSequence()) return "a list";
  if (node.IsMap()) return "a mapping";
  return Quote(node.Scalar());
}

int NodeLine(const YAML::Node& node, int fallback) {
  YAML::Mark mark = node.Mark();
  return mark.is_null() || mark.line < 0 ? fallback : mark.line + 1;
}

bool IsNullValue(const YAML::Node& node) { return !node.IsDefined() || node.IsNull(); }

SpecReader::SpecReader(std::string_view source)
    : source_(source.empty() ? "spec" : std::string(source)) {}

Status SpecReader::Error(int line, std::string_view path, std::string_view what) const {
  std::string message = source_ + ":" + std::to_string(line) + ": ";
  if (!path.empty()) message += std::string(path) + ": ";
  return InvalidArgument(message + std::string(what));
}

int SpecReader::LineOf(std::string_view path) const {
  while (!path.empty()) {
    if (auto it = lines_.find(path); it != lines_.end()) return it->second;
    size_t cut = path.find_last_of(".[");
    if (cut == std::string_view::npos) break;
    path = path.substr(0, cut);
  }
  return 1;
}

SpecField SpecReader::Child(const SpecField& parent, const YAML::Node& node, std::string key,
                            std::string path, int line) {
  lines_.emplace(path, line);
  return SpecField{node, std::move(key), std::move(path), line};
}

Result<std::vector<SpecField>> SpecReader::Entries(const SpecField& mapping,
                                                   std::span<const std::string_view> known) {
  if (!mapping.node.IsMap()) {
    return Error(mapping, "must be a mapping of fields, got " + Describe(mapping.node));
  }
  std::map<std::string, int, std::less<>> first_lines;
  std::vector<SpecField> entries;
  for (auto it = mapping.node.begin(); it != mapping.node.end(); ++it) {
    int line = NodeLine(it->first, mapping.line);
    if (!it->first.IsScalar()) {
      return Error(line, mapping.path,
                   "field names must be plain text, got " + Describe(it->first));
    }
    std::string key = it->first.Scalar();
    if (!IsValidUtf8(key)) return Error(line, mapping.path, "field names must be valid UTF-8");
    std::string path = mapping.path.empty() ? key : mapping.path + "." + key;
    if (auto [first, added] = first_lines.emplace(key, line); !added) {
      return Error(line, path,
                   "is given twice (first on line " + std::to_string(first->second) + ")");
    }
    if (!known.empty() && std::find(known.begin(), known.end(), key) == known.end()) {
      std::string what = "unknown field " + Quote(key);
      if (auto close = ClosestName(key, known)) what += " (did you mean " + Quote(*close) + "?)";
      return Error(line, mapping.path, what);
    }
    entries.push_back(Child(mapping, it->second, std::move(key), std::move(path), line));
  }
  return entries;
}

Result<std::vector<SpecField>> SpecReader::Items(const SpecField& list, std::string_view what) {
  if (!list.node.IsSequence()) {
    return Error(list, "must be " + std::string(what) + ", got " + Describe(list.node));
  }
  std::vector<SpecField> items;
  for (auto it = list.node.begin(); it != list.node.end(); ++it) {
    std::string path = list.path + "[" + std::to_string(items.size()) + "]";
    items.push_back(Child(list, *it, "", std::move(path), NodeLine(*it, list.line)));
  }
  return items;
}

Result<std::string> SpecReader::String(const SpecField& field) {
  if (IsNullValue(field.node))
    return Error(field, "needs a value (write \"\" for an empty string)");
  if (!field.node.IsScalar()) return Error(field, "must be a string, got " + Describe(field.node));
  if (!IsValidUtf8(field.node.Scalar())) return Error(field, "must be valid UTF-8");
  return field.node.Scalar();
}

Result<int64_t> SpecReader::Int(const SpecField& field, IntRange range) {
  if (!field.node.IsScalar()) return Error(field, IntRangeMessage(range, Describe(field.node)));
  const std::string& text = field.node.Scalar();
  int64_t value = 0;
  std::string_view digits = WithoutPlus(text);
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (!IsIntText(text) || ec != std::errc() || end != digits.data() + digits.size()) {
    return Error(field, IntRangeMessage(range, Quote(text)));
  }
  if (value < range.min || value > range.max) {
    return Error(field, IntRangeMessage(range, std::to_string(value)));
  }
  return value;
}

Result<bool> SpecReader::Bool(const SpecField& field) {
  if (field.node.IsScalar()) {
    const std::string& text = field.node.Scalar();
    if (IsOneOf(text, {"true", "True", "TRUE"})) return true;
    if (IsOneOf(text, {"false", "False", "FALSE"})) return false;
  }
  return Error(field, "must be true or false, got " + Describe(field.node));
}

Result<TimeMs> SpecReader::Duration(const SpecField& field) {
  if (!field.node.IsScalar()) {
    return Error(field, "must be a duration such as 30s, 90m or 2h, got " + Describe(field.node));
  }
  auto ms = ParseDuration(field.node.Scalar());
  if (!ms.ok()) return Error(field, ms.status().message());
  return *ms;
}

Result<int64_t> SpecReader::Memory(const SpecField& field) {
  if (!field.node.IsScalar()) {
    return Error(field, "must be a size such as 512Mi or 16Gi, got " + Describe(field.node));
  }
  auto bytes = ParseMemory(field.node.Scalar());
  if (!bytes.ok()) return Error(field, bytes.status().message());
  return *bytes;
}

Result<nlohmann::json> SpecReader::TypedScalar(const SpecField& field) {
  if (IsNullValue(field.node))
    return Error(field, "needs a value (write \"\" for an empty string)");
  if (!field.node.IsScalar()) {
    return Error(field, "must be a string, a number or true/false, got " + Describe(field.node));
  }
  const std::string& text = field.node.Scalar();
  if (!IsValidUtf8(text)) return Error(field, "must be valid UTF-8");
  const std::string& tag = field.node.Tag();
  if (tag == "!" || tag == "tag:yaml.org,2002:str") return nlohmann::json(text);  // quoted
  auto typed = TypeScalarText(text);
  if (!typed.ok()) return Error(field, typed.status().message());
  return typed;
}

Result<nlohmann::json> TypeScalarText(const std::string& text) {
  if (IsOneOf(text, {"true", "True", "TRUE"})) return nlohmann::json(true);
  if (IsOneOf(text, {"false", "False", "FALSE"})) return nlohmann::json(false);
  std::string_view number = WithoutPlus(text);
  const char* end = number.data() + number.size();
  if (IsIntText(text)) {
    int64_t value = 0;
    auto [ptr, ec] = std::from_chars(number.data(), end, value);
    if (ec != std::errc() || ptr != end) {
      return InvalidArgument("is too large for a 64-bit integer (quote it to pass it as text)");
    }
    return nlohmann::json(value);
  }
  if (IsFloatText(text)) {
    double value = 0;
    auto [ptr, ec] = std::from_chars(number.data(), end, value);
    if (ec != std::errc() || ptr != end || !std::isfinite(value)) {
      return InvalidArgument("is out of range for a number (quote it to pass it as text)");
    }
    return nlohmann::json(value);
  }
  if (IsOneOf(text, {"~", "null", "Null", "NULL"})) {
    return InvalidArgument("needs a value (write \"\" for an empty string)");
  }
  if (IsOneOf(text, {".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF",
                     ".nan", ".NaN", ".NAN"})) {
    return InvalidArgument("is not a finite number (quote it to pass it as text)");
  }
  return nlohmann::json(text);
}

}  // namespace tf::jobs
