#include "jobs/spec_text.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "base/utf8.h"

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

}  // namespace

std::string Quote(std::string_view text) {
  std::string out = "\"";
  size_t i = 0;
  while (i < text.size() && i < kMaxQuotedBytes) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    size_t length = Utf8SequenceLength(text.substr(i));
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
