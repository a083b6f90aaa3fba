// The Unicode character classes the tokenizers need, and UTF-8 decoded into code points (the
// rules of well-formed UTF-8 are base/utf8.h's).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "base/utf8.h"

namespace tf::engine::unicode {

bool IsLetter(char32_t c);      // \p{L}
bool IsNumber(char32_t c);      // \p{N}
bool IsWhiteSpace(char32_t c);  // \s: the White_Space property

// Decodes valid UTF-8 into code points, and the byte offset where each starts (with
// offsets->back() == s.size() added at the end). False if s is not valid UTF-8.
bool DecodeUtf8(std::string_view s, std::vector<char32_t>* code_points,
                std::vector<size_t>* offsets);

}  // namespace tf::engine::unicode
