// Every vectorised kernel against the plain reference on random data, at sizes that exercise
// the vector bodies and the scalar tails; and the thread pool.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <random>
#include <vector>

#include "engine/dtype.h"
#include "engine/kernels/kernels.h"
#include "engine/thread_pool.h"

namespace tf::testing {
namespace {

using engine::kernels::KernelSet;

std::vector<float> Random(int64_t n, std::mt19937& rng, float scale = 1.0f) {
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

// The largest |a - b| / (1 + |b|): absolute near zero, relative for large values.
float MaxErr(const std::vector<float>& a, const std::vector<float>& b) {
  float worst = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    worst = std::max(worst, std::fabs(a[i] - b[i]) / (1.0f + std::fabs(b[i])));
  }
  return worst;
}

class KernelsTest : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    std::string name = GetParam();
    if (name == "avx2") set_ = engine::kernels::Avx2Kernels();
    if (name == "avx512") set_ = engine::kernels::Avx512Kernels();
    if (set_ == nullptr) GTEST_SKIP() << "this CPU lacks " << name;
  }
  const KernelSet& ref() const { return engine::kernels::ReferenceKernels(); }
  const KernelSet* set_ = nullptr;
  std::mt19937 rng_{42};
};

constexpr float kTol = 2e-5f;  // float32 sums in a different order, and exp to ~2 ulp

TEST_P(KernelsTest, MatmulRows) {
  for (int64_t n_in : {1, 7, 16, 64, 100, 176}) {
    for (int64_t n_tokens : {1, 3, 4, 9}) {
      const int64_t n_out = 37;
      auto w = Random(n_out * n_in, rng_), x = Random(n_tokens * n_in, rng_);
      std::vector<float> want(n_tokens * n_out, -1), got(n_tokens * n_out, -1);
      ref().matmul_rows(w.data(), x.data(), want.data(), n_tokens, n_in, n_out, 0, n_out);
      // Two row ranges, as the thread pool would split them.
      set_->matmul_rows(w.data(), x.data(), got.data(), n_tokens, n_in, n_out, 0, 20);
      set_->matmul_rows(w.data(), x.data(), got.data(), n_tokens, n_in, n_out, 20, n_out);
      EXPECT_LT(MaxErr(got, want), kTol) << "n_in=" << n_in << " n_tokens=" << n_tokens;
    }
  }
}

TEST_P(KernelsTest, RmsNorm) {
  for (int64_t n : {1, 8, 13, 64, 4096}) {
    auto x = Random(n, rng_, 3.0f), w = Random(n, rng_);
    std::vector<float> want(n), got(x);
    ref().rms_norm(x.data(), w.data(), want.data(), n, 1e-5f);
    set_->rms_norm(got.data(), w.data(), got.data(), n, 1e-5f);  // in place
    EXPECT_LT(MaxErr(got, want), kTol) << "n=" << n;
  }
}

TEST_P(KernelsTest, Rope) {
  for (int64_t half : {1, 8, 11, 64}) {
    auto x = Random(2 * half, rng_), angles = Random(half, rng_, 10.0f);
    std::vector<float> cos(half), sin(half);
    for (int64_t i = 0; i < half; ++i) {
      cos[i] = std::cos(angles[i]);
      sin[i] = std::sin(angles[i]);
    }
    auto want = x, got = x;
    ref().rope(want.data(), cos.data(), sin.data(), half);
    set_->rope(got.data(), cos.data(), sin.data(), half);
    EXPECT_LT(MaxErr(got, want), kTol) << "half=" << half;
  }
}

TEST_P(KernelsTest, SiluMul) {
  for (int64_t n : {1, 8, 21, 176}) {
    auto g = Random(n, rng_, 6.0f), u = Random(n, rng_);
    g[0] = -100.0f;  // exp overflows in the naive formula's denominator
    std::vector<float> want(n), got(n);
    ref().silu_mul(g.data(), u.data(), want.data(), n);
    set_->silu_mul(g.data(), u.data(), got.data(), n);
    EXPECT_LT(MaxErr(got, want), kTol) << "n=" << n;
  }
}

TEST_P(KernelsTest, Softmax) {
  for (int64_t n : {1, 5, 8, 33, 1024}) {
    auto x = Random(n, rng_, 8.0f);
    auto want = x, got = x;
    ref().softmax(want.data(), n);
    set_->softmax(got.data(), n);
    EXPECT_LT(MaxErr(got, want), kTol) << "n=" << n;
    float sum = 0;
    for (float v : got) sum += v;
    EXPECT_NEAR(sum, 1.0f, 1e-5f);
  }
}

TEST_P(KernelsTest, AttentionHead) {
  for (int64_t head_dim : {4, 16, 20, 128}) {
    for (int64_t n_ctx : {1, 7, 50}) {
      const int64_t stride = 3 * head_dim;  // rows hold other heads too
      auto q = Random(head_dim, rng_), k = Random(n_ctx * stride, rng_),
           v = Random(n_ctx * stride, rng_);
      std::vector<float> scratch(n_ctx), want(head_dim), got(head_dim);
      float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
      ref().attention_head(q.data(), k.data() + head_dim, v.data() + head_dim, n_ctx, stride,
                           head_dim, scale, scratch.data(), want.data());
      set_->attention_head(q.data(), k.data() + head_dim, v.data() + head_dim, n_ctx, stride,
                           head_dim, scale, scratch.data(), got.data());
      EXPECT_LT(MaxErr(got, want), kTol) << "head_dim=" << head_dim << " n_ctx=" << n_ctx;
    }
  }
}

TEST_P(KernelsTest, Argmax) {
  for (int64_t n : {1, 7, 8, 1000}) {
    auto x = Random(n, rng_);
    EXPECT_EQ(set_->argmax(x.data(), n), ref().argmax(x.data(), n));
  }
  std::vector<float> ties = {1, 3, 0, 3, 3, 2, 1, 0, 3, 1};
  EXPECT_EQ(set_->argmax(ties.data(), 10), 1);
}

INSTANTIATE_TEST_SUITE_P(Sets, KernelsTest, ::testing::Values("avx2", "avx512"));

TEST(EngineKernels, BestSetIsUsable) {
  const KernelSet& best = engine::kernels::BestKernels();
  float x[3] = {0.5f, 2.0f, -1.0f};
  EXPECT_EQ(best.argmax(x, 3), 1);
}

TEST(EngineDType, HalfConversions) {
  EXPECT_EQ(engine::Bf16ToF32(0x3f80), 1.0f);
  EXPECT_EQ(engine::Bf16ToF32(0xc040), -3.0f);
  EXPECT_EQ(engine::F16ToF32(0x3c00), 1.0f);
  EXPECT_EQ(engine::F16ToF32(0xc000), -2.0f);
  EXPECT_EQ(engine::F16ToF32(0x7bff), 65504.0f);
  EXPECT_EQ(engine::F16ToF32(0x0001), std::ldexp(1.0f, -24));  // smallest subnormal
  EXPECT_EQ(engine::F16ToF32(0x8000), -0.0f);
  EXPECT_TRUE(std::isinf(engine::F16ToF32(0x7c00)));
  EXPECT_TRUE(std::isnan(engine::F16ToF32(0x7e00)));
}

TEST(EngineThreadPool, CoversEveryIndexOnce) {
  for (int threads : {1, 2, 5}) {
    engine::ThreadPool pool(threads);
    EXPECT_EQ(pool.num_threads(), threads);
    for (int64_t n : {1, 3, 100, 1001}) {
      std::vector<std::atomic<int>> hits(n);
      pool.ParallelFor(n, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) hits[i]++;
      });
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << threads << " " << n;
    }
  }
}

TEST(EngineThreadPool, MinChunkKeepsSmallJobsOnFewThreads) {
  engine::ThreadPool pool(4);
  std::atomic<int> calls{0};
  pool.ParallelFor(
      10, [&](int64_t, int64_t) { calls++; }, /*min_chunk=*/8);
  EXPECT_EQ(calls.load(), 1);
}

}  // namespace
}  // namespace tf::testing
