// The typed weight formats and their matmuls: f16 rounding; Q8_0 and Q4_0 blocks byte for byte
// against hand-computed ones and their quantise/dequantise round trips; the activation
// quantiser; every vectorised typed matmul against the reference at sizes that exercise vector
// bodies, tails and token tiles; the reference against the formulas; results independent of
// the token count and the row split.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "engine/dtype.h"
#include "engine/kernels/kernels.h"
#include "engine/matmul.h"
#include "engine/quant.h"
#include "engine_extreme_blocks.h"

namespace tf::testing {
namespace {

using engine::DType;
using engine::kernels::ActivationBlock;
using engine::kernels::KernelSet;

std::vector<float> Random(int64_t n, std::mt19937& rng, float scale = 1.0f) {
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

std::vector<uint8_t> Quantized(DType type, const std::vector<float>& x, int64_t rows,
                               int64_t cols) {
  std::vector<uint8_t> out(rows * engine::RowBytes(type, cols));
  for (int64_t r = 0; r < rows; ++r) {
    engine::QuantizeRow(type, x.data() + r * cols, cols,
                        out.data() + r * engine::RowBytes(type, cols));
  }
  return out;
}

// x as 16-bit values of `type` (F16 or BF16; BF16 by truncation, which is exact for the test).
std::vector<uint8_t> Halves(DType type, const std::vector<float>& x) {
  std::vector<uint8_t> out(2 * x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    uint16_t h;
    if (type == DType::kF16) {
      h = engine::F32ToF16(x[i]);
    } else {
      uint32_t u;
      std::memcpy(&u, &x[i], 4);
      h = static_cast<uint16_t>(u >> 16);
    }
    out[2 * i] = static_cast<uint8_t>(h & 0xff);
    out[2 * i + 1] = static_cast<uint8_t>(h >> 8);
  }
  return out;
}

std::vector<float> Dequantized(DType type, const std::vector<uint8_t>& w, int64_t rows,
                               int64_t cols) {
  std::vector<float> out(rows * cols);
  for (int64_t r = 0; r < rows; ++r) {
    engine::DequantizeRow(type, w.data() + r * engine::RowBytes(type, cols), cols,
                          out.data() + r * cols);
  }
  return out;
}

std::vector<ActivationBlock> Activations(const std::vector<float>& x, int64_t n_tokens,
                                         int64_t n_in) {
  std::vector<ActivationBlock> out(n_tokens * n_in / 32);
  for (int64_t t = 0; t < n_tokens; ++t) {
    engine::kernels::QuantizeActivations(x.data() + t * n_in, n_in, out.data() + t * n_in / 32);
  }
  return out;
}

TEST(EngineQuant, F32ToF16RoundsToNearestEven) {
  EXPECT_EQ(engine::F32ToF16(1.0f), 0x3c00);
  EXPECT_EQ(engine::F32ToF16(-2.0f), 0xc000);
  EXPECT_EQ(engine::F32ToF16(65504.0f), 0x7bff);
  EXPECT_EQ(engine::F32ToF16(65520.0f), 0x7c00);  // halfway to 65536 rounds to even: infinity
  EXPECT_EQ(engine::F32ToF16(65519.0f), 0x7bff);
  EXPECT_EQ(engine::F32ToF16(1.0f + 1.0f / 2048), 0x3c00);     // halfway, to the even neighbour
  EXPECT_EQ(engine::F32ToF16(1.0f + 3.0f / 2048), 0x3c02);     // halfway, to the even neighbour
  EXPECT_EQ(engine::F32ToF16(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(engine::F32ToF16(std::ldexp(1.0f, -25)), 0x0000);  // half of it: ties to even
  EXPECT_EQ(engine::F32ToF16(std::ldexp(1.5f, -25)), 0x0001);
  EXPECT_EQ(engine::F32ToF16(std::ldexp(3.0f, -24)), 0x0003);
  EXPECT_EQ(engine::F32ToF16(-0.0f), 0x8000);
  EXPECT_EQ(engine::F32ToF16(INFINITY), 0x7c00);
  EXPECT_TRUE(std::isnan(engine::F16ToF32(engine::F32ToF16(NAN))));
  // Every finite half survives the round trip.
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    if ((bits & 0x7c00) == 0x7c00) continue;
    ASSERT_EQ(engine::F32ToF16(engine::F16ToF32(static_cast<uint16_t>(bits))), bits) << bits;
  }
}

// The quantisers' rounding is std::nearbyint's (ties to even) without the library call.
TEST(EngineQuant, RoundHalfEvenIsNearbyint) {
  for (int k = -1200; k <= 1200; ++k) {  // every quarter, ties included
    const float x = static_cast<float>(k) / 4;
    ASSERT_EQ(engine::RoundHalfEven(x), std::nearbyint(x)) << x;
  }
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> dist(-300.0f, 300.0f);
  for (int i = 0; i < 100000; ++i) {
    const float x = dist(rng);
    ASSERT_EQ(engine::RoundHalfEven(x), std::nearbyint(x)) << x;
  }
  EXPECT_EQ(engine::Clamp(NAN, -127.0f, 127.0f), -127.0f);
  EXPECT_EQ(engine::Clamp(300.0f, -127.0f, 127.0f), 127.0f);
  EXPECT_EQ(engine::MaxAbs(std::vector<float>{1.0f, -3.5f, 2.0f}.data(), 3), 3.5f);
}

TEST(EngineQuant, Q8_0BlockLayout) {
  std::vector<float> x(32, 0.0f);
  x[0] = 127.0f;  // max |x|: d = 1
  x[1] = -127.0f;
  x[2] = 2.5f;     // ties to even: 2
  x[3] = 3.5f;     // 4
  x[4] = -0.4f;    // 0
  x[31] = 100.6f;  // 101
  std::vector<uint8_t> got(34);
  engine::QuantizeRowQ8_0(x.data(), 32, got.data());
  std::vector<uint8_t> want(34, 0);
  want[0] = 0x00, want[1] = 0x3c;  // d = 1.0 as f16, little-endian
  want[2] = 0x7f, want[3] = 0x81, want[4] = 0x02, want[5] = 0x04, want[6] = 0x00;
  want[33] = 101;
  EXPECT_EQ(got, want);

  // A hand-made block reads back as d * q: d = -0.5 (0xb800), q = 0, 1, -128, ...
  std::vector<uint8_t> block(34, 0);
  block[0] = 0x00, block[1] = 0xb8;
  block[3] = 1, block[4] = 0x80, block[5] = 0x7f;
  std::vector<float> back(32);
  engine::DequantizeRow(DType::kQ8_0, block.data(), 32, back.data());
  EXPECT_EQ(back[0], 0.0f);
  EXPECT_EQ(back[1], -0.5f);
  EXPECT_EQ(back[2], 64.0f);
  EXPECT_EQ(back[3], -63.5f);
}

TEST(EngineQuant, Q4_0BlockLayout) {
  std::vector<float> x(32);
  for (int j = 0; j < 16; ++j) {
    x[j] = static_cast<float>(j - 8);       // -8 is the largest magnitude: d = -8 / -8 = 1
    x[j + 16] = static_cast<float>(7 - j);  // q = 15 - j
  }
  std::vector<uint8_t> got(18);
  engine::QuantizeRowQ4_0(x.data(), 32, got.data());
  std::vector<uint8_t> want = {0x00, 0x3c};
  for (int j = 0; j < 16; ++j) want.push_back(static_cast<uint8_t>(j | ((15 - j) << 4)));
  EXPECT_EQ(got, want);

  // The largest magnitude positive: d = 16 / -8 = -2 (0xc000); 16 -> 0, -14 -> 15, and -16
  // (which would be 16) clamps to 15, i.e. -14.
  std::fill(x.begin(), x.end(), 0.0f);
  x[0] = 16.0f, x[1] = -14.0f, x[2] = -16.0f, x[17] = 3.0f;  // 3 / -2 = -1.5 -> -2 (even) + 8
  engine::QuantizeRowQ4_0(x.data(), 32, got.data());
  EXPECT_EQ(got[0], 0x00);
  EXPECT_EQ(got[1], 0xc0);
  EXPECT_EQ(got[2], 0x80);  // weight 0: q 0; weight 16 (0.0): q 8
  EXPECT_EQ(got[3], 0x6f);  // weight 1: q 15; weight 17: q 6
  EXPECT_EQ(got[4], 0x8f);  // weight 2: clamped to 15
  std::vector<float> back(32);
  engine::DequantizeRow(DType::kQ4_0, got.data(), 32, back.data());
  EXPECT_EQ(back[0], 16.0f);
  EXPECT_EQ(back[1], -14.0f);
  EXPECT_EQ(back[2], -14.0f);
  EXPECT_EQ(back[16], 0.0f);
  EXPECT_EQ(back[17], 4.0f);
}

TEST(EngineQuant, RoundTripsStayWithinHalfAStep) {
  std::mt19937 rng(7);
  const int64_t n = 32 * 40;
  auto x = Random(n, rng, 0.05f);
  x[5] = 0.0f;
  std::fill(x.begin() + 64, x.begin() + 96, 0.0f);  // a block of zeros
  for (DType type : {DType::kQ8_0, DType::kQ4_0}) {
    std::vector<uint8_t> q = Quantized(type, x, 1, n);
    std::vector<float> back = Dequantized(type, q, 1, n);
    const size_t block_bytes = engine::RowBytes(type, 32);
    for (int64_t b = 0; b < n / 32; ++b) {
      const uint8_t* block = q.data() + b * block_bytes;
      const float d = std::fabs(engine::F16ToF32(static_cast<uint16_t>(block[0] | block[1] << 8)));
      int clamped = 0;
      for (int64_t i = b * 32; i < (b + 1) * 32; ++i) {
        float err = std::fabs(back[i] - x[i]);
        // Q4_0 puts -8 at the block's largest magnitude; a value of the other sign near it can
        // need +8, which clamps to +7: at most one step off.
        if (err > d / 2 * 1.0001f + 1e-12f) ++clamped;
        ASSERT_LE(err, d * 1.0001f + 1e-12f) << engine::DTypeName(type) << " element " << i;
      }
      if (type == DType::kQ8_0) {
        EXPECT_EQ(clamped, 0) << "block " << b;
      }
    }
    EXPECT_EQ(back[5], 0.0f);
    for (int i = 64; i < 96; ++i) EXPECT_EQ(back[i], 0.0f);
    // What was quantised once quantises to the same bytes again.
    EXPECT_EQ(Quantized(type, back, 1, n), q) << engine::DTypeName(type);
  }
}

TEST(EngineQuant, ActivationBlocks) {
  std::vector<float> x(64, 0.0f);
  x[0] = -254.0f;  // d = 2
  x[1] = 3.0f;     // 1.5 -> 2 (even)
  x[2] = 5.0f;     // 2.5 -> 2 (even)
  x[3] = 1.0f;     // 0.5 -> 0 (even)
  std::vector<ActivationBlock> a(2);
  engine::kernels::QuantizeActivations(x.data(), 64, a.data());
  EXPECT_EQ(a[0].d, 2.0f);
  EXPECT_EQ(a[0].q[0], -127);
  EXPECT_EQ(a[0].q[1], 2);
  EXPECT_EQ(a[0].q[2], 2);
  EXPECT_EQ(a[0].q[3], 0);
  EXPECT_EQ(a[1].d, 0.0f);  // all zeros
  for (int8_t q : a[1].q) EXPECT_EQ(q, 0);
}

// The reference kernels are the formulas: 16-bit weights exactly as float32 weights converted
// first (same order of sums), block formats as the blockwise sum computed in double.
TEST(EngineQuant, ReferenceMatmulsAreTheFormulas) {
  const KernelSet& ref = engine::kernels::ReferenceKernels();
  std::mt19937 rng(3);
  const int64_t n_in = 96, n_out = 5, n_tokens = 3;
  auto w = Random(n_out * n_in, rng), x = Random(n_tokens * n_in, rng);
  for (DType type : {DType::kF16, DType::kBF16}) {
    std::vector<uint8_t> half = Halves(type, w);
    std::vector<float> as_f32 = Dequantized(type, half, n_out, n_in);
    std::vector<float> want(n_tokens * n_out), got(n_tokens * n_out);
    ref.matmul_rows(as_f32.data(), x.data(), want.data(), n_tokens, n_in, n_out, 0, n_out);
    auto fn = type == DType::kF16 ? ref.matmul_f16 : ref.matmul_bf16;
    fn(half.data(), x.data(), got.data(), n_tokens, n_in, n_out, 0, n_out);
    EXPECT_EQ(got, want) << engine::DTypeName(type);
  }
  std::vector<ActivationBlock> xq = Activations(x, n_tokens, n_in);
  for (DType type : {DType::kQ8_0, DType::kQ4_0}) {
    std::vector<uint8_t> q = Quantized(type, w, n_out, n_in);
    std::vector<float> wf = Dequantized(type, q, n_out, n_in);
    std::vector<float> got(n_tokens * n_out);
    auto fn = type == DType::kQ8_0 ? ref.matmul_q8_0 : ref.matmul_q4_0;
    fn(q.data(), xq.data(), got.data(), n_tokens, n_in, n_out, 0, n_out);
    for (int64_t t = 0; t < n_tokens; ++t) {
      for (int64_t r = 0; r < n_out; ++r) {
        double want = 0;  // sum over blocks and lanes of w * d_x * q_x, exactly
        for (int64_t i = 0; i < n_in; ++i) {
          const ActivationBlock& a = xq[t * n_in / 32 + i / 32];
          want += double{wf[r * n_in + i]} * a.d * a.q[i % 32];
        }
        EXPECT_NEAR(got[t * n_out + r], want, 1e-5 * (1 + std::fabs(want)))
            << engine::DTypeName(type) << " t=" << t << " r=" << r;
      }
    }
  }
}

class TypedKernelsTest : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    std::string name = GetParam();
    if (name == "avx2") set_ = engine::kernels::Avx2Kernels();
    if (name == "avx512") set_ = engine::kernels::Avx512Kernels();
    if (set_ == nullptr) GTEST_SKIP() << "this CPU lacks " << name;
  }
  const KernelSet& ref() const { return engine::kernels::ReferenceKernels(); }

  // Runs the set's kernel and the reference's through `call(set, y, first_token, n_tokens,
  // row_begin, row_end)` (tokens [first_token, first_token + n_tokens)) and compares: within float
  // tolerance of the reference; bit-identical whether the rows come in one call or two, and whether
  // each token comes alone or with the others.
  template <typename Call>
  void Check(const Call& call, int64_t n_tokens, int64_t n_out, const std::string& what,
             float tolerance = 2e-5f) {
    std::vector<float> want(n_tokens * n_out, -1), got(n_tokens * n_out, -1);
    call(ref(), want.data(), 0, n_tokens, 0, n_out);
    call(*set_, got.data(), 0, n_tokens, 0, 20);  // two row ranges, as the thread pool splits
    call(*set_, got.data(), 0, n_tokens, 20, n_out);
    float worst = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      worst = std::max(worst, std::fabs(got[i] - want[i]) / (1.0f + std::fabs(want[i])));
    }
    EXPECT_LT(worst, tolerance) << what;
    std::vector<float> whole(n_tokens * n_out);
    call(*set_, whole.data(), 0, n_tokens, 0, n_out);
    EXPECT_EQ(whole, got) << what << ": depends on the row split";
    for (int64_t t = 0; t < n_tokens; ++t) {
      std::vector<float> alone(n_out);
      call(*set_, alone.data(), t, 1, 0, n_out);
      EXPECT_EQ(std::vector<float>(got.begin() + t * n_out, got.begin() + (t + 1) * n_out), alone)
          << what << ": token " << t << " alone differs from the batch";
    }
  }
  const KernelSet* set_ = nullptr;
  std::mt19937 rng_{42};
};

TEST_P(TypedKernelsTest, SixteenBitMatmuls) {
  const int64_t n_out = 37;
  for (DType type : {DType::kF16, DType::kBF16}) {
    // 4100: one token takes 4 rows at a time from 4096 on (typed_tiles.h).
    for (int64_t n_in : {1, 7, 8, 13, 64, 100, 176, 4100}) {
      for (int64_t n_tokens : {1, 2, 3, 4, 5, 9}) {
        auto w = Halves(type, Random(n_out * n_in, rng_));
        auto x = Random(n_tokens * n_in, rng_);
        auto call = [&](const KernelSet& k, float* y, int64_t t0, int64_t n, int64_t b, int64_t e) {
          auto fn = type == DType::kF16 ? k.matmul_f16 : k.matmul_bf16;
          fn(w.data(), x.data() + t0 * n_in, y, n, n_in, n_out, b, e);
        };
        // Rounding differs from the reference's single sum in proportion to the row's length.
        Check(call, n_tokens, n_out,
              std::string(engine::DTypeName(type)) + " n_in=" + std::to_string(n_in) +
                  " n_tokens=" + std::to_string(n_tokens),
              2e-5f * std::max<float>(1.0f, static_cast<float>(n_in) / 176));
      }
    }
  }
}

TEST_P(TypedKernelsTest, BlockMatmuls) {
  const int64_t n_out = 37;
  for (DType type : {DType::kQ8_0, DType::kQ4_0}) {
    for (int64_t n_in : {32, 64, 96, 160, 1024}) {
      for (int64_t n_tokens : {1, 2, 3, 4, 5, 9}) {
        auto w = Quantized(type, Random(n_out * n_in, rng_, 0.1f), n_out, n_in);
        auto x = Activations(Random(n_tokens * n_in, rng_, 2.0f), n_tokens, n_in);
        auto call = [&](const KernelSet& k, float* y, int64_t t0, int64_t n, int64_t b, int64_t e) {
          auto fn = type == DType::kQ8_0 ? k.matmul_q8_0 : k.matmul_q4_0;
          fn(w.data(), x.data() + t0 * n_in / 32, y, n, n_in, n_out, b, e);
        };
        Check(call, n_tokens, n_out,
              std::string(engine::DTypeName(type)) + " n_in=" + std::to_string(n_in) +
                  " n_tokens=" + std::to_string(n_tokens));
      }
    }
  }
}

// Block weights at the edges of their range: q = -128 in Q8_0 (legal in the format, never
// written by our quantiser) against activations of +-127.
TEST_P(TypedKernelsTest, ExtremeBlocks) {
  const int64_t n_in = 64, n_out = 21, n_tokens = 5;
  std::vector<uint8_t> w = ExtremeQ8_0Weights(n_out * 2);
  std::vector<ActivationBlock> x = ExtremeActivations(n_tokens * 2);
  auto call = [&](const KernelSet& k, float* y, int64_t t0, int64_t n, int64_t b, int64_t e) {
    k.matmul_q8_0(w.data(), x.data() + t0 * 2, y, n, n_in, n_out, b, e);
  };
  Check(call, n_tokens, n_out, "Q8_0 with -128");
}

// Every set quantises activations to the very blocks the plain QuantizeActivations gives:
// random rows at several scales, ties at every half step, all zeros, -0, a NaN, infinities,
// subnormals (127 / max|x| overflows to infinity) and values at the clamp.
TEST_P(TypedKernelsTest, QuantizeActivationsEqualsThePlainVersion) {
  std::vector<float> x;
  for (float scale : {1e-3f, 1.0f, 300.0f}) {
    const auto r = Random(32 * 8, rng_, scale);
    x.insert(x.end(), r.begin(), r.end());
  }
  for (int i = 0; i < 32; ++i) x.push_back(i % 2 == 0 ? 254.0f : (i - 16) + 0.5f);  // d = 2: ties
  for (int i = 0; i < 32; ++i) x.push_back(0.0f);
  for (int i = 0; i < 32; ++i) x.push_back(i == 3 ? -0.0f : 0.0f);
  const float special[] = {std::nanf(""), INFINITY, -INFINITY, 1e-45f, -1e-40f, 127.0f, -127.0f};
  for (float v : special) {
    auto r = Random(32, rng_);
    r[5] = v;
    x.insert(x.end(), r.begin(), r.end());
  }
  for (int i = 0; i < 32; ++i) x.push_back(i % 3 == 0 ? 1e-45f : -1e-45f);  // all subnormal
  const int64_t n = static_cast<int64_t>(x.size());
  std::vector<ActivationBlock> want(n / 32), got(n / 32);
  engine::kernels::QuantizeActivations(x.data(), n, want.data());
  ASSERT_NE(set_->quantize_activations, nullptr);
  set_->quantize_activations(x.data(), n, got.data());
  for (int64_t b = 0; b < n / 32; ++b) {
    EXPECT_EQ(std::memcmp(&want[b], &got[b], sizeof(ActivationBlock)), 0) << "block " << b;
  }
}

INSTANTIATE_TEST_SUITE_P(Sets, TypedKernelsTest, ::testing::Values("avx2", "avx512"));

// Several matrices over the same activations in one pass (the q/k/v and gate/up projections)
// give each output exactly what a matmul of its matrix alone gives, whatever the thread count;
// parts of different types and row counts that are not multiples of the threads' row groups.
TEST(EngineMatMuls, EqualSeparateMatmulsAtAnyThreadCount) {
  std::mt19937 rng(7);
  const int64_t n_in = 96;
  const auto f32 = Random(45 * n_in, rng, 0.1f);
  const auto f16 = Halves(DType::kF16, Random(37 * n_in, rng, 0.1f));
  const auto q8 = Quantized(DType::kQ8_0, Random(13 * n_in, rng, 0.1f), 13, n_in);
  const engine::WeightMatrix ws[] = {{DType::kF16, f16.data(), 37, n_in, "f16"},
                                     {DType::kQ8_0, q8.data(), 13, n_in, "q8_0"},
                                     {DType::kF32, f32.data(), 45, n_in, "f32"}};
  const KernelSet& k = engine::kernels::BestKernels();
  for (int64_t n_tokens : {1, 3}) {
    const auto x = Random(n_tokens * n_in, rng);
    engine::ThreadPool one(1);
    std::vector<std::vector<float>> want;
    for (const auto& w : ws) {
      want.emplace_back(n_tokens * w.rows);
      engine::MatMul(k, one, w, x.data(), want.back().data(), n_tokens);
    }
    for (int threads : {1, 2, 3}) {
      engine::ThreadPool pool(threads);
      std::vector<std::vector<float>> got;
      std::vector<engine::MatMulPart> parts;
      for (const auto& w : ws) got.emplace_back(n_tokens * w.rows, -1.0f);
      for (size_t i = 0; i < got.size(); ++i) parts.push_back({&ws[i], got[i].data()});
      engine::MatMuls(k, pool, parts, x.data(), n_tokens, n_in);
      for (size_t i = 0; i < got.size(); ++i) {
        EXPECT_EQ(got[i], want[i])
            << ws[i].name << " threads=" << threads << " n_tokens=" << n_tokens;
      }
    }
  }
}

// A matmul large enough that the threads take it in many pieces (matmul.cc: a share of what is
// left at a time) gives every output what one thread gives it.
TEST(EngineMatMuls, ManyPiecesEqualOneThread) {
  std::mt19937 rng(11);
  const int64_t n_in = 64, rows = 16 * 300 + 5;
  const auto f16 = Halves(DType::kF16, Random(rows * n_in, rng, 0.1f));
  const auto q8 = Quantized(DType::kQ8_0, Random(rows * n_in, rng, 0.1f), rows, n_in);
  const engine::WeightMatrix ws[] = {{DType::kF16, f16.data(), rows, n_in, "f16"},
                                     {DType::kQ8_0, q8.data(), rows, n_in, "q8_0"}};
  const KernelSet& k = engine::kernels::BestKernels();
  for (const auto& w : ws) {
    for (int64_t n_tokens : {1, 3}) {
      const auto x = Random(n_tokens * n_in, rng);
      engine::ThreadPool one(1);
      std::vector<float> want(n_tokens * rows);
      engine::MatMul(k, one, w, x.data(), want.data(), n_tokens);
      for (int threads : {2, 3}) {
        engine::ThreadPool pool(threads);
        std::vector<float> got(n_tokens * rows, -1.0f);
        engine::MatMul(k, pool, w, x.data(), got.data(), n_tokens);
        EXPECT_EQ(got, want) << w.name << " threads=" << threads << " n_tokens=" << n_tokens;
      }
    }
  }
}

}  // namespace
}  // namespace tf::testing
