// GGUF files of the fixture checkpoints, written by llama.cpp's gguf-py
// (tests/data/engine/gguf/make_gguf.py), against the safetensors checkpoints and transformers'
// logits: the same model whichever file it comes from.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "engine/formats/gguf.h"
#include "engine/formats/gguf_model.h"
#include "engine/generate.h"
#include "engine/model.h"
#include "engine/random_weights.h"
#include "engine/weights.h"
#include "engine_test_util.h"

namespace tf::testing {
namespace {

using engine::Model;
using ::testing::HasSubstr;

std::string GgufPath(const std::string& name) { return EngineData("gguf/" + name + ".gguf"); }

std::unique_ptr<Model> LoadOk(const std::string& path) {
  auto model = Model::Load(path, {});
  EXPECT_TRUE(model.ok()) << model.status().ToString();
  return model.ok() ? std::move(model).value() : nullptr;
}

std::vector<float> AllLogits(Model& model, const std::vector<int32_t>& prompt) {
  auto cache = model.NewCache(prompt.size());
  std::vector<float> logits;
  EXPECT_TRUE(model.Forward(prompt, cache.get(), /*all_positions=*/true, &logits).ok());
  return logits;
}

nlohmann::json Reference(const std::string& checkpoint) {
  return nlohmann::json::parse(ReadFileBytes(EngineData(checkpoint + "/reference.json")));
}

float MaxDiff(const std::vector<float>& a, const std::vector<float>& b) {
  EXPECT_EQ(a.size(), b.size());
  float m = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) m = std::max(m, std::fabs(a[i] - b[i]));
  return m;
}

std::vector<int32_t> Greedy(Model& model, const std::vector<int32_t>& prompt) {
  engine::GenerateOptions options;
  options.max_new_tokens = 24;
  options.stop_at_eos = false;
  std::vector<int32_t> out;
  EXPECT_TRUE(engine::GenerateGreedy(model, prompt, options, nullptr, &out).ok());
  return out;
}

// How many steps of the greedy `continuation` of `prompt` the float32 model decides by more
// than `margin` (its top two logits that far apart): a model within that tolerance of it must
// choose the same tokens for those steps.
size_t DecidedSteps(Model& model, const std::vector<int32_t>& prompt,
                    const std::vector<int32_t>& continuation, float margin) {
  auto cache = model.NewCache(prompt.size() + continuation.size());
  std::vector<int32_t> next = prompt;
  std::vector<float> logits;
  for (size_t step = 0; step < continuation.size(); ++step) {
    EXPECT_TRUE(model.Forward(next, cache.get(), /*all_positions=*/false, &logits).ok());
    std::partial_sort(logits.begin(), logits.begin() + 2, logits.end(), std::greater<>());
    if (logits[0] - logits[1] <= margin) return step;
    next = {continuation[step]};
  }
  return continuation.size();
}

class GgufCheckpointTest : public ::testing::TestWithParam<const char*> {};

// The metadata gives the config.json's architecture.
TEST_P(GgufCheckpointTest, ConfigMatchesConfigJson) {
  std::string name = GetParam();
  auto want = engine::LoadModelConfig(EngineData(name + "/config.json"));
  ASSERT_TRUE(want.ok());
  auto file = engine::GgufFile::Open(GgufPath(name + ".f32"));
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  auto got = engine::GgufModelConfig(**file);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->model_type, want->model_type);
  EXPECT_EQ(got->vocab_size, want->vocab_size);
  EXPECT_EQ(got->hidden_size, want->hidden_size);
  EXPECT_EQ(got->intermediate_size, want->intermediate_size);
  EXPECT_EQ(got->num_layers, want->num_layers);
  EXPECT_EQ(got->num_heads, want->num_heads);
  EXPECT_EQ(got->num_kv_heads, want->num_kv_heads);
  EXPECT_EQ(got->head_dim, want->head_dim);
  EXPECT_EQ(got->max_position_embeddings, want->max_position_embeddings);
  EXPECT_FLOAT_EQ(got->rms_norm_eps, want->rms_norm_eps);
  EXPECT_DOUBLE_EQ(got->rope.theta, want->rope.theta);
  EXPECT_EQ(got->tie_word_embeddings, want->tie_word_embeddings);
  EXPECT_EQ(got->qkv_bias, want->qkv_bias);
  EXPECT_EQ(got->o_bias, want->o_bias);
  EXPECT_EQ(got->bos_token_id, want->bos_token_id);
  EXPECT_EQ(got->eos_token_ids, want->eos_token_ids);
}

// F32: the weights are the checkpoint's, so the logits are bit for bit those of the safetensors
// model (the llama q/k rows put back from the converter's rotary order), and within the model
// test's 2e-5 of transformers'; greedy continuations identical.
TEST_P(GgufCheckpointTest, F32EqualsSafetensorsModel) {
  std::string name = GetParam();
  auto gguf = LoadOk(GgufPath(name + ".f32"));
  auto st = LoadOk(EngineData(name));
  ASSERT_NE(gguf, nullptr);
  ASSERT_NE(st, nullptr);
  for (const auto& ref : Reference(name)) {
    auto prompt = ref["prompt_ids"].get<std::vector<int32_t>>();
    std::vector<float> logits = AllLogits(*gguf, prompt);
    EXPECT_EQ(logits, AllLogits(*st, prompt));
    auto want = ReadF32File(EngineData(name + "/" + ref["logits_file"].get<std::string>()));
    EXPECT_LT(MaxDiff(logits, want), 2e-5f);
    std::vector<int32_t> without_bos(prompt.begin() + 1, prompt.end());
    EXPECT_EQ(Greedy(*gguf, without_bos), ref["greedy_24"].get<std::vector<int32_t>>());
  }
}

// F16 (2-D weights in F16, norms and biases F32, as the converter writes them): logits within
// 0.015 of transformers' float32 ones (measured up to 0.0085 on logits of magnitude up to 5.6).
// Where the float32 logits' top two are more than 0.03 apart (twice the tolerance, a gap the F16
// rounding cannot close) the argmax must be the same, and the greedy continuation must equal
// transformers' for as many steps as the float32 model decides by that margin. (In full, 7 of
// the 8 continuations are identical; llama-gqa's third leaves transformers' at step 21.)
TEST_P(GgufCheckpointTest, F16WithinToleranceOfFloat32) {
  std::string name = GetParam();
  auto gguf = LoadOk(GgufPath(name + ".f16"));
  auto f32 = LoadOk(GgufPath(name + ".f32"));
  ASSERT_NE(gguf, nullptr);
  ASSERT_NE(f32, nullptr);
  const int64_t vocab = gguf->config().vocab_size;
  for (const auto& ref : Reference(name)) {
    auto prompt = ref["prompt_ids"].get<std::vector<int32_t>>();
    std::vector<float> logits = AllLogits(*gguf, prompt);
    auto want = ReadF32File(EngineData(name + "/" + ref["logits_file"].get<std::string>()));
    float diff = MaxDiff(logits, want);
    EXPECT_LT(diff, 0.015f);
    std::cout << name << ".f16: prompt of " << prompt.size() << " tokens, max |diff| " << diff
              << "\n";
    for (size_t t = 0; t < prompt.size(); ++t) {
      std::vector<float> row(want.begin() + t * vocab, want.begin() + (t + 1) * vocab);
      std::vector<float> sorted = row;
      std::partial_sort(sorted.begin(), sorted.begin() + 2, sorted.end(), std::greater<>());
      if (sorted[0] - sorted[1] <= 0.03f) continue;
      EXPECT_EQ(gguf->kernels().argmax(logits.data() + t * vocab, vocab),
                ref["argmax_per_position"][t].get<int64_t>())
          << "position " << t;
    }
    std::vector<int32_t> without_bos(prompt.begin() + 1, prompt.end());
    auto want_greedy = ref["greedy_24"].get<std::vector<int32_t>>();
    size_t decided = DecidedSteps(*f32, without_bos, want_greedy, 0.03f);
    std::vector<int32_t> got = Greedy(*gguf, without_bos);
    got.resize(decided);
    want_greedy.resize(decided);
    EXPECT_EQ(got, want_greedy) << "the first " << decided << " greedy tokens";
  }
}

float Range(const std::vector<float>& v) {
  auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  return *hi - *lo;
}

// Q8_0 and Q4_0 files: the matrices keep the file's blocks (ffn_down, whose rows of 176 are not
// whole blocks, stays the F16 the converter kept) and hold what gguf-py reads back from them:
// blk.0.attn_q.weight read row by row equals gguf-py's dequantisation (make_gguf.py wrote it in
// the file's order) with llama's rotary rows put back, bit for bit. The logits equal those of
// the same model with every matrix dequantised to float32 within 4% of the logit range, the
// bound engine_quant_model_test uses (the quantised matmuls round activations to 8 bits;
// measured 1.2-1.5%); a wrong scale, nibble order or row order is off by the whole range.
TEST_P(GgufCheckpointTest, QuantisedFilesComputeOnTheirBlocks) {
  std::string name = GetParam();
  for (auto [suffix, type] :
       {std::pair{"q8_0", engine::DType::kQ8_0}, std::pair{"q4_0", engine::DType::kQ4_0}}) {
    std::string stem = name + "." + suffix;
    auto model = LoadOk(GgufPath(stem));
    ASSERT_NE(model, nullptr);
    const engine::ModelWeights& w = model->weights();
    const engine::LayerWeights& l0 = w.layers[0];
    for (const auto* m : {&l0.wq, &l0.wk, &l0.wv, &l0.wo, &l0.w_gate, &l0.w_up, &w.embed}) {
      EXPECT_EQ(m->type, type) << stem << " " << m->name;
    }
    EXPECT_EQ(l0.w_down.type, engine::DType::kF16) << stem;

    std::vector<float> want = ReadF32File(EngineData("gguf/" + stem + ".blk.0.attn_q.weight.f32"));
    ASSERT_EQ(want.size(), static_cast<size_t>(l0.wq.rows * l0.wq.cols));
    const engine::ModelConfig& c = model->config();
    if (c.model_type == "llama") {
      std::vector<float> rows(want.size());
      engine::UnpermuteRotaryRows(reinterpret_cast<const uint8_t*>(want.data()),
                                  l0.wq.cols * sizeof(float), c.num_heads, c.head_dim,
                                  reinterpret_cast<uint8_t*>(rows.data()));
      want = rows;
    }
    std::vector<float> held(want.size());  // the matrix as the kernels read it
    for (int64_t r = 0; r < l0.wq.rows; ++r) {
      engine::ReadRow(l0.wq, r, held.data() + r * l0.wq.cols);
    }
    EXPECT_EQ(held, want) << stem;

    auto dequantised = Model::FromWeights(c, engine::DequantizedWeights(w), {});
    ASSERT_TRUE(dequantised.ok()) << dequantised.status().ToString();
    auto prompt = Reference(name)[1]["prompt_ids"].get<std::vector<int32_t>>();
    std::vector<float> got = AllLogits(*model, prompt), f32 = AllLogits(**dequantised, prompt);
    float diff = MaxDiff(got, f32), range = Range(f32);
    EXPECT_LT(diff, 0.04f * range) << stem;
    EXPECT_GT(diff, 0.0f) << stem;  // the quantised kernels ran
    std::cout << stem << ": max |logit diff| from its weights in float32 " << diff
              << " of a range of " << range << "\n";
  }
}

// At load what the matmuls read of the layers' matrices and the LM head moves out of the mapped
// file into memory of the model's own (PlaceMatrices: copied, or for Q8_0 repacked where the
// kernels have a packed matmul); the embedding, read a row per token, stays in the file.
TEST_P(GgufCheckpointTest, MatricesMoveOutOfTheFile) {
  std::string name = GetParam();
  for (std::string suffix : {"f32", "f16", "q8_0"}) {
    auto model = LoadOk(GgufPath(name + "." + suffix));
    ASSERT_NE(model, nullptr);
    const engine::ModelWeights& w = model->weights();
    ASSERT_EQ(w.mappings.size(), 1u);
    const engine::MappedFile& file = *w.mappings[0];
    auto in_file = [&](const engine::WeightMatrix& m) {
      return file.Contains(m.data, static_cast<size_t>(m.rows) * m.row_bytes());
    };
    EXPECT_TRUE(in_file(w.embed)) << suffix;
    const engine::LayerWeights& l0 = w.layers[0];
    for (const auto* m :
         {&l0.wq, &l0.wk, &l0.wv, &l0.wo, &l0.w_gate, &l0.w_up, &l0.w_down, &w.lm_head}) {
      if (m->data == w.embed.data) continue;  // a tied LM head: the embedding's rows
      // What the matmuls read: the packed copy where there is one, else the rows.
      if (m->packed != nullptr) {
        EXPECT_FALSE(file.Contains(m->packed, 1)) << suffix << " " << m->name;
      } else {
        EXPECT_FALSE(in_file(*m)) << suffix << " " << m->name;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, GgufCheckpointTest,
                         ::testing::Values("llama-gqa", "qwen2-bias"));

// The converter's rotary reordering, undone: rows [a0 a1 | b0 b1] of a head of 4 were stored as
// [a0 b0 a1 b1].
TEST(EngineGgufModel, UnpermuteRotaryRows) {
  std::vector<uint8_t> stored = {10, 20, 11, 21, 30, 40, 31, 41};  // 2 heads of 4 one-byte rows
  std::vector<uint8_t> out(stored.size());
  engine::UnpermuteRotaryRows(stored.data(), 1, 2, 4, out.data());
  EXPECT_EQ(out, (std::vector<uint8_t>{10, 11, 20, 21, 30, 31, 40, 41}));
}

}  // namespace
}  // namespace tf::testing
