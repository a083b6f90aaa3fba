// generation_config.json: its sampling defaults (applied under a request's own values by
// `engine serve`) and its end-of-sequence ids (added to the model's).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "engine/config.h"
#include "engine_test_util.h"
#include "serve/protocol.h"
#include "store_test_env.h"

namespace tf::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(GenerationConfigTest, ReadsTheFieldsPresentOnly) {
  auto g = engine::ParseGenerationConfig(
      R"({"do_sample": true, "temperature": 0.6, "top_p": 0.9, "eos_token_id": [1, 7],
          "bos_token_id": 0, "transformers_version": "4.45.0"})",
      "generation_config.json");
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_FLOAT_EQ(g->temperature.value(), 0.6f);
  EXPECT_FLOAT_EQ(g->top_p.value(), 0.9f);
  EXPECT_FALSE(g->top_k.has_value());
  EXPECT_FALSE(g->repetition_penalty.has_value());
  EXPECT_FALSE(g->max_new_tokens.has_value());
  EXPECT_THAT(g->eos_token_ids, ElementsAre(1, 7));

  g = engine::ParseGenerationConfig(R"({"top_k": 0, "max_new_tokens": 64, "eos_token_id": 2})",
                                    "generation_config.json");
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(g->top_k.value(), 0);
  EXPECT_EQ(g->max_new_tokens.value(), 64);
  EXPECT_THAT(g->eos_token_ids, ElementsAre(2));
}

TEST(GenerationConfigTest, BadValuesNameTheFileAndField) {
  struct Case {
    std::string json, expect;
  };
  for (const Case& c : std::vector<Case>{
           {"[1]", "not a JSON object"},
           {"{", "not valid JSON"},
           {R"({"temperature": -1})", "temperature"},
           {R"({"top_p": 0})", "top_p"},
           {R"({"top_k": -5})", "top_k"},
           {R"({"repetition_penalty": 0})", "repetition_penalty"},
           {R"({"max_new_tokens": 0})", "max_new_tokens"},
           {R"({"eos_token_id": "two"})", "eos_token_id"},
       }) {
    auto g = engine::ParseGenerationConfig(c.json, "m/generation_config.json");
    ASSERT_FALSE(g.ok()) << c.json;
    EXPECT_EQ(g.status().code(), StatusCode::kInvalidArgument) << c.json;
    EXPECT_THAT(g.status().message(), HasSubstr("m/generation_config.json")) << c.json;
    EXPECT_THAT(g.status().message(), HasSubstr(c.expect)) << c.json;
  }
}

TEST(GenerationConfigTest, AbsentFileGivesNoDefaults) {
  TempDir dir;
  auto g = engine::LoadGenerationConfig(dir.path().string());
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_TRUE(g->eos_token_ids.empty());
  EXPECT_FALSE(g->temperature.has_value());
}

// A checkpoint directory with the llama-gqa fixture's config.json (eos 1) and the given
// generation_config.json.
std::string CheckpointWith(const TempDir& dir, const std::string& generation_config) {
  fs::copy_file(EngineData("llama-gqa/config.json"), dir.path() / "config.json");
  std::ofstream(dir.path() / "generation_config.json") << generation_config;
  return (dir.path() / "config.json").string();
}

TEST(GenerationConfigTest, ItsEndOfSequenceIdsJoinTheModelsOnce) {
  TempDir dir;
  auto c = engine::LoadModelConfig(CheckpointWith(dir, R"({"eos_token_id": [1, 5, 9]})"));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_THAT(c->eos_token_ids, ElementsAre(1, 5, 9));
}

TEST(GenerationConfigTest, AnIdOutsideTheVocabularyIsRefusedAtLoad) {
  TempDir dir;
  auto c = engine::LoadModelConfig(CheckpointWith(dir, R"({"eos_token_id": 1000000})"));
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(), HasSubstr("generation_config.json: eos_token_id 1000000"));
}

TEST(GenerationConfigTest, ServeAppliesDefaultsUnderTheRequestsOwnValues) {
  engine::GenerationConfig g;
  g.temperature = 0.6f;
  g.top_p = 0.9f;
  g.top_k = 20;
  g.repetition_penalty = 1.1f;

  serve::CompletionRequest cr;
  serve::ApplyGenerationDefaults(g, &cr.sampling);
  nlohmann::json body = {{"prompt", "hi"}, {"temperature", 0.2}};
  ASSERT_FALSE(serve::ParseCompletionRequest(body, serve::Endpoint::kCompletions, &cr));
  EXPECT_FLOAT_EQ(cr.sampling.temperature, 0.2f);  // the request's
  EXPECT_FLOAT_EQ(cr.sampling.top_p, 0.9f);        // the checkpoint's
  EXPECT_EQ(cr.sampling.top_k, 20);
  EXPECT_FLOAT_EQ(cr.sampling.repetition_penalty, 1.1f);

  serve::CompletionRequest plain;
  serve::ApplyGenerationDefaults(engine::GenerationConfig{}, &plain.sampling);
  ASSERT_FALSE(
      serve::ParseCompletionRequest({{"prompt", "hi"}}, serve::Endpoint::kCompletions, &plain));
  EXPECT_FLOAT_EQ(plain.sampling.temperature, 1.0f);  // OpenAI's default
  EXPECT_FLOAT_EQ(plain.sampling.top_p, 1.0f);
}

}  // namespace
}  // namespace tf::testing
