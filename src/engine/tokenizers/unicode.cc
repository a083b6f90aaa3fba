#include "engine/tokenizers/unicode.h"

#include <algorithm>

#include "engine/tokenizers/unicode_tables.h"

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

bool DecodeUtf8(std::string_view s, std::vector<char32_t>* code_points,
                std::vector<size_t>* offsets) {
  code_points->clear();
  offsets->clear();
  size_t i = 0;
  while (i < s.size()) {
    size_t len = 0;
    const char32_t c = DecodeUtf8At(s.substr(i), &len);
    if (len == 0) return false;
    code_points->push_back(c);
    offsets->push_back(i);
    i += len;
  }
  offsets->push_back(s.size());
  return true;
}

}  // namespace tf::engine::unicode
