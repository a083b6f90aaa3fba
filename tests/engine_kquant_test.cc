// The K-quants (Q2_K .. Q6_K): their blocks read back exactly as ggml reads them (blocks and
// values made by ggml itself, tests/data/engine/kquant/); activations quantised by 256; the
// reference matmul is the formula over those values; every vectorised matmul_kquant agrees with
// the reference on random blocks (every bit pattern is a valid block) at sizes that exercise
// token tiles and row splits, and gives a token alone what it gives it in a batch; the
// GGUF reader and MatMul take K-quant tensors; and files that llama.cpp's own quantiser wrote
// (Q2_K, Q3_K_M, Q4_K_M mixes: every K-quant type between them) give llama.cpp's logits within
// the tolerance of their activations' quantisation, and its greedy tokens.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "engine/dtype.h"
#include "engine/formats/gguf.h"
#include "engine/generate.h"
#include "engine/kernels/kernels.h"
#include "engine/kquant_blocks.h"
#include "engine/matmul.h"
#include "engine/model.h"
#include "engine/quant.h"
#include "engine/random_weights.h"
#include "engine/thread_pool.h"
#include "engine/weights.h"
#include "engine_gguf_test_util.h"
#include "engine_test_util.h"

namespace tf::testing {
namespace {

using engine::DType;
using engine::kernels::KActivationBlock;
using engine::kernels::KernelSet;

constexpr DType kKQuants[] = {DType::kQ2_K, DType::kQ3_K, DType::kQ4_K, DType::kQ5_K, DType::kQ6_K};

std::string Lower(std::string_view name) {
  std::string out(name);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Where a K-quant super-block keeps its f16 d and (for Q2_K, Q4_K, Q5_K) dmin: bytes from the
// block's start; -1 for none.
std::pair<int, int> ScaleOffsets(DType type) {
  switch (type) {
    case DType::kQ2_K:
      return {80, 82};
    case DType::kQ3_K:
      return {108, -1};
    case DType::kQ4_K:
    case DType::kQ5_K:
      return {0, 2};
    case DType::kQ6_K:
      return {208, -1};
    default:
      return {-1, -1};
  }
}

void PutHalf(uint8_t* p, float v) {
  const uint16_t h = engine::F32ToF16(v);
  p[0] = static_cast<uint8_t>(h & 0xff);
  p[1] = static_cast<uint8_t>(h >> 8);
}

// Every super-block's d and dmin set by `scale()` (a random bit pattern there could be a NaN).
template <typename Scale>
void SetScales(DType type, std::vector<uint8_t>* blocks, const Scale& scale) {
  const auto [d, dmin] = ScaleOffsets(type);
  for (size_t at = 0; at < blocks->size(); at += engine::BlockBytes(type)) {
    PutHalf(blocks->data() + at + d, scale());
    if (dmin >= 0) PutHalf(blocks->data() + at + dmin, scale());
  }
}

// Random super-blocks: random bytes (every pattern is a valid block), d and dmin random halves
// of moderate size.
std::vector<uint8_t> RandomBlocks(DType type, int64_t rows, int64_t cols, std::mt19937& rng) {
  std::vector<uint8_t> out(rows * engine::RowBytes(type, cols));
  std::uniform_int_distribution<int> byte(0, 255);
  for (auto& b : out) b = static_cast<uint8_t>(byte(rng));
  std::uniform_real_distribution<float> scale(-0.01f, 0.01f);
  SetScales(type, &out, [&] { return scale(rng); });
  return out;
}

std::vector<KActivationBlock> Quantized(const std::vector<float>& x, int64_t n_tokens,
                                        int64_t n_in) {
  std::vector<KActivationBlock> out(n_tokens * n_in / 256);
  for (int64_t t = 0; t < n_tokens; ++t) {
    engine::kernels::QuantizeKActivations(x.data() + t * n_in, n_in, out.data() + t * n_in / 256);
  }
  return out;
}

std::vector<KActivationBlock> RandomActivations(int64_t n_tokens, int64_t n_in, std::mt19937& rng) {
  std::normal_distribution<float> dist(0.0f, 2.0f);
  std::vector<float> x(n_tokens * n_in);
  for (auto& v : x) v = dist(rng);
  return Quantized(x, n_tokens, n_in);
}

// ggml's own blocks read back bit for bit as ggml's dequantize_row_* read them.
TEST(EngineKQuant, BlocksReadBackAsGgmlReadsThem) {
  const int64_t rows = 6, cols = 512;
  for (DType type : kKQuants) {
    const std::string name = Lower(engine::DTypeName(type));
    const std::string blocks = ReadFileBytes(EngineData("kquant/" + name + ".blocks"));
    const std::vector<float> want = ReadF32File(EngineData("kquant/" + name + ".f32"));
    ASSERT_EQ(blocks.size(), rows * engine::RowBytes(type, cols)) << name;
    ASSERT_EQ(want.size(), static_cast<size_t>(rows * cols)) << name;
    std::vector<float> got(rows * cols);
    for (int64_t r = 0; r < rows; ++r) {
      engine::DequantizeRow(type, blocks.data() + r * engine::RowBytes(type, cols), cols,
                            got.data() + r * cols);
    }
    for (int64_t i = 0; i < rows * cols; ++i) {
      ASSERT_EQ(got[i], want[i]) << name << " row " << i / cols << " element " << i % cols;
    }
  }
}

// And those values are close to what ggml quantised, as each format's precision allows: the
// blocks hold the data, not noise that happens to match.
TEST(EngineKQuant, GgmlBlocksHoldTheirSourceValues) {
  const std::vector<float> source = ReadF32File(EngineData("kquant/source.f32"));
  const int64_t cols = 512;
  // The largest error over the first row (normal values of spread 0.02), per type.
  const float bound[] = {0.025f, 0.012f, 0.006f, 0.003f, 0.0015f};
  int k = 0;
  for (DType type : kKQuants) {
    const std::vector<float> got =
        ReadF32File(EngineData("kquant/" + Lower(engine::DTypeName(type)) + ".f32"));
    float worst = 0;
    for (int64_t i = 0; i < cols; ++i) worst = std::max(worst, std::fabs(got[i] - source[i]));
    EXPECT_LT(worst, bound[k++]) << engine::DTypeName(type);
    EXPECT_GT(worst, 0.0f) << engine::DTypeName(type);
    for (int64_t i = 3 * cols; i < 4 * cols; ++i) ASSERT_EQ(got[i], 0.0f);  // the row of zeros
  }
}

TEST(EngineKQuant, SizesAndNames) {
  EXPECT_EQ(engine::RowBytes(DType::kQ2_K, 512), 168u);
  EXPECT_EQ(engine::RowBytes(DType::kQ3_K, 256), 110u);
  EXPECT_EQ(engine::RowBytes(DType::kQ4_K, 4096), 16 * 144u);
  EXPECT_EQ(engine::RowBytes(DType::kQ5_K, 256), 176u);
  EXPECT_EQ(engine::RowBytes(DType::kQ6_K, 768), 3 * 210u);
  for (DType type : kKQuants) {
    EXPECT_TRUE(engine::IsBlockType(type));
    EXPECT_TRUE(engine::IsKQuant(type));
    EXPECT_EQ(engine::BlockWeights(type), 256);
  }
  EXPECT_FALSE(engine::IsKQuant(DType::kQ8_0));
  EXPECT_EQ(engine::DTypeName(DType::kQ5_K), "Q5_K");
}

// Activations by 256: one scale, the largest magnitude at +-127, ties to even, sums per 16.
TEST(EngineKQuant, ActivationSuperBlocks) {
  std::vector<float> x(512, 0.0f);
  x[3] = -2.54f;  // the largest magnitude: d = 0.02, q = -127
  x[4] = 0.05f;   // 2.5 -> 2 (ties to even)
  x[5] = 0.07f;   // 3.5 -> 4
  x[20] = 1.0f;   // 50
  // The second super-block is all zeros: d = 0, q = 0.
  auto a = Quantized(x, 1, 512);
  ASSERT_EQ(a.size(), 2u);
  EXPECT_FLOAT_EQ(a[0].d, 2.54f / 127);
  EXPECT_EQ(a[0].q[3], -127);
  EXPECT_EQ(a[0].q[4], 2);
  EXPECT_EQ(a[0].q[5], 4);
  EXPECT_EQ(a[0].q[20], 50);
  EXPECT_EQ(a[0].sums[0], -127 + 2 + 4);
  EXPECT_EQ(a[0].sums[1], 50);
  EXPECT_EQ(a[0].sums[2], 0);
  EXPECT_EQ(a[1].d, 0.0f);
  for (int i = 0; i < 256; ++i) ASSERT_EQ(a[1].q[i], 0);
}

// The reference matmul is the sum over dequantised weights times dequantised activations.
TEST(EngineKQuant, ReferenceMatmulIsTheFormula) {
  std::mt19937 rng(5);
  const int64_t n_in = 512, n_out = 9, n_tokens = 3;
  for (DType type : kKQuants) {
    auto w = RandomBlocks(type, n_out, n_in, rng);
    auto x = RandomActivations(n_tokens, n_in, rng);
    std::vector<float> y(n_tokens * n_out);
    engine::kernels::ReferenceKernels().matmul_kquant(type, w.data(), x.data(), y.data(), n_tokens,
                                                      n_in, n_out, 0, n_out);
    std::vector<float> row(n_in);
    for (int64_t r = 0; r < n_out; ++r) {
      engine::DequantizeRow(type, w.data() + r * engine::RowBytes(type, n_in), n_in, row.data());
      for (int64_t t = 0; t < n_tokens; ++t) {
        double want = 0, magnitude = 0;
        for (int64_t i = 0; i < n_in; ++i) {
          const KActivationBlock& a = x[t * n_in / 256 + i / 256];
          const double term = double{row[i]} * a.d * a.q[i % 256];
          want += term;
          magnitude += std::fabs(term);
        }
        EXPECT_NEAR(y[t * n_out + r], want, 1e-5 * (1 + magnitude))
            << engine::DTypeName(type) << " t=" << t << " r=" << r;
      }
    }
  }
}

class KQuantKernelsTest : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    std::string name = GetParam();
    if (name == "avx2") set_ = engine::kernels::Avx2Kernels();
    if (name == "avx512") set_ = engine::kernels::Avx512Kernels();
    if (set_ == nullptr) GTEST_SKIP() << "this CPU lacks " << name;
  }
  const KernelSet* set_ = nullptr;
};

TEST_P(KQuantKernelsTest, AgreeWithTheReference) {
  const KernelSet& ref = engine::kernels::ReferenceKernels();
  std::mt19937 rng(11);
  const int64_t n_out = 37;
  for (DType type : kKQuants) {
    for (int64_t n_in : {256, 512, 1280}) {
      for (int64_t n_tokens : {1, 2, 3, 4, 5, 9}) {
        const std::string what = std::string(engine::DTypeName(type)) +
                                 " n_in=" + std::to_string(n_in) +
                                 " n_tokens=" + std::to_string(n_tokens);
        auto w = RandomBlocks(type, n_out, n_in, rng);
        auto x = RandomActivations(n_tokens, n_in, rng);
        std::vector<float> want(n_tokens * n_out), got(n_tokens * n_out, -1);
        ref.matmul_kquant(type, w.data(), x.data(), want.data(), n_tokens, n_in, n_out, 0, n_out);
        // Two row ranges, as the thread pool splits them.
        set_->matmul_kquant(type, w.data(), x.data(), got.data(), n_tokens, n_in, n_out, 0, 20);
        set_->matmul_kquant(type, w.data(), x.data(), got.data(), n_tokens, n_in, n_out, 20, n_out);
        // The same integer sums per super-block; float sums in another order (by lanes).
        float scale = 0;
        for (float v : want) scale = std::max(scale, std::fabs(v));
        for (size_t i = 0; i < got.size(); ++i) {
          ASSERT_NEAR(got[i], want[i], 2e-5f * (1 + scale)) << what << " output " << i;
        }
        for (int64_t t = 0; t < n_tokens; ++t) {  // a token alone gets what it got in the batch
          std::vector<float> alone(n_out);
          set_->matmul_kquant(type, w.data(), x.data() + t * n_in / 256, alone.data(), 1, n_in,
                              n_out, 0, n_out);
          ASSERT_EQ(alone,
                    std::vector<float>(got.begin() + t * n_out, got.begin() + (t + 1) * n_out))
              << what << " token " << t;
        }
      }
    }
  }
}

// Weights at the ends of each type's range (all bits set, and all clear) against activations of
// +-127: the integer sums stay exact.
TEST_P(KQuantKernelsTest, ExtremeBlocks) {
  const KernelSet& ref = engine::kernels::ReferenceKernels();
  const int64_t n_in = 512, n_out = 4;
  std::vector<float> values(n_in);
  for (int64_t i = 0; i < n_in; ++i) values[i] = (i / 3) % 2 == 0 ? 1.0f : -1.0f;  // q = +-127
  const std::vector<KActivationBlock> x = Quantized(values, 1, n_in);
  for (DType type : kKQuants) {
    for (uint8_t fill : {uint8_t{0xff}, uint8_t{0x00}, uint8_t{0x55}, uint8_t{0xaa}}) {
      std::vector<uint8_t> w(n_out * engine::RowBytes(type, n_in), fill);
      SetScales(type, &w, [] { return 0.25f; });
      std::vector<float> want(n_out), got(n_out);
      ref.matmul_kquant(type, w.data(), x.data(), want.data(), 1, n_in, n_out, 0, n_out);
      set_->matmul_kquant(type, w.data(), x.data(), got.data(), 1, n_in, n_out, 0, n_out);
      for (int64_t r = 0; r < n_out; ++r) {
        EXPECT_NEAR(got[r], want[r], 1e-5f * (1 + std::fabs(want[r])))
            << engine::DTypeName(type) << " fill " << int{fill};
      }
    }
  }
}

TEST_P(KQuantKernelsTest, QuantizeKActivationsEqualsThePlainVersion) {
  std::mt19937 rng(17);
  std::normal_distribution<float> dist(0.0f, 3.0f);
  const int64_t n = 1024;
  std::vector<float> x(n);
  for (auto& v : x) v = dist(rng);
  std::fill(x.begin() + 256, x.begin() + 512, 0.0f);  // a super-block of zeros
  x[600] = 1e-30f;                                    // a tiny largest magnitude nearby
  x[700] = -40.0f;
  std::vector<KActivationBlock> want(n / 256), got(n / 256);
  engine::kernels::QuantizeKActivations(x.data(), n, want.data());
  set_->quantize_k_activations(x.data(), n, got.data());
  for (int64_t b = 0; b < n / 256; ++b) {
    EXPECT_EQ(got[b].d, want[b].d) << b;
    EXPECT_EQ(std::memcmp(got[b].q, want[b].q, 256), 0) << b;
    EXPECT_EQ(std::memcmp(got[b].sums, want[b].sums, sizeof want[b].sums), 0) << b;
  }
}

INSTANTIATE_TEST_SUITE_P(Sets, KQuantKernelsTest, ::testing::Values("avx2", "avx512"));

// MatMul picks the K-quant kernel for such a matrix, and gives what the reference gives.
TEST(EngineKQuant, MatMulTakesKQuantMatrices) {
  std::mt19937 rng(3);
  const int64_t n_in = 768, n_out = 100, n_tokens = 2;
  for (DType type : kKQuants) {
    auto w = RandomBlocks(type, n_out, n_in, rng);
    engine::WeightMatrix m;
    m.type = type;
    m.rows = n_out;
    m.cols = n_in;
    m.data = w.data();
    std::normal_distribution<float> dist(0.0f, 1.0f);
    std::vector<float> x(n_tokens * n_in);
    for (auto& v : x) v = dist(rng);
    std::vector<float> y(n_tokens * n_out), want(n_tokens * n_out);
    engine::ThreadPool pool(2);
    engine::MatMul(engine::kernels::ReferenceKernels(), pool, m, x.data(), y.data(), n_tokens);
    const auto xq = Quantized(x, n_tokens, n_in);
    engine::kernels::ReferenceKernels().matmul_kquant(type, w.data(), xq.data(), want.data(),
                                                      n_tokens, n_in, n_out, 0, n_out);
    EXPECT_EQ(y, want) << engine::DTypeName(type);
  }
}

// The GGUF reader takes K-quant tensors (ggml types 10 to 14), and refuses one whose rows are
// not whole super-blocks.
TEST(EngineKQuant, GgufReaderTakesKQuantTensors) {
  const std::string dir = ::testing::TempDir();
  const std::string blocks = ReadFileBytes(EngineData("kquant/q4_k.blocks"));
  GgufBuilder ok;
  ok.String("general.architecture", "llama").Tensor("w", {512, 6}, 12, blocks);
  WriteFileBytes(dir + "/kquant.gguf", ok.Bytes());
  auto file = engine::GgufFile::Open(dir + "/kquant.gguf");
  ASSERT_TRUE(file.ok()) << file.status().message();
  const engine::GgufTensor* t = (*file)->FindTensor("w");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->type, engine::GgmlType::kQ4_K);
  EXPECT_EQ(std::memcmp(t->data, blocks.data(), blocks.size()), 0);

  GgufBuilder bad;
  bad.String("general.architecture", "llama").Tensor("w", {128, 2}, 14, std::string(210, '\0'));
  WriteFileBytes(dir + "/bad.gguf", bad.Bytes());
  auto refused = engine::GgufFile::Open(dir + "/bad.gguf");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("Q6_K blocks of 256"), std::string::npos)
      << refused.status().message();
}

// llama.cpp's logits for the files of tests/data/engine/kquant/ (llama_logits.mjs).
class LlamaCppKQuantFileTest : public ::testing::TestWithParam<const char*> {
 protected:
  static std::string Path(const std::string& name) {
    return EngineData("kquant/kquant-llama." + name + ".gguf");
  }
  nlohmann::json Reference() const {
    auto all = nlohmann::json::parse(ReadFileBytes(EngineData("kquant/reference.json")));
    return all["files"]["kquant-llama." + std::string(GetParam()) + ".gguf"];
  }
};

TEST_P(LlamaCppKQuantFileTest, LoadsOnItsKQuantBlocks) {
  auto model = engine::Model::Load(Path(GetParam()), {});
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  const std::string summary = engine::MatrixTypesSummary((*model)->weights());
  // The matrices stay in their K-quant types (a Q4_K_M file: Q4_K and Q6_K).
  EXPECT_NE(summary.find("_K"), std::string::npos) << summary;
  EXPECT_EQ(summary.find("F32"), std::string::npos) << summary;
}

// Against llama.cpp and against the same model computed exactly (its weights dequantised to
// float32, as ggml reads them, with float32 activations). Both engines quantise the activations
// of a K-quant matmul to 8 bits per 256 (llama.cpp's Q8_K; the engine rounds to the largest
// magnitude's +-127 where llama.cpp keeps its sign at -127), and on this model (weights scaled
// up so that logits spread ~6) that rounding alone moves logits by a few tenths. So the engine
// must be about as close to the exact logits as llama.cpp is, within llama.cpp's own distance of
// them from each other, and choose llama.cpp's greedy tokens wherever the exact model decides
// them by more than both engines' distance from it. A weight read wrongly moves logits by whole
// units.
TEST_P(LlamaCppKQuantFileTest, LogitsAndGreedyTokensAreLlamaCpps) {
  auto model = engine::Model::Load(Path(GetParam()), {});
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  auto exact = engine::Model::FromWeights((*model)->config(),
                                          engine::DequantizedWeights((*model)->weights()), {});
  ASSERT_TRUE(exact.ok()) << exact.status().ToString();
  const int64_t vocab = (*model)->config().vocab_size;
  for (const auto& prompt : Reference()) {
    const auto ids = prompt["prompt_ids"].get<std::vector<int32_t>>();
    const std::vector<float> llama_cpp =
        ReadF32File(EngineData("kquant/" + prompt["logits_file"].get<std::string>()));
    auto logits = [&](engine::Model& m) {
      auto cache = m.NewCache(ids.size());
      std::vector<float> out;
      EXPECT_TRUE(m.Forward(ids, cache.get(), /*all_positions=*/true, &out).ok());
      return out;
    };
    const std::vector<float> ours = logits(**model), truth = logits(**exact);
    ASSERT_EQ(ours.size(), llama_cpp.size());
    ASSERT_EQ(truth.size(), llama_cpp.size());
    auto rms = [](const std::vector<float>& a, const std::vector<float>& b) {
      double sum = 0;
      for (size_t i = 0; i < a.size(); ++i) sum += double{a[i] - b[i]} * (a[i] - b[i]);
      return std::sqrt(sum / static_cast<double>(a.size()));
    };
    auto worst = [](const std::vector<float>& a, const std::vector<float>& b) {
      float m = 0;
      for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(a[i] - b[i]));
      return m;
    };
    const float noise = worst(llama_cpp, truth);  // llama.cpp's own distance from the exact
    EXPECT_GT(noise, 0.0f);
    EXPECT_LT(noise, 1.0f) << GetParam() << ": llama.cpp's logits are not this model's";
    EXPECT_LE(rms(ours, truth), 1.25 * rms(llama_cpp, truth)) << GetParam();
    EXPECT_LE(worst(ours, truth), 1.25f * noise) << GetParam();
    EXPECT_LE(worst(ours, llama_cpp), 2.0f * noise) << GetParam();

    // Greedy. At each of llama.cpp's steps (its logits recorded), the step is decided if the
    // exact model's top two logits are further apart than the engine and llama.cpp are from it
    // there: then the engine must choose llama.cpp's token. Its own greedy run must follow
    // llama.cpp's up to the first step that is not decided.
    const auto want = prompt["greedy"].get<std::vector<int32_t>>();
    const std::vector<float> llama_steps =
        ReadF32File(EngineData("kquant/" + prompt["greedy_logits_file"].get<std::string>()));
    ASSERT_EQ(llama_steps.size(), want.size() * vocab);
    std::vector<int32_t> forced = ids;  // the prompt and llama.cpp's tokens but the last
    forced.insert(forced.end(), want.begin(), want.end() - 1);
    auto forced_logits = [&](engine::Model& m) {
      auto cache = m.NewCache(forced.size());
      std::vector<float> out;
      EXPECT_TRUE(m.Forward(forced, cache.get(), /*all_positions=*/true, &out).ok());
      return out;
    };
    const std::vector<float> ours_forced = forced_logits(**model);
    const std::vector<float> truth_forced = forced_logits(**exact);
    size_t decided = 0, first_undecided = want.size();
    for (size_t step = 0; step < want.size(); ++step) {
      const size_t at = (ids.size() - 1 + step) * vocab;
      const float* o = ours_forced.data() + at;
      const float* t = truth_forced.data() + at;
      const float* l = llama_steps.data() + step * vocab;
      float ours_err = 0, llama_err = 0;
      for (int64_t i = 0; i < vocab; ++i) {
        ours_err = std::max(ours_err, std::fabs(o[i] - t[i]));
        llama_err = std::max(llama_err, std::fabs(l[i] - t[i]));
      }
      std::vector<float> top(t, t + vocab);
      std::partial_sort(top.begin(), top.begin() + 2, top.end(), std::greater<>());
      if (top[0] - top[1] <= ours_err + llama_err) {
        first_undecided = std::min(first_undecided, step);
        continue;
      }
      ++decided;
      EXPECT_EQ(std::max_element(o, o + vocab) - o, want[step]) << GetParam() << " step " << step;
    }
    EXPECT_GE(decided, want.size() / 2) << GetParam() << ": too few steps decided to compare";
    engine::GenerateOptions options;
    options.max_new_tokens = static_cast<int>(want.size());
    options.stop_at_eos = false;
    std::vector<int32_t> got;
    ASSERT_TRUE(engine::GenerateGreedy(**model, ids, options, nullptr, &got).ok());
    ASSERT_EQ(got.size(), want.size());
    EXPECT_EQ(std::vector<int32_t>(got.begin(), got.begin() + first_undecided),
              std::vector<int32_t>(want.begin(), want.begin() + first_undecided))
        << GetParam() << ", the first " << first_undecided << " tokens";
  }
}

INSTANTIATE_TEST_SUITE_P(Files, LlamaCppKQuantFileTest,
                         ::testing::Values("q2_k", "q3_k_m", "q4_k_m"));

}  // namespace
}  // namespace tf::testing
