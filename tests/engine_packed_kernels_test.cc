// The packed block matmuls (engine/kernels/packed_blocks.h): the layout byte for byte on a
// hand-made matrix (padding rows included); the plain packed matmul against the unpacked
// reference; every vectorised packed matmul bit for bit equal to the plain one at sizes that
// leave partial row groups, partial token tiles and row ranges that start and end inside a
// group, with every token alone equal to the batch; Q8_0's -128 against activations of +-127;
// MatMuls over packed matrices independent of the thread count.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "engine/dtype.h"
#include "engine/kernels/kernels.h"
#include "engine/kernels/packed_blocks.h"
#include "engine/matmul.h"
#include "engine/quant.h"
#include "engine_extreme_blocks.h"

namespace tf::testing {
namespace {

using engine::DType;
using engine::kernels::ActivationBlock;
using engine::kernels::KernelSet;
namespace k = engine::kernels;

std::vector<uint8_t> QuantizedRows(DType type, int64_t rows, int64_t cols, std::mt19937& rng) {
  std::normal_distribution<float> dist(0.0f, 0.1f);
  std::vector<float> x(rows * cols);
  for (float& v : x) v = dist(rng);
  std::vector<uint8_t> out(rows * engine::RowBytes(type, cols));
  for (int64_t r = 0; r < rows; ++r) {
    engine::QuantizeRow(type, x.data() + r * cols, cols,
                        out.data() + r * engine::RowBytes(type, cols));
  }
  return out;
}

std::vector<ActivationBlock> RandomActivations(int64_t n_tokens, int64_t n_in, std::mt19937& rng) {
  std::normal_distribution<float> dist(0.0f, 2.0f);
  std::vector<float> x(n_tokens * n_in);
  for (float& v : x) v = dist(rng);
  std::vector<ActivationBlock> out(n_tokens * n_in / 32);
  for (int64_t t = 0; t < n_tokens; ++t) {
    k::QuantizeActivations(x.data() + t * n_in, n_in, out.data() + t * n_in / 32);
  }
  return out;
}

// The whole matrix repacked.
std::vector<uint8_t> Packed(DType type, const std::vector<uint8_t>& w, int64_t rows, int64_t n_in) {
  const int64_t groups = (rows + k::kPackRows - 1) / k::kPackRows;
  if (type == DType::kQ8_0) {
    std::vector<uint8_t> out(k::PackedQ8_0Bytes(rows, n_in), 0xee);
    k::PackQ8_0(w.data(), rows, n_in, 0, groups, out.data());
    return out;
  }
  std::vector<uint8_t> out(k::PackedQ4_0Bytes(rows, n_in), 0xee);
  // Two calls, as the model splits the groups between threads.
  k::PackQ4_0(w.data(), rows, n_in, 0, 1, out.data());
  k::PackQ4_0(w.data(), rows, n_in, 1, groups, out.data());
  return out;
}

TEST(EnginePacked, Q8_0LayoutByteForByte) {
  const int64_t rows = 17, n_in = 64, blocks = 2;
  std::vector<uint8_t> w(rows * blocks * 34);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t b = 0; b < blocks; ++b) {
      uint8_t* block = w.data() + (r * blocks + b) * 34;
      block[0] = static_cast<uint8_t>(r), block[1] = static_cast<uint8_t>(0x30 + b);  // scale
      for (int i = 0; i < 32; ++i) block[2 + i] = static_cast<uint8_t>(r * 7 + b * 32 + i);
    }
  }
  const std::vector<uint8_t> p = Packed(DType::kQ8_0, w, rows, n_in);
  const int64_t scale_bytes = 64, group_bytes = scale_bytes + blocks * 8 * 64;
  ASSERT_EQ(k::PackedScaleBytes(n_in), scale_bytes);
  ASSERT_EQ(k::PackedQ8_0GroupBytes(n_in), group_bytes);
  ASSERT_EQ(static_cast<int64_t>(p.size()), 2 * group_bytes);
  for (int64_t r = 0; r < 32; ++r) {
    const uint8_t* group = p.data() + r / 16 * group_bytes;
    const int64_t j = r % 16;
    for (int64_t b = 0; b < blocks; ++b) {
      const uint8_t* scale = group + (b * 16 + j) * 2;
      EXPECT_EQ(scale[0], r < rows ? r : 0) << r;
      EXPECT_EQ(scale[1], r < rows ? 0x30 + b : 0) << r;
      for (int i = 0; i < 32; ++i) {
        const uint8_t got = group[scale_bytes + b * 512 + (i / 4) * 64 + j * 4 + i % 4];
        const uint8_t want = r < rows ? static_cast<uint8_t>((r * 7 + b * 32 + i) ^ 0x80) : 0x80;
        ASSERT_EQ(got, want) << "row " << r << " block " << b << " weight " << i;
      }
    }
  }
}

TEST(EnginePacked, Q4_0LayoutByteForByte) {
  const int64_t rows = 3, n_in = 32;
  std::vector<uint8_t> w(rows * 18);
  for (int64_t r = 0; r < rows; ++r) {
    w[r * 18] = 0x11, w[r * 18 + 1] = static_cast<uint8_t>(0x3c + r);
    for (int i = 0; i < 16; ++i) w[r * 18 + 2 + i] = static_cast<uint8_t>(r * 16 + i);
  }
  const std::vector<uint8_t> p = Packed(DType::kQ4_0, w, rows, n_in);
  ASSERT_EQ(static_cast<int64_t>(p.size()), 64 + 4 * 64);
  for (int64_t j = 0; j < 16; ++j) {
    EXPECT_EQ(p[j * 2], j < rows ? 0x11 : 0);
    EXPECT_EQ(p[j * 2 + 1], j < rows ? 0x3c + j : 0);
    for (int i = 0; i < 16; ++i) {  // byte i holds weights i (low nibble) and i + 16 (high)
      const uint8_t got = p[64 + (i / 4) * 64 + j * 4 + i % 4];
      ASSERT_EQ(got, j < rows ? j * 16 + i : 0x88) << "row " << j << " byte " << i;
    }
  }
}

// Unpacking gives back the GGUF blocks a matrix was packed from, byte for byte, for any range of
// rows (a model that keeps only the packed copy reads its rows this way).
TEST(EnginePacked, UnpackGivesBackThePackedRows) {
  std::mt19937 rng(11);
  const int64_t rows = 37;
  for (DType type : {DType::kQ8_0, DType::kQ4_0}) {
    for (int64_t n_in : {32, 96}) {
      const auto w = QuantizedRows(type, rows, n_in, rng);
      const auto p = Packed(type, w, rows, n_in);
      const size_t row_bytes = engine::RowBytes(type, n_in);
      auto unpack = type == DType::kQ8_0 ? k::UnpackQ8_0Rows : k::UnpackQ4_0Rows;
      std::vector<uint8_t> all(w.size(), 0xee);
      unpack(p.data(), n_in, 0, rows, all.data());
      EXPECT_EQ(all, w) << engine::DTypeName(type) << " n_in=" << n_in;
      std::vector<uint8_t> some(3 * row_bytes, 0xee);  // rows 15-17 straddle two groups
      unpack(p.data(), n_in, 15, 18, some.data());
      EXPECT_TRUE(std::equal(some.begin(), some.end(), w.begin() + 15 * row_bytes))
          << engine::DTypeName(type) << " n_in=" << n_in;
    }
  }
}

// The plain packed matmuls compute what the unpacked reference computes (in their own order).
TEST(EnginePacked, ReferenceAgreesWithTheUnpackedReference) {
  std::mt19937 rng(5);
  const KernelSet& ref = k::ReferenceKernels();
  const int64_t n_out = 37, n_tokens = 3;
  for (DType type : {DType::kQ8_0, DType::kQ4_0}) {
    for (int64_t n_in : {32, 96, 1024}) {
      const auto w = QuantizedRows(type, n_out, n_in, rng);
      const auto x = RandomActivations(n_tokens, n_in, rng);
      const auto p = Packed(type, w, n_out, n_in);
      std::vector<float> want(n_tokens * n_out), got(n_tokens * n_out);
      auto plain = type == DType::kQ8_0 ? ref.matmul_q8_0 : ref.matmul_q4_0;
      auto packed = type == DType::kQ8_0 ? k::RefMatmulQ8_0Packed : k::RefMatmulQ4_0Packed;
      plain(w.data(), x.data(), want.data(), n_tokens, n_in, n_out, 0, n_out);
      packed(p.data(), x.data(), got.data(), n_tokens, n_in, n_out, 0, n_out);
      for (size_t i = 0; i < got.size(); ++i) {
        ASSERT_NEAR(got[i], want[i], 2e-5 * (1 + std::fabs(want[i])))
            << engine::DTypeName(type) << " n_in=" << n_in << " output " << i;
      }
    }
  }
}

class PackedKernelsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    set_ = k::Avx512Kernels();
    if (set_ == nullptr || set_->matmul_q8_0_packed == nullptr) {
      GTEST_SKIP() << "this CPU has no packed block matmuls (AVX-512 VNNI)";
    }
  }

  // The set's packed matmul against the plain one, bit for bit: the whole range, two ranges
  // split inside a group (outputs outside a range untouched), and every token alone.
  void Check(DType type, const std::vector<uint8_t>& p, const std::vector<ActivationBlock>& x,
             int64_t n_tokens, int64_t n_in, int64_t n_out, const std::string& what) {
    auto fast = type == DType::kQ8_0 ? set_->matmul_q8_0_packed : set_->matmul_q4_0_packed;
    auto plain = type == DType::kQ8_0 ? k::RefMatmulQ8_0Packed : k::RefMatmulQ4_0Packed;
    const int64_t blocks = n_in / 32;
    std::vector<float> want(n_tokens * n_out, -1), got(n_tokens * n_out, -1);
    plain(p.data(), x.data(), want.data(), n_tokens, n_in, n_out, 0, n_out);
    fast(p.data(), x.data(), got.data(), n_tokens, n_in, n_out, 0, n_out);
    EXPECT_EQ(got, want) << what;
    const int64_t split = std::min<int64_t>(n_out, 3 + n_out / 2);
    std::vector<float> parts(n_tokens * n_out, -1);
    fast(p.data(), x.data(), parts.data(), n_tokens, n_in, n_out, 1, split);
    for (int64_t t = 0; t < n_tokens; ++t) {
      EXPECT_EQ(parts[t * n_out], -1) << what << ": row 0 written outside the range";
    }
    fast(p.data(), x.data(), parts.data(), n_tokens, n_in, n_out, 0, 1);
    fast(p.data(), x.data(), parts.data(), n_tokens, n_in, n_out, split, n_out);
    EXPECT_EQ(parts, want) << what << ": depends on the row split";
    for (int64_t t = 0; t < n_tokens; ++t) {
      std::vector<float> alone(n_out, -1);
      fast(p.data(), x.data() + t * blocks, alone.data(), 1, n_in, n_out, 0, n_out);
      EXPECT_EQ(std::vector<float>(want.begin() + t * n_out, want.begin() + (t + 1) * n_out), alone)
          << what << ": token " << t << " alone differs from the batch";
    }
  }
  const KernelSet* set_ = nullptr;
  std::mt19937 rng_{11};
};

TEST_F(PackedKernelsTest, EqualThePlainPackedMatmulBitForBit) {
  for (DType type : {DType::kQ8_0, DType::kQ4_0}) {
    for (int64_t n_in : {32, 64, 96, 160, 1024}) {
      for (int64_t n_out : {5, 16, 37, 50}) {
        for (int64_t n_tokens : {1, 2, 3, 4, 7, 8, 9, 15, 16, 17, 33}) {
          const auto w = QuantizedRows(type, n_out, n_in, rng_);
          const auto x = RandomActivations(n_tokens, n_in, rng_);
          Check(type, Packed(type, w, n_out, n_in), x, n_tokens, n_in, n_out,
                std::string(engine::DTypeName(type)) + " n_in=" + std::to_string(n_in) +
                    " n_out=" + std::to_string(n_out) + " n_tokens=" + std::to_string(n_tokens));
        }
      }
    }
  }
}

// q = -128 (legal in Q8_0, never written by our quantiser) and 127 against +-127 everywhere:
// the largest dot products, exactly as the integer formula gives them.
TEST_F(PackedKernelsTest, ExtremeQ8_0Blocks) {
  const int64_t n_in = 64, n_out = 21, n_tokens = 5;
  std::vector<uint8_t> w = ExtremeQ8_0Weights(n_out * 2);
  std::vector<ActivationBlock> x = ExtremeActivations(n_tokens * 2);
  const auto p = Packed(DType::kQ8_0, w, n_out, n_in);
  std::vector<float> got(n_tokens * n_out);
  set_->matmul_q8_0_packed(p.data(), x.data(), got.data(), n_tokens, n_in, n_out, 0, n_out);
  for (int64_t t = 0; t < n_tokens; ++t) {
    for (int64_t r = 0; r < n_out; ++r) {
      float want = 0;
      for (int64_t b = 0; b < 2; ++b) {
        int32_t dot = 0;
        for (int i = 0; i < 32; ++i) {
          dot += static_cast<int8_t>(w[(r * 2 + b) * 34 + 2 + i]) * x[t * 2 + b].q[i];
        }
        want = std::fma(static_cast<float>(dot), 0.5f, want);
      }
      ASSERT_EQ(got[t * n_out + r], want) << "t=" << t << " r=" << r;
    }
  }
  Check(DType::kQ8_0, p, x, n_tokens, n_in, n_out, "Q8_0 with -128");
}

// MatMuls over packed matrices (what a loaded model runs): each output as the packed matmul
// alone gives it, whatever the thread count, with parts whose rows are not whole groups.
TEST_F(PackedKernelsTest, MatMulsOverPackedMatricesAtAnyThreadCount) {
  const int64_t n_in = 128;
  const auto q8 = QuantizedRows(DType::kQ8_0, 45, n_in, rng_);
  const auto q4 = QuantizedRows(DType::kQ4_0, 21, n_in, rng_);
  const auto q8p = Packed(DType::kQ8_0, q8, 45, n_in), q4p = Packed(DType::kQ4_0, q4, 21, n_in);
  const engine::WeightMatrix ws[] = {{DType::kQ8_0, q8.data(), 45, n_in, "q8_0", q8p.data()},
                                     {DType::kQ4_0, q4.data(), 21, n_in, "q4_0", q4p.data()}};
  std::normal_distribution<float> dist(0.0f, 1.0f);
  for (int64_t n_tokens : {1, 3, 12}) {
    std::vector<float> x(n_tokens * n_in);
    for (float& v : x) v = dist(rng_);
    std::vector<ActivationBlock> xq(n_tokens * n_in / 32);
    for (int64_t t = 0; t < n_tokens; ++t) {
      k::QuantizeActivations(x.data() + t * n_in, n_in, xq.data() + t * n_in / 32);
    }
    std::vector<float> want8(n_tokens * 45), want4(n_tokens * 21);
    k::RefMatmulQ8_0Packed(q8p.data(), xq.data(), want8.data(), n_tokens, n_in, 45, 0, 45);
    k::RefMatmulQ4_0Packed(q4p.data(), xq.data(), want4.data(), n_tokens, n_in, 21, 0, 21);
    for (int threads : {1, 2, 3}) {
      engine::ThreadPool pool(threads);
      std::vector<float> got8(want8.size(), -1), got4(want4.size(), -1);
      const engine::MatMulPart parts[] = {{&ws[0], got8.data()}, {&ws[1], got4.data()}};
      engine::MatMuls(*set_, pool, parts, x.data(), n_tokens, n_in);
      EXPECT_EQ(got8, want8) << "threads=" << threads << " n_tokens=" << n_tokens;
      EXPECT_EQ(got4, want4) << "threads=" << threads << " n_tokens=" << n_tokens;
    }
  }
}

}  // namespace
}  // namespace tf::testing
