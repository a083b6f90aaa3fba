#include "api/json_out.h"

#include <array>
#include <charconv>

#include "base/time_format.h"
#include "base/utf8.h"

namespace tf::api {
namespace {

constexpr uint8_t kEscape = 1;
constexpr uint8_t kNonAscii = 2;

// Bytes that a JSON string cannot hold as they are (controls, '"', '\\'), and bytes past ASCII,
// which are copied as they are only once the string is known to be well-formed UTF-8.
constexpr std::array<uint8_t, 256> kByteClass = [] {
  std::array<uint8_t, 256> t{};
  for (int c = 0; c < 0x20; ++c) t[c] = kEscape;
  t['"'] = t['\\'] = kEscape;
  for (int c = 0x80; c < 0x100; ++c) t[c] = kNonAscii;
  return t;
}();

}  // namespace

void AppendJsonString(std::string& out, std::string_view s) {
  uint8_t seen = 0;
  for (char c : s) seen |= kByteClass[static_cast<unsigned char>(c)];
  if ((seen & kNonAscii) != 0 && !IsValidUtf8(s)) {
    out += Json(std::string(s)).dump(-1, ' ', false, Json::error_handler_t::replace);
    return;
  }
  out.reserve(out.size() + s.size() + 2);
  out.push_back('"');
  if ((seen & kEscape) == 0) {
    out.append(s);
    out.push_back('"');
    return;
  }
  static constexpr char kHex[] = "0123456789abcdef";
  size_t plain = 0;  // start of the run of bytes copied as they are
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if ((kByteClass[c] & kEscape) == 0) continue;
    out.append(s.data() + plain, i - plain);
    plain = i + 1;
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        out += "\\u00";
        out.push_back(kHex[c >> 4]);
        out.push_back(kHex[c & 15]);
    }
  }
  out.append(s.data() + plain, s.size() - plain);
  out.push_back('"');
}

void JsonOut::Separate() {
  if (need_comma_) out_.push_back(',');
  need_comma_ = true;
}

JsonOut& JsonOut::Open(char c) {
  Separate();
  out_.push_back(c);
  need_comma_ = false;
  return *this;
}

JsonOut& JsonOut::Close(char c) {
  out_.push_back(c);
  need_comma_ = true;
  return *this;
}

JsonOut& JsonOut::Key(std::string_view key) {
  Separate();
  AppendJsonString(out_, key);
  out_.push_back(':');
  need_comma_ = false;
  return *this;
}

JsonOut& JsonOut::String(std::string_view s) {
  Separate();
  AppendJsonString(out_, s);
  return *this;
}

JsonOut& JsonOut::Int(int64_t v) {
  Separate();
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  out_.append(buf, end);
  return *this;
}

JsonOut& JsonOut::Bool(bool v) {
  Separate();
  out_ += v ? "true" : "false";
  return *this;
}

JsonOut& JsonOut::Time(TimeMs t) {
  Separate();
  out_.push_back('"');
  AppendTime(out_, t);
  out_.push_back('"');
  return *this;
}

JsonOut& JsonOut::Value(const Json& v) {
  Separate();
  out_ += v.dump(-1, ' ', false, Json::error_handler_t::replace);
  return *this;
}

}  // namespace tf::api
