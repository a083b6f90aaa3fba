#include "engine/unicode.h"

#include <algorithm>

#include "engine/unicode_tables.h"

namespace tf::engine::unicode {
namespace {

bool InRanges(const CodepointRange* ranges, size_t count, char32_t c) {
  const CodepointRange* end = ranges + count;
  // The first range whose last code point is >= c.
  const CodepointRange* it = std::lower_bound(
      ranges, end, c, [](const CodepointRange& r, char32_t v) { return r.last < v; });
  return it != end && it->first <= c;
}

}  // namespace

bool IsLetter(char32_t c) {
  if (c < 0x80) return (c | 0x20) >= 'a' && (c | 0x20) <= 'z';
  return InRanges(kLetterRanges, kLetterRangesCount, c);
}

bool IsNumber(char32_t c) {
  if (c < 0x80) return c >= '0' && c <= '9';
  return InRanges(kNumberRanges, kNumberRangesCount, c);
}

bool IsWhiteSpace(char32_t c) {
  if (c < 0x80) return c == ' ' || (c >= '\t' && c <= '\r');
  return InRanges(kWhiteSpaceRanges, kWhiteSpaceRangesCount, c);
}

void AppendUtf8(char32_t c, std::string* out) {
  if (c < 0x80) {
    out->push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out->push_back(static_cast<char>(0xc0 | (c >> 6)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3f)));
  } else if (c < 0x10000) {
    out->push_back(static_cast<char>(0xe0 | (c >> 12)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3f)));
  } else {
    out->push_back(static_cast<char>(0xf0 | (c >> 18)));
    out->push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3f)));
  }
}

size_t ValidUtf8Length(std::string_view s) {
  if (s.empty()) return 0;
  auto b = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  unsigned char lead = b(0);
  if (lead < 0x80) return 1;
  size_t len;
  char32_t min;
  if (lead >= 0xc2 && lead <= 0xdf) {
    len = 2, min = 0x80;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    len = 3, min = 0x800;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    len = 4, min = 0x10000;
  } else {
    return 0;
  }
  if (s.size() < len) return 0;
  char32_t c = lead & (0x7f >> len);
  for (size_t i = 1; i < len; ++i) {
    if ((b(i) & 0xc0) != 0x80) return 0;
    c = (c << 6) | (b(i) & 0x3f);
  }
  if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff)) return 0;
  return len;
}

bool DecodeUtf8(std::string_view s, std::vector<char32_t>* code_points,
                std::vector<size_t>* offsets) {
  code_points->clear();
  offsets->clear();
  size_t i = 0;
  while (i < s.size()) {
    size_t len = ValidUtf8Length(s.substr(i));
    if (len == 0) return false;
    char32_t c = static_cast<unsigned char>(s[i]) & (len == 1 ? 0x7f : (0x7f >> len));
    for (size_t k = 1; k < len; ++k) c = (c << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3f);
    code_points->push_back(c);
    offsets->push_back(i);
    i += len;
  }
  offsets->push_back(s.size());
  return true;
}

}  // namespace tf::engine::unicode
