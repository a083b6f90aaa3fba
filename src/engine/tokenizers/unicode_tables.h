// Code point ranges from the Unicode character database, generated into unicode_tables.cc by
// tools/gen_unicode_tables.py. Each table is sorted, with ranges disjoint and not adjacent.
#pragma once

#include <cstddef>

namespace tf::engine::unicode {

struct CodepointRange {
  char32_t first;
  char32_t last;  // inclusive
};

extern const CodepointRange kLetterRanges[];  // general category L*: \p{L}
extern const size_t kLetterRangesCount;
extern const CodepointRange kNumberRanges[];  // general category N*: \p{N}
extern const size_t kNumberRangesCount;
extern const CodepointRange kWhiteSpaceRanges[];  // property White_Space: \s
extern const size_t kWhiteSpaceRangesCount;

}  // namespace tf::engine::unicode
