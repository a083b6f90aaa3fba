// Content for object tests: bytes that look random and are the same for the same seed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace tf::testing {

// `n` bytes of a xorshift32 stream started from `seed`.
inline std::string Content(size_t n, uint32_t seed) {
  std::string s(n, '\0');
  uint32_t x = 2463534242u + seed;
  for (auto& c : s) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    c = static_cast<char>(x);
  }
  return s;
}

}  // namespace tf::testing
