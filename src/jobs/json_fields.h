// Reads a spec's fields from the JSON the store keeps, as strictly as the YAML readers: the
// first problem (a value of the wrong type, an integer out of its type's range, a field nobody
// asked for) is kept with its path. Used by jobs' and endpoints' *FromJson.
#pragma once

#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "base/status.h"

namespace tf::jobs {

// Reads the fields of one JSON object. The first problem is kept in `*status`; later calls
// do nothing once it is set. Absent and null fields leave the value as it was (the default).
class JsonFields {
 public:
  using Json = nlohmann::json;

  JsonFields(const Json* object, std::string path, Status* status)
      : object_(object), path_(std::move(path)), status_(status) {
    if (object_ != nullptr && !object_->is_object()) {
      Fail(path_, "must be an object");
      object_ = nullptr;
    }
  }

  // The nested object `key`, read by its own JsonFields (absent: an empty one).
  JsonFields Object(std::string_view key) { return JsonFields(Take(key), Path(key), status_); }

  void Read(std::string_view key, std::string& out) {
    if (const Json* v = Take(key)) {
      if (!v->is_string()) return Fail(Path(key), "must be a string");
      out = v->get<std::string>();
    }
  }
  void Read(std::string_view key, bool& out) {
    if (const Json* v = Take(key)) {
      if (!v->is_boolean()) return Fail(Path(key), "must be true or false");
      out = v->get<bool>();
    }
  }
  template <typename Int>
  requires std::is_integral_v<Int>
  void Read(std::string_view key, Int& out) {
    const Json* v = Take(key);
    if (v == nullptr) return;
    bool fits = v->is_number_unsigned()
                    ? v->get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<Int>::max())
                    : v->is_number_integer() &&
                          v->get<int64_t>() >= std::numeric_limits<Int>::min() &&
                          v->get<int64_t>() <= std::numeric_limits<Int>::max();
    if (!fits) return Fail(Path(key), "must be an integer in range");
    out = v->get<Int>();
  }
  void Read(std::string_view key, std::vector<std::string>& out) {
    const Json* v = Take(key);
    if (v == nullptr) return;
    if (!v->is_array()) return Fail(Path(key), "must be an array of strings");
    out.clear();
    for (const Json& item : *v) {
      if (!item.is_string()) return Fail(Path(key), "must be an array of strings");
      out.push_back(item.get<std::string>());
    }
  }
  void Read(std::string_view key, std::map<std::string, std::string>& out) {
    const Json* v = Take(key);
    if (v == nullptr) return;
    if (!v->is_object()) return Fail(Path(key), "must be an object of strings");
    out.clear();
    for (auto it = v->begin(); it != v->end(); ++it) {
      if (!it->is_string()) return Fail(Path(key) + "." + it.key(), "must be a string");
      out[it.key()] = it->get<std::string>();
    }
  }
  // The raw value, checked only to be present.
  const Json* Raw(std::string_view key) { return Take(key); }

  // Refuses any field that no Read or Object asked for.
  void Finish() {
    if (object_ == nullptr || !status_->ok()) return;
    for (auto it = object_->begin(); it != object_->end(); ++it) {
      if (!taken_.count(it.key())) return Fail(path_, "unknown field \"" + it.key() + "\"");
    }
  }

  void Fail(const std::string& path, const std::string& what) {
    if (status_->ok()) *status_ = InvalidArgument(path.empty() ? what : path + ": " + what);
  }

 private:
  const Json* Take(std::string_view key) {
    taken_.emplace(key);
    if (object_ == nullptr || !status_->ok()) return nullptr;
    auto it = object_->find(key);
    return it == object_->end() || it->is_null() ? nullptr : &*it;
  }
  std::string Path(std::string_view key) const {
    return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
  }

  const Json* object_;
  std::string path_;
  Status* status_;
  std::set<std::string, std::less<>> taken_;
};

}  // namespace tf::jobs
