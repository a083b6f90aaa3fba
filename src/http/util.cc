// Header lookup shared by the server, the client and the API.
#include <string>
#include <string_view>

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

}  // namespace

const std::string& FindHeader(const Headers& headers, std::string_view name) {
  static const std::string* const kEmpty = new std::string();
  for (const auto& [key, value] : headers) {
    if (EqualsIgnoreCase(key, name)) return value;
  }
  return *kEmpty;
}

void ReplaceHeader(Headers& headers, std::string_view name, std::string value) {
  std::erase_if(headers, [&](const auto& header) { return EqualsIgnoreCase(header.first, name); });
  headers.emplace_back(std::string(name), std::move(value));
}

}  // namespace tf::http
