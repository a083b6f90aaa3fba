// Strict reading of JSON request bodies: malformed JSON, a field of the wrong type, a missing
// required field or a field this endpoint does not know are each refused with a message that
// names the field.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/status.h"

namespace tf::api {

using Json = nlohmann::json;

// Parses `body` as one JSON object. An empty body is an empty object.
Result<Json> ParseJsonObject(const std::string& body);

// Reads the fields of one JSON object, remembering which were read, so that Finish() can
// refuse any it did not expect. `where` prefixes messages ("messages[2]").
class FieldReader {
 public:
  FieldReader(const Json& object, std::string where = "")
      : object_(object), where_(std::move(where)) {}

  std::optional<std::string> String(const std::string& field);
  std::optional<int64_t> Int(const std::string& field);
  // Absent, or a whole number that fits an int (kInvalidArgument "'<field>' is out of range:
  // <n>" otherwise); the caller checks its own range.
  Result<std::optional<int>> Int32(const std::string& field);
  std::optional<bool> Bool(const std::string& field);
  // The raw value (object or array), checked to be of `type` ("object" or "array").
  const Json* Value(const std::string& field, Json::value_t type);

  template <typename T>
  T Required(std::optional<T> value, const std::string& field) {
    if (!value && status_.ok()) status_ = InvalidArgument(Name(field) + " is required");
    return value.value_or(T{});
  }

  // The first problem seen, or an unknown field; OK if none.
  Status Finish();

  std::string Name(const std::string& field) const {
    return where_.empty() ? "'" + field + "'" : "'" + where_ + "." + field + "'";
  }

 private:
  const Json* Find(const std::string& field);
  void Fail(const std::string& field, const char* expected);

  const Json& object_;
  std::string where_;
  std::set<std::string> seen_;
  Status status_;
};

}  // namespace tf::api
