// UTF-8 and the Unicode character classes the tokenizers need.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace tf::engine::unicode {

bool IsLetter(char32_t c);      // \p{L}
bool IsNumber(char32_t c);      // \p{N}
bool IsWhiteSpace(char32_t c);  // \s: the White_Space property

// Appends the UTF-8 encoding of c.
void AppendUtf8(char32_t c, std::string* out);

// The length of the valid UTF-8 sequence at the start of s (1 to 4), or 0 if it is invalid
// (overlong, a surrogate, past U+10FFFF, or cut short).
size_t ValidUtf8Length(std::string_view s);

// Decodes valid UTF-8 into code points, and the byte offset where each starts (with
// offsets->back() == s.size() added at the end). False if s is not valid UTF-8.
bool DecodeUtf8(std::string_view s, std::vector<char32_t>* code_points,
                std::vector<size_t>* offsets);

}  // namespace tf::engine::unicode
