#include "base/utf8.h"

#include <cstdint>
#include <cstring>

namespace tf {
namespace {

// Where the second byte of a sequence may lie, by its lead byte (table 3-7): narrower than
// 80..BF after E0 (no overlong 3-byte forms), ED (no surrogates), F0 (no overlong 4-byte
// forms) and F4 (nothing past U+10FFFF).
struct Lead {
  size_t length = 0;  // 0: not a lead byte of a well-formed sequence
  unsigned char lo = 0x80, hi = 0xBF;
};

Lead LeadOf(unsigned char c) {
  if (c >= 0xC2 && c <= 0xDF) return {2};
  if (c >= 0xE0 && c <= 0xEF) {
    return {3, static_cast<unsigned char>(c == 0xE0 ? 0xA0 : 0x80),
            static_cast<unsigned char>(c == 0xED ? 0x9F : 0xBF)};
  }
  if (c >= 0xF0 && c <= 0xF4) {
    return {4, static_cast<unsigned char>(c == 0xF0 ? 0x90 : 0x80),
            static_cast<unsigned char>(c == 0xF4 ? 0x8F : 0xBF)};
  }
  return {};
}

}  // namespace

size_t Utf8SequenceLength(std::string_view s) {
  if (s.empty()) return 0;
  auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  if (byte(0) < 0x80) return 1;
  const Lead lead = LeadOf(byte(0));
  if (lead.length == 0 || s.size() < lead.length) return 0;
  if (byte(1) < lead.lo || byte(1) > lead.hi) return 0;
  for (size_t k = 2; k < lead.length; ++k) {
    if (byte(k) < 0x80 || byte(k) > 0xBF) return 0;
  }
  return lead.length;
}

char32_t DecodeUtf8At(std::string_view s, size_t* length) {
  *length = Utf8SequenceLength(s);
  if (*length == 0) return 0;
  const auto lead = static_cast<unsigned char>(s[0]);
  if (*length == 1) return lead;
  char32_t c = lead & (0x7F >> *length);
  for (size_t k = 1; k < *length; ++k) c = (c << 6) | (static_cast<unsigned char>(s[k]) & 0x3F);
  return c;
}

bool IsValidUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    // ASCII eight bytes at a time: most text is.
    if (s.size() - i >= 8) {
      uint64_t word;
      std::memcpy(&word, s.data() + i, 8);
      if ((word & 0x8080808080808080ull) == 0) {
        i += 8;
        continue;
      }
    }
    const size_t length = Utf8SequenceLength(s.substr(i));
    if (length == 0) return false;
    i += length;
  }
  return true;
}

void AppendUtf8(char32_t c, std::string* out) {
  if (c < 0x80) {
    out->push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (c >> 6)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (c >> 12)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (c >> 18)));
    out->push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

}  // namespace tf
