// Checkpoint layouts the fixtures do not cover directly, made from the llama-gqa fixture: weights
// sharded over two files with an index, and the weights stored as F16 (computed as F16); where
// the matrices of a safetensors checkpoint live once loaded.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "engine/formats/safetensors.h"
#include "engine/model.h"
#include "engine/quantize_weights.h"
#include "engine/random_weights.h"
#include "engine_test_util.h"
#include "store_test_env.h"

namespace tf::testing {
namespace {

using engine::Model;

struct Tensor {
  std::string name, dtype;
  std::vector<int64_t> shape;
  std::string bytes;
};

void WriteSafetensors(const std::string& path, const std::vector<Tensor>& tensors) {
  nlohmann::json header = nlohmann::json::object();
  std::string data;
  for (const Tensor& t : tensors) {
    header[t.name] = {{"dtype", t.dtype},
                      {"shape", t.shape},
                      {"data_offsets", {data.size(), data.size() + t.bytes.size()}}};
    data += t.bytes;
  }
  WriteFileBytes(path, SafetensorsBytes(header.dump(), data));
}

// float32 -> IEEE half, rounding to nearest even (normal range only; these weights are small).
uint16_t ToF16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  uint32_t sign = (u >> 16) & 0x8000;
  int32_t exponent = static_cast<int32_t>((u >> 23) & 0xff) - 127 + 15;
  uint32_t mantissa = u & 0x7fffff;
  if (exponent <= 0) return static_cast<uint16_t>(sign);  // flush tiny values to zero
  uint32_t half = sign | (static_cast<uint32_t>(exponent) << 10) | (mantissa >> 13);
  uint32_t rest = mantissa & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (half & 1))) ++half;
  return static_cast<uint16_t>(half);
}

std::vector<Tensor> FixtureTensors() {
  auto file = engine::SafetensorsFile::Open(EngineData("llama-gqa/model.safetensors"));
  EXPECT_TRUE(file.ok());
  std::vector<Tensor> out;
  for (const auto& t : (*file)->tensors()) {
    out.push_back(
        {t.name, "F32", t.shape, std::string(reinterpret_cast<const char*>(t.data), t.num_bytes)});
  }
  return out;
}

std::vector<float> PromptLogits(Model& model) {
  auto ref = nlohmann::json::parse(ReadFileBytes(EngineData("llama-gqa/reference.json")));
  auto prompt = ref[1]["prompt_ids"].get<std::vector<int32_t>>();
  auto cache = model.NewCache(prompt.size());
  std::vector<float> logits;
  EXPECT_TRUE(model.Forward(prompt, cache.get(), /*all_positions=*/true, &logits).ok());
  return logits;
}

bool InAMapping(const engine::ModelWeights& w, const void* data, size_t bytes) {
  for (const engine::MappedFile* file : w.mappings) {
    if (file->Contains(data, bytes)) return true;
  }
  return false;
}

// What the matmuls read of the layers' matrices and the LM head (the packed copy where there is
// one, else the rows) lies in none of the checkpoint's mapped files, unless the LM head is the
// embedding's rows; the embedding itself lies in a file unless it was quantised.
void ExpectMatricesOutOfTheFiles(const engine::ModelWeights& w, const std::string& label) {
  ASSERT_FALSE(w.mappings.empty()) << label;
  auto bytes = [](const engine::WeightMatrix& m) {
    return static_cast<size_t>(m.rows) * m.row_bytes();
  };
  EXPECT_EQ(InAMapping(w, w.embed.data, bytes(w.embed)), !engine::IsBlockType(w.embed.type))
      << label;
  std::vector<const engine::WeightMatrix*> matrices = {&w.lm_head};
  for (const auto& l : w.layers) {
    for (const auto* m : {&l.wq, &l.wk, &l.wv, &l.wo, &l.w_gate, &l.w_up, &l.w_down}) {
      matrices.push_back(m);
    }
  }
  for (const engine::WeightMatrix* m : matrices) {
    if (m->data == w.embed.data) continue;  // a tied LM head
    if (m->packed != nullptr) {
      EXPECT_FALSE(InAMapping(w, m->packed, 1)) << label << " " << m->name;
    } else {
      EXPECT_FALSE(InAMapping(w, m->data, bytes(*m))) << label << " " << m->name;
    }
  }
}

// A safetensors checkpoint's matrices, like a GGUF file's, move at load out of the mapped file
// into the model's own buffer (PlaceMatrices), as they are or quantised: float32 (llama-gqa),
// BF16, and a tied LM head (qwen2-bias).
TEST(EngineSafetensorsCheckpoint, MatricesMoveOutOfTheFile) {
  for (std::string name : {"llama-gqa", "llama-gqa-bf16", "qwen2-bias"}) {
    for (engine::Quantize q : {engine::Quantize::kNone, engine::Quantize::kQ8_0}) {
      engine::ModelOptions options;
      options.quantize = q;
      auto model = Model::Load(EngineData(name), options);
      ASSERT_TRUE(model.ok()) << model.status().ToString();
      const engine::ModelWeights& w = (*model)->weights();
      const std::string label = name + " " + std::string(engine::QuantizeName(q));
      EXPECT_EQ(w.mappings.size(), 1u) << label;
      ExpectMatricesOutOfTheFiles(w, label);
      // The rows as the file holds them are not the ones read: a changed copy would show here.
      if (q == engine::Quantize::kNone) {
        auto file = engine::SafetensorsFile::Open(EngineData(name + "/model.safetensors"));
        ASSERT_TRUE(file.ok());
        const engine::TensorView* wq = (*file)->Find("model.layers.0.self_attn.q_proj.weight");
        ASSERT_NE(wq, nullptr);
        const engine::WeightMatrix& m = w.layers[0].wq;
        ASSERT_EQ(static_cast<size_t>(m.rows) * m.row_bytes(), wq->num_bytes) << label;
        EXPECT_EQ(std::memcmp(m.data, wq->data, wq->num_bytes), 0) << label;
      }
    }
  }
}

class CheckpointLayoutTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::filesystem::copy_file(EngineData("llama-gqa/config.json"), dir_.path() / "config.json");
  }
  std::unique_ptr<Model> Load() {
    auto model = Model::Load(dir_.path().string(), {});
    EXPECT_TRUE(model.ok()) << model.status().ToString();
    return model.ok() ? std::move(model).value() : nullptr;
  }
  TempDir dir_;
};

TEST_F(CheckpointLayoutTest, ShardsListedByIndex) {
  std::vector<Tensor> all = FixtureTensors();
  std::vector<Tensor> first(all.begin(), all.begin() + all.size() / 2);
  std::vector<Tensor> second(all.begin() + all.size() / 2, all.end());
  WriteSafetensors((dir_.path() / "model-00001-of-00002.safetensors").string(), first);
  WriteSafetensors((dir_.path() / "model-00002-of-00002.safetensors").string(), second);
  nlohmann::json index = {{"metadata", nlohmann::json::object()},
                          {"weight_map", nlohmann::json::object()}};
  for (const auto& t : first) index["weight_map"][t.name] = "model-00001-of-00002.safetensors";
  for (const auto& t : second) index["weight_map"][t.name] = "model-00002-of-00002.safetensors";
  WriteFileBytes((dir_.path() / "model.safetensors.index.json").string(), index.dump());

  auto sharded = Load();
  auto single = Model::Load(EngineData("llama-gqa"), {});
  ASSERT_NE(sharded, nullptr);
  ASSERT_TRUE(single.ok());
  EXPECT_EQ(PromptLogits(*sharded), PromptLogits(**single));
  EXPECT_EQ(sharded->weights().mappings.size(), 2u);
  ExpectMatricesOutOfTheFiles(sharded->weights(), "sharded");

  index["weight_map"]["model.norm.weight"] = "../elsewhere.safetensors";
  WriteFileBytes((dir_.path() / "model.safetensors.index.json").string(), index.dump());
  auto refused = Model::Load(dir_.path().string(), {});
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(),
              ::testing::HasSubstr("tensor 'model.norm.weight' maps to a bad file name"));
}

TEST_F(CheckpointLayoutTest, F16WeightsAreComputedAsF16) {
  std::vector<Tensor> tensors = FixtureTensors();
  for (Tensor& t : tensors) {
    std::string half(t.bytes.size() / 2, '\0');
    for (size_t i = 0; i < t.bytes.size() / 4; ++i) {
      float f;
      std::memcpy(&f, t.bytes.data() + 4 * i, 4);
      uint16_t h = ToF16(f);
      std::memcpy(half.data() + 2 * i, &h, 2);
    }
    t.dtype = "F16";
    t.bytes = half;
  }
  WriteSafetensors((dir_.path() / "model.safetensors").string(), tensors);
  auto model = Load();
  ASSERT_NE(model, nullptr);
  const engine::WeightMatrix& wq = model->weights().layers[0].wq;
  EXPECT_EQ(wq.type, engine::DType::kF16);
  EXPECT_EQ(model->weights().lm_head.type, engine::DType::kF16);
  // Kept as the file's 16-bit values, not converted.
  std::string half_q;
  for (const Tensor& t : tensors) {
    if (t.name == "model.layers.0.self_attn.q_proj.weight") half_q = t.bytes;
  }
  EXPECT_EQ(std::string(static_cast<const char*>(wq.data), half_q.size()), half_q);
  // The same values as float32 weights: the same logits up to the order of float sums.
  auto f32 = Model::FromWeights(model->config(), engine::DequantizedWeights(model->weights()), {});
  ASSERT_TRUE(f32.ok());
  EXPECT_EQ((*f32)->weights().layers[0].wq.type, engine::DType::kF32);
  std::vector<float> want_f32 = PromptLogits(**f32);
  std::vector<float> got_f16 = PromptLogits(*model);
  for (size_t i = 0; i < got_f16.size(); ++i) ASSERT_NEAR(got_f16[i], want_f32[i], 2e-5f) << i;

  std::vector<float> want = ReadF32File(EngineData("llama-gqa/logits_prompt1.f32"));
  std::vector<float> got = PromptLogits(*model);
  ASSERT_EQ(got.size(), want.size());
  float max_diff = 0;
  for (size_t i = 0; i < got.size(); ++i)
    max_diff = std::max(max_diff, std::fabs(got[i] - want[i]));
  std::cout << "F16 weights: max |logit diff| from the float32 reference = " << max_diff << "\n";
  // Rounding the weights to 11 significant bits moves logits by about 1e-2 at most.
  EXPECT_LT(max_diff, 0.05f);
  EXPECT_GT(max_diff, 0.0f);  // the F16 path really ran
}

}  // namespace
}  // namespace tf::testing
