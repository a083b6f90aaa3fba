// Writes JSON text straight into a string, for responses on hot paths (queue send, receive and
// delete) that would otherwise build a Json tree only to print it. The text is what
// nlohmann::json::dump() (compact, error_handler_t::replace) prints for the same values when
// keys are given in the order a Json object keeps them (sorted), so that the two can be mixed.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "api/json_body.h"
#include "base/clock.h"

namespace tf::api {

class JsonOut {
 public:
  explicit JsonOut(std::string& out) : out_(out) {}

  JsonOut& BeginObject() { return Open('{'); }
  JsonOut& EndObject() { return Close('}'); }
  JsonOut& BeginArray() { return Open('['); }
  JsonOut& EndArray() { return Close(']'); }
  // The next value belongs to `key`.
  JsonOut& Key(std::string_view key);

  JsonOut& String(std::string_view s);
  JsonOut& Int(int64_t v);
  JsonOut& Bool(bool v);
  // A time as FormatTime writes it, as a string.
  JsonOut& Time(TimeMs t);
  // Any value, printed by nlohmann::json (for the rare parts: errors).
  JsonOut& Value(const Json& v);

 private:
  JsonOut& Open(char c);
  JsonOut& Close(char c);
  void Separate();

  std::string& out_;
  bool need_comma_ = false;
};

// Appends `s` as a JSON string (quoted and escaped as nlohmann::json prints it; invalid UTF-8
// becomes U+FFFD as with error_handler_t::replace).
void AppendJsonString(std::string& out, std::string_view s);

}  // namespace tf::api
