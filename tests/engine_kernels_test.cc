// Every vectorised kernel against the plain reference on random data, at sizes that exercise
// the vector bodies and the scalar tails; and the thread pool.
#include <gtest/gtest.h>

#include <algorithm>
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

// Each token's outputs are the same bits whatever else is in the batch and whatever row range
// a thread got: what batched results equal to one-at-a-time results rest on.
TEST_P(KernelsTest, MatmulRowsDoNotDependOnTheBatch) {
  for (int64_t n_in : {7, 64, 176}) {
    const int64_t n_out = 29, n_tokens = 11;
    auto w = Random(n_out * n_in, rng_), x = Random(n_tokens * n_in, rng_);
    std::vector<float> batched(n_tokens * n_out);
    set_->matmul_rows(w.data(), x.data(), batched.data(), n_tokens, n_in, n_out, 0, n_out);
    for (int64_t t = 0; t < n_tokens; ++t) {
      std::vector<float> alone(n_out);
      // One token, its rows in three uneven ranges.
      set_->matmul_rows(w.data(), x.data() + t * n_in, alone.data(), 1, n_in, n_out, 0, 5);
      set_->matmul_rows(w.data(), x.data() + t * n_in, alone.data(), 1, n_in, n_out, 5, 6);
      set_->matmul_rows(w.data(), x.data() + t * n_in, alone.data(), 1, n_in, n_out, 6, n_out);
      std::vector<float> row(batched.begin() + t * n_out, batched.begin() + (t + 1) * n_out);
      EXPECT_EQ(alone, row) << "n_in=" << n_in << " token " << t;
      // The same token in a batch of two and of three.
      for (int64_t m : {2, 3}) {
        if (t + m > n_tokens) continue;
        std::vector<float> some(m * n_out);
        set_->matmul_rows(w.data(), x.data() + t * n_in, some.data(), m, n_in, n_out, 0, n_out);
        EXPECT_EQ(std::vector<float>(some.begin(), some.begin() + n_out), row)
            << "n_in=" << n_in << " token " << t << " in a batch of " << m;
      }
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

// Keys and values in blocks of block_size rows, placed out of order in a larger pool: the
// vectorised kernel agrees with the reference, and both agree with attention over the same
// rows laid out contiguously (block table 0, 1, 2, ...).
TEST_P(KernelsTest, AttentionHeadOverBlocks) {
  for (int64_t head_dim : {4, 16, 20, 128}) {
    for (int64_t n_ctx : {1, 7, 16, 50}) {
      for (int64_t block_size : {1, 16}) {
        const int64_t stride = 3 * head_dim;  // rows hold other heads too
        const int64_t n_blocks = (n_ctx + block_size - 1) / block_size;
        const int64_t pool_blocks = 2 * n_blocks + 1;
        auto q = Random(head_dim, rng_), k = Random(pool_blocks * block_size * stride, rng_),
             v = Random(pool_blocks * block_size * stride, rng_);
        std::vector<int32_t> table(n_blocks), identity(n_blocks);
        for (int64_t b = 0; b < n_blocks; ++b) {
          table[b] = static_cast<int32_t>(pool_blocks - 1 - 2 * b);  // backwards, with gaps
          identity[b] = static_cast<int32_t>(b);
        }
        // The same rows, contiguous.
        std::vector<float> kc(n_blocks * block_size * stride), vc(kc.size());
        for (int64_t b = 0; b < n_blocks; ++b) {
          std::copy_n(k.begin() + table[b] * block_size * stride, block_size * stride,
                      kc.begin() + b * block_size * stride);
          std::copy_n(v.begin() + table[b] * block_size * stride, block_size * stride,
                      vc.begin() + b * block_size * stride);
        }
        std::vector<float> scratch(n_ctx), want(head_dim), got(head_dim), contiguous(head_dim);
        float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
        ref().attention_head(q.data(), k.data() + head_dim, v.data() + head_dim, table.data(),
                             block_size, n_ctx, stride, head_dim, scale, scratch.data(),
                             want.data());
        set_->attention_head(q.data(), k.data() + head_dim, v.data() + head_dim, table.data(),
                             block_size, n_ctx, stride, head_dim, scale, scratch.data(),
                             got.data());
        set_->attention_head(q.data(), kc.data() + head_dim, vc.data() + head_dim, identity.data(),
                             block_size, n_ctx, stride, head_dim, scale, scratch.data(),
                             contiguous.data());
        EXPECT_LT(MaxErr(got, want), kTol)
            << "head_dim=" << head_dim << " n_ctx=" << n_ctx << " block_size=" << block_size;
        EXPECT_EQ(got, contiguous) << "head_dim=" << head_dim << " n_ctx=" << n_ctx;
      }
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

// Many calls back to back, with threads that poll for the next call and with threads that
// sleep at once (spin_polls 0), so both ways of waiting hand every range over exactly once.
TEST(EngineThreadPool, BackToBackCallsWithAndWithoutPolling) {
  for (int spin_polls : {0, engine::ThreadPool::kDefaultSpinPolls}) {
    for (int threads : {2, 3}) {
      engine::ThreadPool pool(threads, spin_polls);
      for (int call = 0; call < 2000; ++call) {
        const int64_t n = 1 + call % 7;  // some calls need fewer threads than the pool has
        std::vector<std::atomic<int>> hits(n);
        pool.ParallelFor(n, [&](int64_t b, int64_t e) {
          for (int64_t i = b; i < e; ++i) hits[i]++;
        });
        for (int64_t i = 0; i < n; ++i) {
          ASSERT_EQ(hits[i].load(), 1) << spin_polls << " " << threads << " " << call;
        }
      }
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
