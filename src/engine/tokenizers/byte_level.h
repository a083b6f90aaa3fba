// Bytes as tokens. Byte-level BPE's alphabet: each of the 256 byte values stands for one printable
// code point (printable Latin-1 bytes for themselves, the others for U+0100 onwards), so that any
// byte string is a string of vocabulary characters.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tf::engine {

// The code point that stands for byte b.
char32_t ByteToChar(uint8_t b);
// The byte that code point c stands for, or nullopt if c stands for none.
std::optional<uint8_t> CharToByte(char32_t c);

// The byte of a byte-fallback token "<0x41>" (uppercase hex), or -1 for any other token.
int ParseByteToken(std::string_view token);

// bytes -> the UTF-8 of their stand-in code points ("Hello world" -> "HelloĠworld").
std::string BytesToChars(std::string_view bytes);

}  // namespace tf::engine
