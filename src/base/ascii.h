// ASCII case for protocol text (header names, S3 names, dtypes): bytes A-Z become a-z, every
// other byte is kept, whatever the locale.
#pragma once

#include <string>
#include <string_view>

namespace tf {

inline std::string AsciiLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

}  // namespace tf
