// CRC-32C (src/objects/crc32c.h) against a bit-at-a-time reference, at every length around the
// places where the fast path cuts a buffer into three lanes (3 x 4096, 3 x 512, 3 x 64 bytes),
// from unaligned starts and with a running CRC carried in.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "objects/crc32c.h"

namespace tf::objects {
namespace {

uint32_t Reference(std::string_view data, uint32_t crc) {
  uint32_t reg = ~crc;
  for (unsigned char byte : data) {
    reg ^= byte;
    for (int bit = 0; bit < 8; ++bit) reg = (reg >> 1) ^ ((reg & 1) ? 0x82f63b78u : 0);
  }
  return ~reg;
}

std::string RandomBytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string out(n, '\0');
  for (char& c : out) c = static_cast<char>(rng());
  return out;
}

TEST(Crc32cLanesTest, EveryLengthAroundTheLaneCutsMatchesTheReference) {
  const std::string data = RandomBytes(3 * 4096 * 2 + 200, 1);
  std::vector<size_t> lengths;
  for (size_t n = 0; n <= 400; ++n) lengths.push_back(n);
  for (size_t cut : {3 * 64, 3 * 512, 3 * 4096, 2 * 3 * 4096, 3 * 4096 + 3 * 512 + 3 * 64}) {
    for (size_t n = cut - 9; n <= cut + 9; ++n) lengths.push_back(n);
  }
  for (size_t n = 401; n < 14000; n += 97) lengths.push_back(n);
  for (size_t n : lengths) {
    for (size_t start : {0, 1, 7}) {
      const std::string_view piece(data.data() + start, n);
      for (uint32_t carried : {0u, 0xdeadbeefu}) {
        ASSERT_EQ(Crc32c(piece, carried), Reference(piece, carried))
            << n << " bytes from offset " << start << ", carried " << carried;
      }
    }
  }
}

TEST(Crc32cLanesTest, AFlippedBitAnywhereChangesTheCrc) {
  std::string data = RandomBytes(3 * 4096 + 3 * 512 + 100, 2);
  const uint32_t good = Crc32c(data);
  for (size_t at = 0; at < data.size(); at += 61) {
    data[at] ^= 0x10;
    EXPECT_NE(Crc32c(data), good) << "flipped at " << at;
    data[at] ^= 0x10;
  }
  EXPECT_EQ(Crc32c(data), good);
}

TEST(Crc32cLanesTest, LargeBuffersInPiecesEqualTheWhole) {
  const std::string data = RandomBytes(1 << 20, 3);
  uint32_t pieces = 0;
  for (size_t at = 0; at < data.size(); at += 12289) {
    pieces = Crc32c(std::string_view(data).substr(at, 12289), pieces);
  }
  EXPECT_EQ(pieces, Crc32c(data));
  EXPECT_EQ(Crc32c(data), Reference(data, 0));
}

}  // namespace
}  // namespace tf::objects
