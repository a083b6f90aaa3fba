// config.json of Llama-family checkpoints: the fixtures, both rope layouts, and clear errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/config.h"
#include "engine_test_util.h"

namespace tf::testing {
namespace {

using engine::LoadModelConfig;
using engine::ModelConfig;
using engine::ParseModelConfig;
using engine::RopeConfig;
using ::testing::HasSubstr;

constexpr const char* kLlama3 = R"({
  "model_type": "llama", "vocab_size": 128256, "hidden_size": 4096, "intermediate_size": 14336,
  "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
  "max_position_embeddings": 131072, "rms_norm_eps": 1e-05, "rope_theta": 500000.0,
  "rope_scaling": {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                   "original_max_position_embeddings": 8192, "rope_type": "llama3"},
  "tie_word_embeddings": false, "bos_token_id": 128000, "eos_token_id": [128001, 128008, 128009],
  "hidden_act": "silu", "attention_bias": false, "mlp_bias": false})";

std::string Error(const std::string& json) {
  auto c = ParseModelConfig(json, "config.json");
  return c.ok() ? "" : c.status().message();
}

TEST(EngineConfig, FixtureLlama) {
  auto c = LoadModelConfig(EngineData("llama-gqa/config.json"));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->model_type, "llama");
  EXPECT_EQ(c->vocab_size, 1024);
  EXPECT_EQ(c->hidden_size, 64);
  EXPECT_EQ(c->intermediate_size, 176);
  EXPECT_EQ(c->num_layers, 2);
  EXPECT_EQ(c->num_heads, 4);
  EXPECT_EQ(c->num_kv_heads, 2);
  EXPECT_EQ(c->head_dim, 16);
  EXPECT_FLOAT_EQ(c->rms_norm_eps, 1e-5f);
  EXPECT_EQ(c->rope.type, RopeConfig::Type::kDefault);
  EXPECT_DOUBLE_EQ(c->rope.theta, 10000.0);
  EXPECT_FALSE(c->tie_word_embeddings);
  EXPECT_FALSE(c->qkv_bias);
  EXPECT_EQ(c->bos_token_id, 0);
  EXPECT_EQ(c->eos_token_ids, std::vector<int32_t>{1});
  EXPECT_EQ(c->MaxContext(), 512);
}

TEST(EngineConfig, FixtureQwen2HasBiasesAndTiedEmbeddings) {
  auto c = LoadModelConfig(EngineData("qwen2-bias/config.json"));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->model_type, "qwen2");
  EXPECT_TRUE(c->qkv_bias);
  EXPECT_FALSE(c->o_bias);
  EXPECT_TRUE(c->tie_word_embeddings);
  EXPECT_EQ(c->head_dim, 16);  // hidden_size / num_attention_heads
  EXPECT_DOUBLE_EQ(c->rope.theta, 1000000.0);
  EXPECT_FALSE(c->sliding_window.has_value());
}

TEST(EngineConfig, Llama3RopeScalingAndEosList) {
  auto c = ParseModelConfig(kLlama3, "config.json");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->rope.type, RopeConfig::Type::kLlama3);
  EXPECT_DOUBLE_EQ(c->rope.theta, 500000.0);
  EXPECT_DOUBLE_EQ(c->rope.factor, 8.0);
  EXPECT_EQ(c->rope.original_max_position_embeddings, 8192);
  EXPECT_EQ(c->head_dim, 128);
  EXPECT_EQ(c->eos_token_ids, (std::vector<int32_t>{128001, 128008, 128009}));
}

TEST(EngineConfig, MistralSlidingWindowLimitsContext) {
  auto c = ParseModelConfig(R"({"model_type": "mistral", "vocab_size": 32000, "hidden_size": 4096,
      "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32,
      "num_key_value_heads": 8, "max_position_embeddings": 32768, "sliding_window": 4096})",
                            "config.json");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->MaxContext(), 4096);
}

TEST(EngineConfig, ClearErrors) {
  EXPECT_THAT(Error("{"), HasSubstr("config.json: not valid JSON"));
  EXPECT_THAT(Error(R"({"model_type": "gpt2"})"),
              HasSubstr("config.json: model_type 'gpt2' is not supported"));
  EXPECT_THAT(Error(R"({"model_type": "llama"})"), HasSubstr("config.json: vocab_size is missing"));
  std::string base = R"({"model_type": "llama", "vocab_size": 10, "hidden_size": 64,
      "intermediate_size": 128, "num_hidden_layers": 1, )";
  EXPECT_THAT(Error(base + R"("num_attention_heads": 4, "num_key_value_heads": 3})"),
              HasSubstr("num_key_value_heads (3) does not divide num_attention_heads (4)"));
  EXPECT_THAT(Error(base + R"("num_attention_heads": -4})"),
              HasSubstr("num_attention_heads must be a positive integer, not -4"));
  EXPECT_THAT(Error(base + R"("num_attention_heads": 4, "hidden_act": "gelu"})"),
              HasSubstr("hidden_act 'gelu' is not supported"));
  EXPECT_THAT(Error(base + R"("num_attention_heads": 4, "rope_scaling": {"rope_type": "yarn"}})"),
              HasSubstr("rope_scaling.rope_type 'yarn' is not supported"));
  EXPECT_THAT(Error(base + R"("num_attention_heads": 4, "eos_token_id": 10})"),
              HasSubstr("eos_token_id 10 is not below vocab_size"));
  EXPECT_THAT(Error(base + R"("num_attention_heads": 4, "head_dim": 15})"),
              HasSubstr("head_dim (15) must be even"));
  EXPECT_EQ(Error(base + R"("num_attention_heads": 4})"), "");
}

TEST(EngineConfig, MissingFile) {
  auto c = LoadModelConfig("/nonexistent/config.json");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(c.status().message(), HasSubstr("/nonexistent/config.json"));
}

}  // namespace
}  // namespace tf::testing
