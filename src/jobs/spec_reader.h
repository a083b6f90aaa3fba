// Reads the values of a YAML job spec with the line each was written on, so that every error
// can say "<source>:<line>: <field path>: <what is wrong>". Used by spec_yaml.cc only; the
// public contract is job_spec.h.
#pragma once

#include <yaml-cpp/yaml.h>

#include <exception>
#include <functional>
#include <map>
#include <new>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "jobs/spec_rules.h"

namespace tf::jobs {

// One value of the spec and where it is.
struct SpecField {
  YAML::Node node;
  std::string key;   // its key in the enclosing mapping ("gpus"); "" for a list item
  std::string path;  // "resources.gpus", "command[1]"
  int line = 1;      // 1-based; the key's line for a mapping entry
};

class SpecReader {
 public:
  explicit SpecReader(std::string_view source);

  // kInvalidArgument "<source>:<line>: <path>: <what>" ("<source>:<line>: <what>" for "").
  Status Error(int line, std::string_view path, std::string_view what) const;
  Status Error(const SpecField& field, std::string_view what) const {
    return Error(field.line, field.path, what);
  }

  // The line where `path` was written, or of the nearest enclosing field that was ("env.X"
  // -> "env"), or 1.
  int LineOf(std::string_view path) const;

  // The entries of a mapping in the order written, null values included. Refuses a value that
  // is not a mapping, a key that is not a plain scalar, a key given twice, and, when `known`
  // is not empty, a key not in it (suggesting the closest known one).
  Result<std::vector<SpecField>> Entries(const SpecField& mapping,
                                         std::span<const std::string_view> known = {});
  // The items of a list; `what` describes one in the error for a value that is not a list
  // ("a list of arguments").
  Result<std::vector<SpecField>> Items(const SpecField& list, std::string_view what);

  // Scalars of each type; null is refused ("needs a value") as any other wrong type.
  Result<std::string> String(const SpecField& field);
  Result<int64_t> Int(const SpecField& field, IntRange range);
  Result<bool> Bool(const SpecField& field);
  Result<TimeMs> Duration(const SpecField& field);
  Result<int64_t> Memory(const SpecField& field);
  // A plain scalar as YAML's core schema reads it (true/false, a decimal integer or float,
  // else a string); a quoted one is always a string. Null, lists and mappings are refused.
  Result<nlohmann::json> TypedScalar(const SpecField& field);

 private:
  SpecField Child(const SpecField& parent, const YAML::Node& node, std::string key,
                  std::string path, int line);

  std::string source_;
  std::map<std::string, int, std::less<>> lines_;
};

// read(source) for a spec reader, with what yaml-cpp throws (out of memory, a conversion it was
// not asked to guard) turned into an error that names the source ("spec" when it is empty).
template <typename T, typename Read>
Result<T> ReadSpecGuarded(std::string_view source_name, Read read) {
  const std::string source = source_name.empty() ? "spec" : std::string(source_name);
  try {
    return read(source);
  } catch (const std::bad_alloc&) {
    return ResourceExhausted(source + ": out of memory reading the spec");
  } catch (const std::exception& e) {
    return Internal(source + ": reading the spec failed: " + e.what());
  } catch (...) {
    return Internal(source + ": reading the spec failed");
  }
}

// "a list", "a mapping", "nothing" or the quoted scalar: what a message says it got.
std::string Describe(const YAML::Node& node);

// The node's 1-based line, or `fallback` for nodes without a position.
int NodeLine(const YAML::Node& node, int fallback);

// Whether `node` is absent or YAML null (a field written with no value).
bool IsNullValue(const YAML::Node& node);

// A plain (unquoted) scalar's text typed as SpecReader::TypedScalar types it: true/false, a
// 64-bit integer, a finite number, else the text itself. kInvalidArgument, saying why without a
// path, for null and for numbers out of range or not finite.
Result<nlohmann::json> TypeScalarText(const std::string& text);

}  // namespace tf::jobs
