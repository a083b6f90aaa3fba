#include "engine/formats/gguf_metadata.h"

namespace tf::engine {

void GgufMetadata::Fail(const std::string& key, const std::string& what) {
  if (status_.ok())
    status_ = InvalidArgument(file_.path() + ": metadata key '" + key + "' " + what);
}

const GgufValue* GgufMetadata::Array(const std::string& key, GgufValueType element, bool required) {
  const GgufValue* v = file_.Find(key);
  if (v == nullptr) {
    if (required) Fail(key, "is missing");
    return nullptr;
  }
  if (!v->is_array() || v->element_type() != element) {
    Fail(key, "must be an array[" + std::string(GgufValueTypeName(element)) + "], not " +
                  v->TypeString());
    return nullptr;
  }
  return v;
}

int64_t GgufMetadata::Int(const std::string& key, std::optional<int64_t> fallback,
                          bool allow_zero) {
  const GgufValue* v = file_.Find(key);
  if (v == nullptr) {
    if (!fallback) Fail(key, "is missing");
    return fallback.value_or(0);
  }
  auto i = v->AsInt();
  if (!i || *i < (allow_zero ? 0 : 1) || *i > INT32_MAX) {
    Fail(key, "must be a " + std::string(allow_zero ? "non-negative" : "positive") +
                  " integer below 2^31, not " +
                  (i ? std::to_string(*i) : "a value of type " + v->TypeString()));
    return fallback.value_or(0);
  }
  return *i;
}

double GgufMetadata::Number(const std::string& key, std::optional<double> fallback) {
  const GgufValue* v = file_.Find(key);
  if (v == nullptr) {
    if (!fallback) Fail(key, "is missing");
    return fallback.value_or(1.0);
  }
  auto d = v->AsNumber();
  if (!d || !(*d > 0) || *d > 1e300) {
    Fail(key, "must be a positive number, not " +
                  (d ? std::to_string(*d) : "a value of type " + v->TypeString()));
    return fallback.value_or(1.0);
  }
  return *d;
}

bool GgufMetadata::Bool(const std::string& key, bool fallback) {
  const GgufValue* v = file_.Find(key);
  if (v == nullptr) return fallback;
  auto b = v->AsBool();
  if (!b) {
    Fail(key, "must be a bool, not a value of type " + v->TypeString());
    return fallback;
  }
  return *b;
}

std::string GgufMetadata::String(const std::string& key, std::optional<std::string> fallback) {
  const GgufValue* v = file_.Find(key);
  if (v == nullptr) {
    if (!fallback) Fail(key, "is missing");
    return fallback.value_or("");
  }
  auto s = v->AsString();
  if (!s) {
    Fail(key, "must be a string, not a value of type " + v->TypeString());
    return fallback.value_or("");
  }
  return std::string(*s);
}

}  // namespace tf::engine
