#include "engine/tokenizers/byte_level.h"

#include <array>

#include "engine/tokenizers/unicode.h"

namespace tf::engine {
namespace {

bool StandsForItself(int b) {
  return (b >= '!' && b <= '~') || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
}

struct Tables {
  std::array<char32_t, 256> to_char;
  std::array<int16_t, 512> to_byte;  // code points below 512 -> byte, or -1
  Tables() {
    to_byte.fill(-1);
    int next = 0;
    for (int b = 0; b < 256; ++b) {
      to_char[b] =
          StandsForItself(b) ? static_cast<char32_t>(b) : static_cast<char32_t>(256 + next++);
      to_byte[to_char[b]] = static_cast<int16_t>(b);
    }
  }
};

const Tables& GetTables() {
  static const Tables kTables;
  return kTables;
}

}  // namespace

char32_t ByteToChar(uint8_t b) { return GetTables().to_char[b]; }

std::optional<uint8_t> CharToByte(char32_t c) {
  if (c >= 512 || GetTables().to_byte[c] < 0) return std::nullopt;
  return static_cast<uint8_t>(GetTables().to_byte[c]);
}

int ParseByteToken(std::string_view t) {
  if (t.size() != 6 || t.substr(0, 3) != "<0x" || t[5] != '>') return -1;
  auto hex = [](char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  int hi = hex(t[3]), lo = hex(t[4]);
  return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

std::string BytesToChars(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char b : bytes) AppendUtf8(ByteToChar(static_cast<uint8_t>(b)), &out);
  return out;
}

}  // namespace tf::engine
