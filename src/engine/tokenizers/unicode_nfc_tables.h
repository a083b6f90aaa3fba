// Unicode normalization data, generated into unicode_nfc_tables.cc and
// unicode_nfc_decompositions.cc by tools/gen_unicode_nfc_tables.py. Flat arrays, sorted by
// their first column.
#pragma once

#include <cstddef>

namespace tf::engine::unicode {

// (code point, first, second or 0): canonical decompositions, one level.
extern const char32_t kCanonicalDecompositions[];
extern const size_t kCanonicalDecompositionsSize;
// (first, last, class): ranges of code points with a non-zero canonical combining class.
extern const char32_t kCombiningClasses[];
extern const size_t kCombiningClassesSize;
// (first, last): ranges with Full_Composition_Exclusion.
extern const char32_t kCompositionExclusions[];
extern const size_t kCompositionExclusionsSize;

}  // namespace tf::engine::unicode
