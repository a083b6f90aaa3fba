#include "jobs/spec_text.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <vector>

namespace tf::jobs {
namespace {

constexpr size_t kMaxQuotedBytes = 80;

char Lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

// Edits (insert, delete, substitute, swap two neighbours) from a to b, ignoring case.
size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t cost = Lower(a[i - 1]) == Lower(b[j - 1]) ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && Lower(a[i - 1]) == Lower(b[j - 2]) &&
          Lower(a[i - 2]) == Lower(b[j - 1])) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

// The length of the valid multi-byte UTF-8 character at the start of `text`, or 0 if it does
// not start with one (overlong forms, surrogates and code points past U+10FFFF are invalid).
size_t Utf8Length(std::string_view text) {
  if (text.empty()) return 0;
  unsigned char c = static_cast<unsigned char>(text[0]);
  size_t length;
  uint32_t code;
  if (c >= 0xc2 && c <= 0xdf) {
    length = 2;
    code = c & 0x1f;
  } else if (c >= 0xe0 && c <= 0xef) {
    length = 3;
    code = c & 0x0f;
  } else if (c >= 0xf0 && c <= 0xf4) {
    length = 4;
    code = c & 0x07;
  } else {
    return 0;
  }
  if (text.size() < length) return 0;
  for (size_t k = 1; k < length; ++k) {
    unsigned char next = static_cast<unsigned char>(text[k]);
    if ((next & 0xc0) != 0x80) return 0;
    code = (code << 6) | (next & 0x3f);
  }
  bool overlong = (length == 3 && code < 0x800) || (length == 4 && code < 0x10000);
  if (overlong || (code >= 0xd800 && code <= 0xdfff) || code > 0x10ffff) return 0;
  return length;
}

}  // namespace

std::string Quote(std::string_view text) {
  std::string out = "\"";
  size_t i = 0;
  while (i < text.size() && i < kMaxQuotedBytes) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    size_t length = Utf8Length(text.substr(i));
    if (c >= 0x80 && length > 0) {  // a whole, valid character
      out += text.substr(i, length);
      i += length;
      continue;
    }
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c >= 0x7f) {  // control bytes and stray bytes of broken UTF-8
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
    ++i;
  }
  if (i < text.size()) out += "...";
  return out + "\"";
}

bool IsValidUtf8(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    size_t length = static_cast<unsigned char>(text[i]) < 0x80 ? 1 : Utf8Length(text.substr(i));
    if (length == 0) return false;
    i += length;
  }
  return true;
}

std::optional<std::string_view> ClosestName(std::string_view wrong,
                                            std::span<const std::string_view> names) {
  if (wrong.empty() || wrong.size() > 64) return std::nullopt;
  std::optional<std::string_view> best;
  size_t best_distance = SIZE_MAX;
  for (std::string_view name : names) {
    size_t distance = EditDistance(wrong, name);
    size_t allowed = std::max<size_t>(1, name.size() / 3);
    bool prefix = wrong.size() >= 3 && name.size() > wrong.size() &&
                  EditDistance(wrong, name.substr(0, wrong.size())) == 0;
    if ((distance <= allowed && distance < wrong.size()) || prefix) {
      if (prefix) distance = std::min(distance, allowed);
      if (distance < best_distance) {
        best = name;
        best_distance = distance;
      }
    }
  }
  return best;
}

}  // namespace tf::jobs
