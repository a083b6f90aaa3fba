// `tensorfleet engine generate` end to end: the real binary on the llama-gqa test checkpoint
// (random weights), with no server.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "engine/generate.h"
#include "engine/model.h"
#include "engine/tokenizers/tokenizer.h"
#include "engine_test_util.h"
#include "program_run.h"

namespace tf::testing {
namespace {

using ::testing::HasSubstr;

TEST(EngineCli, GenerateGreedyJson) {
  ProgramRun r = RunTensorfleet({"--json", "engine", "generate", "--model", EngineData("llama-gqa"),
                                 "--prompt", "Hello, world!", "--max-tokens", "12", "--threads",
                                 "2", "--ignore-eos"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto j = nlohmann::json::parse(r.output, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.output;
  auto ids = j["token_ids"].get<std::vector<int32_t>>();
  ASSERT_EQ(ids.size(), 12u);
  // "Hello, world!" is prompt 0 of the fixture (BOS added); its first greedy token is the argmax
  // of transformers' logits at the prompt's last position.
  auto ref = nlohmann::json::parse(ReadFileBytes(EngineData("llama-gqa/reference.json")));
  EXPECT_EQ(j["prompt_tokens"], ref[0]["prompt_ids"].size());
  EXPECT_EQ(ids[0], ref[0]["argmax_per_position"].back().get<int32_t>());
  auto tok = engine::LoadTokenizerJson(EngineData("llama-gqa/tokenizer.json"));
  ASSERT_TRUE(tok.ok());
  EXPECT_EQ(j["text"], (*tok)->DecodeText(ids, /*skip_special_tokens=*/true));
  EXPECT_EQ(j["threads"], 2);
  EXPECT_EQ(j["weights"], "16 F32");
}

TEST(EngineCli, GeneratePrintsTextAndSpeed) {
  ProgramRun r = RunTensorfleet({"engine", "generate", "--model", EngineData("llama-gqa"),
                                 "--prompt", "Hi", "--max-tokens", "4", "--ignore-eos"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("3 prompt tokens, 4 generated"));
  EXPECT_THAT(r.output, HasSubstr("tokens/s"));
}

// --quantize q8_0 quantises the matrices and gives what the library gives with the same option;
// a type it does not know is refused, and --help lists the choices.
TEST(EngineCli, GenerateQuantized) {
  ProgramRun r = RunTensorfleet({"--json", "engine", "generate", "--model", EngineData("llama-gqa"),
                                 "--prompt", "Hello, world!", "--max-tokens", "12", "--threads",
                                 "2", "--ignore-eos", "--quantize", "q8_0"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto j = nlohmann::json::parse(r.output, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.output;
  auto ids = j["token_ids"].get<std::vector<int32_t>>();
  auto ref = nlohmann::json::parse(ReadFileBytes(EngineData("llama-gqa/reference.json")));
  auto prompt = ref[0]["prompt_ids"].get<std::vector<int32_t>>();
  engine::ModelOptions options;
  options.quantize = engine::Quantize::kQ8_0;
  auto model = engine::Model::Load(EngineData("llama-gqa"), options);
  ASSERT_TRUE(model.ok());
  engine::GenerateOptions g;
  g.max_new_tokens = 12;
  g.stop_at_eos = false;
  std::vector<int32_t> want;
  ASSERT_TRUE(engine::GenerateGreedy(**model, prompt, g, nullptr, &want).ok());
  EXPECT_EQ(ids, want);
  // The fixture's down projections (176 columns) cannot be cut into blocks of 32.
  EXPECT_EQ(j["weights"], "2 F32, 14 Q8_0");

  r = RunTensorfleet({"engine", "generate", "--model", EngineData("llama-gqa"), "--prompt", "x",
                      "--quantize", "q9"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("--quantize"));
  r = RunTensorfleet({"engine", "serve", "--help"});
  EXPECT_THAT(r.output, HasSubstr("--quantize"));
  EXPECT_THAT(r.output, HasSubstr("q8_0"));
}

TEST(EngineCli, ErrorsNameTheFile) {
  ProgramRun r =
      RunTensorfleet({"engine", "generate", "--model", "/nonexistent/model", "--prompt", "x"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.output, HasSubstr("error: /nonexistent/model/config.json"));
  r = RunTensorfleet({"engine", "generate", "--prompt", "x"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("--model is required"));
}

}  // namespace
}  // namespace tf::testing
