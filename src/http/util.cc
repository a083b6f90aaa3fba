// Header lookup shared by the server, the clients and the API; the clients' request checks.
#include <algorithm>
#include <string>
#include <string_view>

#include "http/client_checks.h"
#include "http/http.h"

namespace tf::http {
namespace {

char AsciiLower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (AsciiLower(a[i]) != AsciiLower(b[i])) return false;
  }
  return true;
}

// RFC 7230 tchar: what a method or a header name may contain.
bool IsToken(std::string_view s) {
  if (s.empty()) return false;
  for (unsigned char c : s) {
    bool ok =
        (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
        std::string_view("!#$%&'*+-.^_`|~").find(static_cast<char>(c)) != std::string_view::npos;
    if (!ok) return false;
  }
  return true;
}

// No control characters (so no CR/LF smuggling); spaces only where `allow_space`.
bool IsPrintable(std::string_view s, bool allow_space) {
  for (unsigned char c : s) {
    if (c < 0x20 || c == 0x7f || (c == ' ' && !allow_space)) return false;
  }
  return true;
}

}  // namespace

Status CheckRequest(const std::string& method, const std::string& target, const Headers& headers) {
  if (!IsToken(method)) return InvalidArgument("bad HTTP method '" + method + "'");
  if (target.empty() || target[0] != '/' || !IsPrintable(target, /*allow_space=*/false)) {
    return InvalidArgument("bad request target '" + target + "': must start with '/'");
  }
  for (const auto& [name, value] : headers) {
    if (!IsToken(name) || !IsPrintable(value, /*allow_space=*/true)) {
      return InvalidArgument("bad header '" + name + "'");
    }
  }
  return OkStatus();
}

const std::string& FindHeader(const Headers& headers, std::string_view name) {
  static const std::string* const kEmpty = new std::string();
  for (const auto& [key, value] : headers) {
    if (EqualsIgnoreCase(key, name)) return value;
  }
  return *kEmpty;
}

std::string_view BearerCredentials(std::string_view authorization) {
  constexpr std::string_view kScheme = "bearer";
  if (authorization.size() <= kScheme.size() ||
      !EqualsIgnoreCase(authorization.substr(0, kScheme.size()), kScheme) ||
      authorization[kScheme.size()] != ' ') {
    return {};
  }
  std::string_view credentials = authorization.substr(kScheme.size());
  credentials.remove_prefix(std::min(credentials.find_first_not_of(' '), credentials.size()));
  return credentials;
}

void ReplaceHeader(Headers& headers, std::string_view name, std::string value) {
  std::erase_if(headers, [&](const auto& header) { return EqualsIgnoreCase(header.first, name); });
  headers.emplace_back(std::string(name), std::move(value));
}

}  // namespace tf::http
