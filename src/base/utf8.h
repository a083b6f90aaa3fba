// UTF-8 as Unicode defines it well-formed (Unicode 15, table 3-7): no overlong forms, no
// surrogates, nothing past U+10FFFF, no sequence cut short. The one copy of these rules, for
// every reader of outside text (object keys, job specs, JSON answers, S3's XML, tokenizers,
// checkpoint file names).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace tf {

// The length of the well-formed sequence at the start of `s` (1 to 4), or 0 if it does not
// start with one (an empty `s` included).
size_t Utf8SequenceLength(std::string_view s);

// The code point of the well-formed sequence at the start of `s`, its length in *length; or 0
// with *length 0 if there is none.
char32_t DecodeUtf8At(std::string_view s, size_t* length);

// Whether all of `s` is well-formed UTF-8.
bool IsValidUtf8(std::string_view s);

// Appends the UTF-8 encoding of `c`, a code point up to U+10FFFF.
void AppendUtf8(char32_t c, std::string* out);

}  // namespace tf
