// `tensorfleet engine generate` and `engine serve` with --model FILE.gguf: the real binary on the
// GGUF fixtures (tests/data/engine/gguf), which must behave as the checkpoint directories they
// were made from.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <nlohmann/json.hpp>

#include "child_process.h"
#include "engine/tokenizer.h"
#include "engine_test_util.h"

namespace tf::testing {
namespace {

using Json = nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

struct ProcessRun {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

ProcessRun Execute(std::vector<std::string> argv) {
  ChildProcess child;
  EXPECT_TRUE(child.Start(argv));
  int status = child.Wait();
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, child.output()};
}

Json GenerateJson(const std::vector<std::string>& model_args) {
  std::vector<std::string> argv = {TENSORFLEET_BINARY, "--json", "engine", "generate"};
  argv.insert(argv.end(), model_args.begin(), model_args.end());
  argv.insert(argv.end(), {"--prompt", "Hello, world!", "--max-tokens", "12", "--threads", "1",
                           "--ignore-eos"});
  ProcessRun r = Execute(argv);
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
  ProcessRun r = Execute({TENSORFLEET_BINARY, "engine", "generate", "--model",
                          "/nonexistent/m.gguf", "--prompt", "x"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.output, HasSubstr("error: /nonexistent/m.gguf: No such file or directory"));
}

// curl, the real client: the body, then the status on a line of its own.
std::pair<int, Json> Curl(const std::string& base, const std::string& path,
                          const std::string& body = "") {
  std::vector<std::string> argv = {"/usr/bin/curl", "-sS", base + path, "-w", "\n%{http_code}"};
  if (!body.empty()) {
    argv.insert(argv.end(), {"-H", "Content-Type: application/json", "--data-binary", body});
  }
  ProcessRun r = Execute(argv);
  size_t nl = r.output.rfind('\n');
  if (r.exit_code != 0 || nl == std::string::npos) {
    ADD_FAILURE() << "curl failed: " << r.output;
    return {0, Json()};
  }
  return {std::atoi(r.output.c_str() + nl + 1),
          Json::parse(r.output.substr(0, nl), nullptr, false)};
}

// The Qwen2 file carries a ChatML template in tokenizer.chat_template: chat works with nothing
// but the file, and equals completing the rendered prompt.
TEST(EngineGgufCli, ServeAGgufFileWithItsChatTemplate) {
  std::string path = EngineData("gguf/qwen2-bias.f32.gguf");
  ChildProcess server;
  ASSERT_TRUE(server.Start(
      {TENSORFLEET_BINARY, "engine", "serve", "--model", path, "--port", "0", "--threads", "1"}));
  size_t at = 0;
  ASSERT_TRUE(server.WaitForOutput("listening on http://", std::chrono::seconds(30), 0, &at));
  ASSERT_TRUE(server.WaitForOutput(" (loading", std::chrono::seconds(30), at));
  std::string out = server.output();
  std::string base = "http://" + out.substr(at, out.find(' ', at) - at);
  ASSERT_TRUE(server.WaitForOutput("chat template)", std::chrono::seconds(60))) << server.output();
  EXPECT_THAT(server.output(), Not(HasSubstr("no chat template")));

  auto [models_status, models] = Curl(base, "/v1/models");
  EXPECT_EQ(models_status, 200);
  EXPECT_EQ(models["data"][0]["id"], "qwen2-bias.f32");

  Json request = {{"messages", Json::array({{{"role", "user"}, {"content", "Hi there"}}})},
                  {"max_tokens", 8},
                  {"temperature", 0},
                  {"ignore_eos", true}};
  auto [chat_status, chat] = Curl(base, "/v1/chat/completions", request.dump());
  ASSERT_EQ(chat_status, 200) << chat.dump();
  auto tokenizer = engine::LoadTokenizer(path);
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status().ToString();
  auto ids = (*tokenizer)
                 ->Encode("<|im_start|>user\nHi there<|im_end|>\n<|im_start|>assistant\n",
                          /*add_special_tokens=*/false);
  ASSERT_TRUE(ids.ok());
  Json plain = {{"prompt", *ids}, {"max_tokens", 8}, {"temperature", 0}, {"ignore_eos", true}};
  auto [completion_status, completion] = Curl(base, "/v1/completions", plain.dump());
  ASSERT_EQ(completion_status, 200) << completion.dump();
  EXPECT_EQ(chat["choices"][0]["message"]["content"], completion["choices"][0]["text"]);
  EXPECT_EQ(chat["usage"]["prompt_tokens"], ids->size());
  EXPECT_EQ(chat["usage"]["completion_tokens"], 8);
  server.Kill(SIGTERM);
  EXPECT_EQ(server.Wait(), 0) << server.output();
}

}  // namespace
}  // namespace tf::testing
