#include "api/object_http.h"

#include <charconv>
#include <ctime>

#include "base/ascii.h"
#include "base/time_format.h"
#include "objects/names.h"

namespace tf::api {
namespace {

bool ParseNumber(std::string_view s, uint64_t* out) {
  if (s.empty()) return false;
  auto [end, err] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return err == std::errc() && end == s.data() + s.size();
}

}  // namespace

Result<objects::PutOptions> PutOptionsFromHeaders(const http::Headers& headers) {
  objects::PutOptions out;
  for (const auto& [name, value] : headers) {
    std::string lower = AsciiLower(name);
    if (lower == "content-type") {
      out.content_type = value;
    } else if (lower.rfind(kMetaPrefix, 0) == 0) {
      out.metadata[lower.substr(kMetaPrefix.size())] = value;
    } else if (std::string_view stored = objects::StoredHeaderNamed(lower); !stored.empty()) {
      out.headers[std::string(stored)] = value;
    } else if (lower == kChecksumHeader) {
      out.expected_sha256 = AsciiLower(value);
      bool hex = out.expected_sha256.size() == 64 &&
                 out.expected_sha256.find_first_not_of("0123456789abcdef") == std::string::npos;
      if (!hex) return InvalidArgument(std::string(kChecksumHeader) + " must be 64 hex digits");
    }
  }
  return out;
}

std::string HttpDate(TimeMs t) {
  std::time_t seconds = static_cast<std::time_t>(t / 1000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  static constexpr const char* kDays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  static constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                            "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  char out[40];
  std::snprintf(out, sizeof out, "%s, %02d %s %04d %02d:%02d:%02d GMT", kDays[tm.tm_wday],
                tm.tm_mday, kMonths[tm.tm_mon], tm.tm_year + 1900, tm.tm_hour, tm.tm_min,
                tm.tm_sec);
  return out;
}

std::optional<TimeMs> ParseHttpDate(std::string_view text) {
  const std::string s(text);
  for (const char* format :
       {"%a, %d %b %Y %H:%M:%S GMT", "%A, %d-%b-%y %H:%M:%S GMT", "%a %b %e %H:%M:%S %Y"}) {
    std::tm tm{};
    const char* end = strptime(s.c_str(), format, &tm);
    if (end == nullptr || *end != '\0') continue;
    return static_cast<TimeMs>(timegm(&tm)) * 1000;
  }
  return std::nullopt;
}

void SetObjectHeaders(const objects::ObjectInfo& info, http::Response& response) {
  response.content_type = info.content_type;
  response.headers.emplace_back("ETag", "\"" + info.etag + "\"");
  response.headers.emplace_back("Last-Modified", HttpDate(info.modified_at));
  response.headers.emplace_back(std::string(kChecksumHeader), info.sha256);
  response.headers.emplace_back("Accept-Ranges", "bytes");
  for (const auto& [name, value] : info.headers) response.headers.emplace_back(name, value);
  for (const auto& [name, value] : info.metadata) {
    response.headers.emplace_back(std::string(kMetaPrefix) + name, value);
  }
}

nlohmann::json ObjectToJson(const objects::ObjectInfo& info) {
  return {{"bucket", info.bucket},
          {"key", info.key},
          {"size", info.size},
          {"etag", info.etag},
          {"sha256", info.sha256},
          {"content_type", info.content_type},
          {"metadata", info.metadata},
          {"headers", info.headers},
          {"modified_at", FormatTime(info.modified_at)}};
}

ByteRange ParseRange(std::string_view header, uint64_t size) {
  constexpr std::string_view kUnit = "bytes=";
  if (header.substr(0, kUnit.size()) != kUnit) return {};
  std::string_view spec = header.substr(kUnit.size());
  size_t dash = spec.find('-');
  if (dash == std::string_view::npos || spec.find(',') != std::string_view::npos) return {};
  std::string_view from = spec.substr(0, dash), to = spec.substr(dash + 1);
  uint64_t first = 0, last = 0;
  if (from.empty()) {  // the last `to` bytes
    if (!ParseNumber(to, &last)) return {};
    if (last == 0 || size == 0) return {ByteRange::kUnsatisfiable};
    return {ByteRange::kPart, size - std::min(last, size), size - 1};
  }
  if (!ParseNumber(from, &first)) return {};
  if (to.empty()) {
    last = size == 0 ? 0 : size - 1;
  } else if (!ParseNumber(to, &last) || last < first) {
    return {};
  }
  if (first >= size) return {ByteRange::kUnsatisfiable};
  return {ByteRange::kPart, first, std::min(last, size - 1)};
}

}  // namespace tf::api
