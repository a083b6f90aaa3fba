// The packed block layout (packed_blocks.h): repacking GGUF Q8_0 and Q4_0 rows, and the plain
// packed matmuls that define what the vectorised ones compute.
#include "engine/kernels/packed_blocks.h"

#include <cmath>
#include <cstring>

#include "engine/dtype.h"

namespace tf::engine::kernels {
namespace {

constexpr int64_t kQ8Chunks = 8, kQ4Chunks = 4;  // 4-byte chunks per row and block

int64_t Blocks(int64_t n_in) { return n_in / kQuantBlock; }

// What one block type needs here: its GGUF block size, its packed chunks, the offset its
// packed weights carry (and how a GGUF chunk becomes a packed one), and weight i (0..31) of a
// packed block as the unsigned value stored.
struct Q8Layout {
  static constexpr int64_t kBlockBytes = kQ8_0BlockBytes, kChunks = kQ8Chunks, kOffset = 128;
  static constexpr uint32_t kFlip = 0x80808080u;  // int8 q to q + 128 as uint8, four at a time
  static int Weight(const uint8_t* chunks, int64_t row, int i) {  // i: weight 0..31
    return chunks[(i / 4) * 64 + row * 4 + i % 4];
  }
};

struct Q4Layout {
  static constexpr int64_t kBlockBytes = kQ4_0BlockBytes, kChunks = kQ4Chunks, kOffset = 8;
  static constexpr uint32_t kFlip = 0;  // the nibbles are stored as they are
  static int Weight(const uint8_t* chunks, int64_t row, int i) {
    const uint8_t byte = chunks[((i % 16) / 4) * 64 + row * 4 + i % 4];
    return i < 16 ? byte & 0x0f : byte >> 4;
  }
};

template <typename L>
int64_t GroupBytes(int64_t n_in) {
  return PackedScaleBytes(n_in) + Blocks(n_in) * L::kChunks * 64;
}

template <typename L>
void Pack(const void* src, int64_t rows, int64_t n_in, int64_t group_begin, int64_t group_end,
          uint8_t* out) {
  const auto* in = static_cast<const uint8_t*>(src);
  const int64_t blocks = Blocks(n_in), group_bytes = GroupBytes<L>(n_in);
  const uint32_t offsets = L::kOffset == 128 ? 0x80808080u : 0x88888888u;  // weight 0
  for (int64_t g = group_begin; g < group_end; ++g) {
    uint8_t* scales = out + g * group_bytes;
    uint8_t* chunks = scales + PackedScaleBytes(n_in);
    std::memset(scales, 0, PackedScaleBytes(n_in));
    for (int64_t j = 0; j < kPackRows; ++j) {
      const int64_t r = g * kPackRows + j;
      for (int64_t b = 0; b < blocks; ++b) {
        uint8_t* dst = chunks + b * L::kChunks * 64 + j * 4;
        if (r >= rows) {  // padding: weight 0, scale 0
          for (int64_t k = 0; k < L::kChunks; ++k) std::memcpy(dst + k * 64, &offsets, 4);
          continue;
        }
        const uint8_t* block = in + (r * blocks + b) * L::kBlockBytes;
        std::memcpy(scales + (b * kPackRows + j) * 2, block, 2);
        for (int64_t k = 0; k < L::kChunks; ++k) {
          uint32_t four;
          std::memcpy(&four, block + 2 + 4 * k, 4);
          four ^= L::kFlip;
          std::memcpy(dst + k * 64, &four, 4);
        }
      }
    }
  }
}

template <typename L>
void Unpack(const void* packed, int64_t n_in, int64_t row_begin, int64_t row_end, uint8_t* out) {
  const auto* in = static_cast<const uint8_t*>(packed);
  const int64_t blocks = Blocks(n_in), group_bytes = GroupBytes<L>(n_in);
  for (int64_t r = row_begin; r < row_end; ++r) {
    const uint8_t* scales = in + r / kPackRows * group_bytes;
    const uint8_t* chunks = scales + PackedScaleBytes(n_in);
    const int64_t j = r % kPackRows;
    for (int64_t b = 0; b < blocks; ++b) {
      uint8_t* block = out + ((r - row_begin) * blocks + b) * L::kBlockBytes;
      std::memcpy(block, scales + (b * kPackRows + j) * 2, 2);
      for (int64_t k = 0; k < L::kChunks; ++k) {
        uint32_t four;
        std::memcpy(&four, chunks + b * L::kChunks * 64 + k * 64 + j * 4, 4);
        four ^= L::kFlip;
        std::memcpy(block + 2 + 4 * k, &four, 4);
      }
    }
  }
}

template <typename L>
void RefPacked(const void* w, const ActivationBlock* x, float* y, int64_t n_tokens, int64_t n_in,
               int64_t n_out, int64_t row_begin, int64_t row_end) {
  const auto* bytes = static_cast<const uint8_t*>(w);
  const int64_t blocks = Blocks(n_in), group_bytes = GroupBytes<L>(n_in);
  for (int64_t t = 0; t < n_tokens; ++t) {
    for (int64_t r = row_begin; r < row_end; ++r) {
      const uint8_t* scales = bytes + r / kPackRows * group_bytes;
      const uint8_t* chunks = scales + PackedScaleBytes(n_in);
      const int64_t j = r % kPackRows;
      float acc = 0;
      for (int64_t b = 0; b < blocks; ++b) {
        const ActivationBlock& a = x[t * blocks + b];
        const uint8_t* s = scales + (b * kPackRows + j) * 2;
        const float d = F16ToF32(static_cast<uint16_t>(s[0] | (s[1] << 8)));
        int32_t dot = 0;
        for (int i = 0; i < 32; ++i) {
          dot += (L::Weight(chunks + b * L::kChunks * 64, j, i) - L::kOffset) * a.q[i];
        }
        acc = std::fma(static_cast<float>(dot), d * a.d, acc);
      }
      y[t * n_out + r] = acc;
    }
  }
}

}  // namespace

int64_t PackedScaleBytes(int64_t n_in) { return (Blocks(n_in) * kPackRows * 2 + 63) / 64 * 64; }
int64_t PackedQ8_0GroupBytes(int64_t n_in) { return GroupBytes<Q8Layout>(n_in); }
int64_t PackedQ4_0GroupBytes(int64_t n_in) { return GroupBytes<Q4Layout>(n_in); }

void PackQ8_0(const void* src, int64_t rows, int64_t n_in, int64_t group_begin, int64_t group_end,
              uint8_t* out) {
  Pack<Q8Layout>(src, rows, n_in, group_begin, group_end, out);
}

void PackQ4_0(const void* src, int64_t rows, int64_t n_in, int64_t group_begin, int64_t group_end,
              uint8_t* out) {
  Pack<Q4Layout>(src, rows, n_in, group_begin, group_end, out);
}

void UnpackQ8_0Rows(const void* packed, int64_t n_in, int64_t row_begin, int64_t row_end,
                    uint8_t* out) {
  Unpack<Q8Layout>(packed, n_in, row_begin, row_end, out);
}

void UnpackQ4_0Rows(const void* packed, int64_t n_in, int64_t row_begin, int64_t row_end,
                    uint8_t* out) {
  Unpack<Q4Layout>(packed, n_in, row_begin, row_end, out);
}

void RefMatmulQ8_0Packed(const void* w, const ActivationBlock* x, float* y, int64_t n_tokens,
                         int64_t n_in, int64_t n_out, int64_t row_begin, int64_t row_end) {
  RefPacked<Q8Layout>(w, x, y, n_tokens, n_in, n_out, row_begin, row_end);
}

void RefMatmulQ4_0Packed(const void* w, const ActivationBlock* x, float* y, int64_t n_tokens,
                         int64_t n_in, int64_t n_out, int64_t row_begin, int64_t row_end) {
  RefPacked<Q4Layout>(w, x, y, n_tokens, n_in, n_out, row_begin, row_end);
}

}  // namespace tf::engine::kernels
