#include "api/json_body.h"

#include <cstdint>

#include "base/json_parse.h"

namespace tf::api {

Result<Json> ParseJsonObject(const std::string& body) {
  if (body.empty()) return Json::object();
  auto j = ParseJsonStrict(body, "request body");
  if (!j.ok()) return j.status();
  if (!j->is_object()) return InvalidArgument("request body must be a JSON object");
  return j;
}

const Json* FieldReader::Find(const std::string& field) {
  seen_.insert(field);
  auto it = object_.find(field);
  if (it == object_.end() || it->is_null()) return nullptr;
  return &*it;
}

void FieldReader::Fail(const std::string& field, const char* expected) {
  if (status_.ok()) status_ = InvalidArgument(Name(field) + " must be " + expected);
}

std::optional<std::string> FieldReader::String(const std::string& field) {
  const Json* v = Find(field);
  if (v == nullptr) return std::nullopt;
  if (!v->is_string()) {
    Fail(field, "a string");
    return std::nullopt;
  }
  return v->get<std::string>();
}

Result<std::optional<int>> FieldReader::Int32(const std::string& field) {
  std::optional<int64_t> v = Int(field);
  if (!v) return std::optional<int>();
  if (*v < INT32_MIN || *v > INT32_MAX) {
    return InvalidArgument(Name(field) + " is out of range: " + std::to_string(*v));
  }
  return std::optional<int>(static_cast<int>(*v));
}

std::optional<int64_t> FieldReader::Int(const std::string& field) {
  const Json* v = Find(field);
  if (v == nullptr) return std::nullopt;
  if (!v->is_number_integer()) {
    Fail(field, "an integer");
    return std::nullopt;
  }
  if (v->is_number_unsigned() && v->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
    Fail(field, "an integer in range");
    return std::nullopt;
  }
  return v->get<int64_t>();
}

std::optional<bool> FieldReader::Bool(const std::string& field) {
  const Json* v = Find(field);
  if (v == nullptr) return std::nullopt;
  if (!v->is_boolean()) {
    Fail(field, "true or false");
    return std::nullopt;
  }
  return v->get<bool>();
}

const Json* FieldReader::Value(const std::string& field, Json::value_t type) {
  const Json* v = Find(field);
  if (v == nullptr) return nullptr;
  if (v->type() != type) {
    Fail(field, type == Json::value_t::array ? "an array" : "an object");
    return nullptr;
  }
  return v;
}

Status FieldReader::Finish() {
  // An unknown field first: a misspelt name is usually why a required one is missing.
  for (auto it = object_.begin(); it != object_.end(); ++it) {
    if (!seen_.count(it.key())) {
      return InvalidArgument("unknown field " + Name(it.key()));
    }
  }
  return status_;
}

}  // namespace tf::api
