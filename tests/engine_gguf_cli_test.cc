// `tensorfleet engine generate` and `engine serve` with --model FILE.gguf: the real binary on the
// GGUF fixtures (tests/data/engine/gguf), which must behave as the checkpoint directories they
// were made from.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "engine/tokenizers/tokenizer.h"
#include "engine_serve_test_util.h"
#include "engine_test_util.h"

namespace tf::testing {
namespace {

using Json = nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

Json GenerateJson(const std::vector<std::string>& model_args) {
  std::vector<std::string> args = {"--json", "engine", "generate"};
  args.insert(args.end(), model_args.begin(), model_args.end());
  args.insert(args.end(), {"--prompt", "Hello, world!", "--max-tokens", "12", "--threads", "1",
                           "--ignore-eos"});
  ProgramRun r = RunTensorfleet(args);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  Json j = Json::parse(r.output, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << r.output;
  return j;
}

TEST(EngineGgufCli, GenerateFromAGgufFileEqualsTheCheckpoint) {
  Json want = GenerateJson({"--model", EngineData("llama-gqa")});
  Json got = GenerateJson({"--model", EngineData("gguf/llama-gqa.f32.gguf")});
  EXPECT_EQ(got["token_ids"], want["token_ids"]);
  EXPECT_EQ(got["text"], want["text"]);
  EXPECT_EQ(got["prompt_tokens"], want["prompt_tokens"]);
  // The tokenizer taken from elsewhere: the checkpoint directory's tokenizer.json.
  Json mixed = GenerateJson(
      {"--model", EngineData("gguf/llama-gqa.f32.gguf"), "--tokenizer", EngineData("llama-gqa")});
  EXPECT_EQ(mixed["token_ids"], want["token_ids"]);
}

TEST(EngineGgufCli, ErrorsNameTheFile) {
  ProgramRun r =
      RunTensorfleet({"engine", "generate", "--model", "/nonexistent/m.gguf", "--prompt", "x"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.output, HasSubstr("error: /nonexistent/m.gguf: No such file or directory"));
}

// The Qwen2 file carries a ChatML template in tokenizer.chat_template: chat works with nothing
// but the file, and equals completing the rendered prompt.
TEST(EngineGgufCli, ServeAGgufFileWithItsChatTemplate) {
  std::string path = EngineData("gguf/qwen2-bias.f32.gguf");
  ChildProcess server;
  std::string base =
      StartEngineServer(server, {"--model", path, "--threads", "1"}, "chat template)");
  ASSERT_FALSE(base.empty());
  EXPECT_THAT(server.output(), Not(HasSubstr("no chat template")));

  HttpAnswer models = Curl(base, "GET", "/v1/models");
  EXPECT_EQ(models.status, 200);
  EXPECT_EQ(models.json()["data"][0]["id"], "qwen2-bias.f32");

  Json request = {{"messages", Json::array({{{"role", "user"}, {"content", "Hi there"}}})},
                  {"max_tokens", 8},
                  {"temperature", 0},
                  {"ignore_eos", true}};
  HttpAnswer chat_answer = Curl(base, "POST", "/v1/chat/completions", request.dump());
  ASSERT_EQ(chat_answer.status, 200) << chat_answer.body;
  Json chat = chat_answer.json();
  auto tokenizer = engine::LoadTokenizer(path);
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status().ToString();
  auto ids = (*tokenizer)
                 ->Encode("<|im_start|>user\nHi there<|im_end|>\n<|im_start|>assistant\n",
                          /*add_special_tokens=*/false);
  ASSERT_TRUE(ids.ok());
  Json plain = {{"prompt", *ids}, {"max_tokens", 8}, {"temperature", 0}, {"ignore_eos", true}};
  HttpAnswer completion_answer = Curl(base, "POST", "/v1/completions", plain.dump());
  ASSERT_EQ(completion_answer.status, 200) << completion_answer.body;
  Json completion = completion_answer.json();
  EXPECT_EQ(chat["choices"][0]["message"]["content"], completion["choices"][0]["text"]);
  EXPECT_EQ(chat["usage"]["prompt_tokens"], ids->size());
  EXPECT_EQ(chat["usage"]["completion_tokens"], 8);
  StopEngineServer(server);
}

}  // namespace
}  // namespace tf::testing
