#include "objects/crc32c.h"

#include <array>
#include <cstring>
#include <vector>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace tf::objects {
namespace {

constexpr uint32_t kPolynomial = 0x82f63b78;  // Castagnoli, bit-reversed

// Slicing by 8: table[k][b] is the CRC of byte b followed by k zero bytes.
using Tables = std::array<std::array<uint32_t, 256>, 8>;

constexpr Tables MakeTables() {
  Tables t{};
  for (uint32_t b = 0; b < 256; ++b) {
    uint32_t c = b;
    for (int i = 0; i < 8; ++i) c = (c >> 1) ^ ((c & 1) ? kPolynomial : 0);
    t[0][b] = c;
  }
  for (int k = 1; k < 8; ++k) {
    for (uint32_t b = 0; b < 256; ++b) t[k][b] = (t[k - 1][b] >> 8) ^ t[0][t[k - 1][b] & 0xff];
  }
  return t;
}

constexpr Tables kTables = MakeTables();

// `crc` here is the running register (inverted form).
uint32_t Software(uint32_t crc, const unsigned char* p, size_t n) {
  while (n >= 8) {
    uint32_t lo, hi;
    std::memcpy(&lo, p, 4);
    std::memcpy(&hi, p + 4, 4);
    lo ^= crc;  // little-endian hosts only, like the rest of the blob format
    crc = kTables[7][lo & 0xff] ^ kTables[6][(lo >> 8) & 0xff] ^ kTables[5][(lo >> 16) & 0xff] ^
          kTables[4][lo >> 24] ^ kTables[3][hi & 0xff] ^ kTables[2][(hi >> 8) & 0xff] ^
          kTables[1][(hi >> 16) & 0xff] ^ kTables[0][hi >> 24];
    p += 8;
    n -= 8;
  }
  while (n-- > 0) crc = (crc >> 8) ^ kTables[0][(crc ^ *p++) & 0xff];
  return crc;
}

#if defined(__x86_64__)
// One chain of the CPU's crc32 instruction, 8 bytes at a time.
__attribute__((target("sse4.2"))) uint32_t HardwareChain(uint32_t crc, const unsigned char* p,
                                                         size_t n) {
  uint64_t c = crc;
  while (n >= 8) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    c = _mm_crc32_u64(c, v);
    p += 8;
    n -= 8;
  }
  auto c32 = static_cast<uint32_t>(c);
  while (n-- > 0) c32 = _mm_crc32_u8(c32, *p++);
  return c32;
}

// The register after `bytes` zero bytes are appended, as a linear map over GF(2): the XOR of
// one table entry per byte of the register.
struct ZeroAppend {
  std::array<std::array<uint32_t, 256>, 4> table;
  uint32_t operator()(uint32_t reg) const {
    return table[0][reg & 0xff] ^ table[1][(reg >> 8) & 0xff] ^ table[2][(reg >> 16) & 0xff] ^
           table[3][reg >> 24];
  }
};

ZeroAppend MakeZeroAppend(size_t bytes) {
  const std::vector<unsigned char> zeros(bytes, 0);
  std::array<uint32_t, 32> bit{};
  for (int i = 0; i < 32; ++i) bit[i] = Software(uint32_t{1} << i, zeros.data(), bytes);
  ZeroAppend z{};
  for (int k = 0; k < 4; ++k) {
    for (uint32_t b = 0; b < 256; ++b) {
      uint32_t v = 0;
      for (int j = 0; j < 8; ++j) {
        if (b & (1u << j)) v ^= bit[8 * k + j];
      }
      z.table[k][b] = v;
    }
  }
  return z;
}

// Lane lengths: a buffer is cut into runs of three equal lanes, longest first.
constexpr std::array<size_t, 3> kLaneBytes = {4096, 512, 64};

// The crc32 instruction takes 3 cycles but can start every cycle: three independent chains
// over three consecutive lanes keep it busy, and are joined with the register algebra
// crc(r, A B) = append_|B|_zeros(crc(r, A)) ^ crc(0, B).
__attribute__((target("sse4.2"))) uint32_t Hardware(uint32_t crc, const unsigned char* p,
                                                    size_t n) {
  static const std::array<ZeroAppend, 3> appends = {
      MakeZeroAppend(kLaneBytes[0]), MakeZeroAppend(kLaneBytes[1]), MakeZeroAppend(kLaneBytes[2])};
  uint64_t c = crc;
  for (size_t size = 0; size < kLaneBytes.size(); ++size) {
    const size_t lane = kLaneBytes[size];
    while (n >= 3 * lane) {
      uint64_t b = 0, d = 0;
      for (size_t i = 0; i < lane; i += 8) {
        uint64_t v0, v1, v2;
        std::memcpy(&v0, p + i, 8);
        std::memcpy(&v1, p + lane + i, 8);
        std::memcpy(&v2, p + 2 * lane + i, 8);
        c = _mm_crc32_u64(c, v0);
        b = _mm_crc32_u64(b, v1);
        d = _mm_crc32_u64(d, v2);
      }
      const ZeroAppend& append = appends[size];
      c = append(append(static_cast<uint32_t>(c)) ^ static_cast<uint32_t>(b)) ^
          static_cast<uint32_t>(d);
      p += 3 * lane;
      n -= 3 * lane;
    }
  }
  return HardwareChain(static_cast<uint32_t>(c), p, n);
}

const bool kHaveHardware = __builtin_cpu_supports("sse4.2");
#else
const bool kHaveHardware = false;
uint32_t Hardware(uint32_t crc, const unsigned char* p, size_t n) { return Software(crc, p, n); }
#endif

}  // namespace

uint32_t Crc32c(std::string_view data, uint32_t crc) {
  const auto* p = reinterpret_cast<const unsigned char*>(data.data());
  uint32_t reg = ~crc;
  reg = kHaveHardware ? Hardware(reg, p, data.size()) : Software(reg, p, data.size());
  return ~reg;
}

}  // namespace tf::objects
