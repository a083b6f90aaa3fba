// `tensorfleet engine serve` end to end: the real binary on the llama-gqa fixture (random
// weights) on a free port, asked with curl; plus the executor and the loading state in-process.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <future>
#include <mutex>
#include <nlohmann/json.hpp>

#include "engine_serve_test_util.h"
#include "engine_test_util.h"
#include "eventually.h"
#include "http_test_util.h"
#include "serve/server.h"

namespace tf::testing {
namespace {

using Json = nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

// The JSON of each "data:" event of an SSE body, and whether it ended with [DONE].
std::vector<Json> SseEvents(const std::string& body, bool* done) {
  std::vector<Json> out;
  *done = false;
  size_t pos = 0;
  while (pos < body.size()) {
    size_t end = body.find("\n\n", pos);
    if (end == std::string::npos) end = body.size();
    std::string event = body.substr(pos, end - pos);
    pos = end + 2;
    if (event.rfind("data: ", 0) != 0) continue;  // comments (": waiting")
    std::string data = event.substr(6);
    EXPECT_FALSE(*done) << "an event after [DONE]";
    if (data == "[DONE]") {
      *done = true;
      continue;
    }
    out.push_back(Json::parse(data, nullptr, false));
    EXPECT_FALSE(out.back().is_discarded()) << data;
  }
  return out;
}

class EngineServeTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    shared_server = new ChildProcess;
    shared_base = StartEngineServer(*shared_server, {"--model", EngineData("llama-gqa"),
                                                     "--threads", "1", "--served-name", "tiny"});
    ASSERT_FALSE(shared_base.empty());
  }
  static void TearDownTestSuite() {
    StopEngineServer(*shared_server);
    delete shared_server;
    shared_server = nullptr;
  }

  static HttpAnswer Post(const std::string& path, const Json& body) {
    return Curl(shared_base, "POST", path, body.dump());
  }
  static Json Completion(const Json& body) {
    HttpAnswer a = Post("/v1/completions", body);
    EXPECT_EQ(a.status, 200) << a.body;
    return a.json();
  }

  static ChildProcess* shared_server;
  static std::string shared_base;
};

ChildProcess* EngineServeTest::shared_server = nullptr;
std::string EngineServeTest::shared_base;

TEST_F(EngineServeTest, HealthAndModels) {
  HttpAnswer health = Curl(shared_base, "GET", "/health");
  EXPECT_EQ(health.status, 200);
  EXPECT_EQ(health.json()["status"], "ok");
  HttpAnswer models = Curl(shared_base, "GET", "/v1/models");
  ASSERT_EQ(models.status, 200) << models.body;
  Json m = models.json();
  EXPECT_EQ(m["object"], "list");
  ASSERT_EQ(m["data"].size(), 1u);
  EXPECT_EQ(m["data"][0]["id"], "tiny");
  EXPECT_EQ(m["data"][0]["object"], "model");
  EXPECT_EQ(m["data"][0]["max_model_len"], 512);
  EXPECT_EQ(Curl(shared_base, "GET", "/v1/models/tiny").status, 200);
  HttpAnswer other = Curl(shared_base, "GET", "/v1/models/gpt-4");
  EXPECT_EQ(other.status, 404);
  EXPECT_EQ(other.json()["error"]["code"], "model_not_found");
}

TEST_F(EngineServeTest, GreedyCompletionEqualsEngineGenerate) {
  ProgramRun generate = RunTensorfleet({"--json", "engine", "generate", "--model",
                                        EngineData("llama-gqa"), "--prompt", "Hello, world!",
                                        "--max-tokens", "12", "--threads", "1", "--ignore-eos"});
  ASSERT_EQ(generate.exit_code, 0) << generate.output;
  Json expected = Json::parse(generate.output);
  Json c = Completion({{"model", "tiny"},
                       {"prompt", "Hello, world!"},
                       {"max_tokens", 12},
                       {"temperature", 0},
                       {"ignore_eos", true}});
  EXPECT_EQ(c["object"], "text_completion");
  EXPECT_EQ(c["model"], "tiny");
  EXPECT_THAT(c["id"].get<std::string>(), StartsWith("cmpl-"));
  ASSERT_EQ(c["choices"].size(), 1u);
  EXPECT_EQ(c["choices"][0]["text"], expected["text"]);
  EXPECT_EQ(c["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(c["usage"]["prompt_tokens"], expected["prompt_tokens"]);
  EXPECT_EQ(c["usage"]["completion_tokens"], 12);
  EXPECT_EQ(c["usage"]["total_tokens"], expected["prompt_tokens"].get<int>() + 12);
  // The model may be left out; prompts may be token ids.
  Json ids = Completion({{"prompt", Json::array({44, 73, 80})},
                         {"max_tokens", 3},
                         {"temperature", 0},
                         {"ignore_eos", true}});
  EXPECT_EQ(ids["usage"]["prompt_tokens"], 3);
  EXPECT_EQ(ids["usage"]["completion_tokens"], 3);
}

TEST_F(EngineServeTest, SeededSamplingIsReproducible) {
  Json body = {{"prompt", "Once upon a time"},
               {"max_tokens", 24},
               {"temperature", 1.0},
               {"top_p", 0.95},
               {"seed", 1234},
               {"ignore_eos", true}};
  std::string a = Completion(body)["choices"][0]["text"];
  std::string b = Completion(body)["choices"][0]["text"];
  EXPECT_EQ(a, b);
  body["seed"] = 4321;
  EXPECT_NE(Completion(body)["choices"][0]["text"].get<std::string>(), a);
}

TEST_F(EngineServeTest, StreamedChunksConcatenateToTheWholeText) {
  Json body = {{"prompt", "Hello, world!"},
               {"max_tokens", 20},
               {"temperature", 0.8},
               {"seed", 7},
               {"ignore_eos", true}};
  Json whole = Completion(body);
  body["stream"] = true;
  body["stream_options"] = {{"include_usage", true}};
  HttpAnswer a = Post("/v1/completions", body);
  ASSERT_EQ(a.status, 200) << a.body;
  bool done = false;
  std::vector<Json> events = SseEvents(a.body, &done);
  EXPECT_TRUE(done) << a.body;
  ASSERT_GE(events.size(), 2u);
  std::string text;
  std::string finish;
  for (size_t i = 0; i + 1 < events.size(); ++i) {
    EXPECT_EQ(events[i]["object"], "text_completion");
    ASSERT_EQ(events[i]["choices"].size(), 1u) << events[i];
    text += events[i]["choices"][0]["text"].get<std::string>();
    if (!events[i]["choices"][0]["finish_reason"].is_null()) {
      finish = events[i]["choices"][0]["finish_reason"];
    }
  }
  EXPECT_EQ(text, whole["choices"][0]["text"]);
  EXPECT_EQ(finish, "length");
  const Json& usage = events.back();
  EXPECT_TRUE(usage["choices"].empty());
  EXPECT_EQ(usage["usage"], whole["usage"]);
  // Without include_usage there is no usage chunk.
  body.erase("stream_options");
  bool done2 = false;
  std::vector<Json> plain = SseEvents(Post("/v1/completions", body).body, &done2);
  EXPECT_TRUE(done2);
  for (const Json& e : plain) EXPECT_FALSE(e.contains("usage") && !e["usage"].is_null()) << e;
}

TEST_F(EngineServeTest, MaxTokensAndStopStringsAreRespected) {
  Json body = {
      {"prompt", "Hello, world!"}, {"max_tokens", 5}, {"temperature", 0}, {"ignore_eos", true}};
  Json five = Completion(body);
  EXPECT_EQ(five["usage"]["completion_tokens"], 5);
  EXPECT_EQ(five["choices"][0]["finish_reason"], "length");

  body["max_tokens"] = 24;
  std::string full = Completion(body)["choices"][0]["text"];
  ASSERT_GT(full.size(), 10u);
  std::string stop = full.substr(full.size() / 2, 2);
  size_t cut = full.find(stop);
  body["stop"] = Json::array({stop, "never-appears"});
  Json stopped = Completion(body);
  EXPECT_EQ(stopped["choices"][0]["text"], full.substr(0, cut));
  EXPECT_EQ(stopped["choices"][0]["finish_reason"], "stop");
  EXPECT_LT(stopped["usage"]["completion_tokens"].get<int>(), 24);
  // Streamed, the stop string is held back and never sent.
  body["stream"] = true;
  bool done = false;
  std::string streamed;
  for (const Json& e : SseEvents(Post("/v1/completions", body).body, &done)) {
    streamed += e["choices"][0]["text"].get<std::string>();
  }
  EXPECT_TRUE(done);
  EXPECT_EQ(streamed, full.substr(0, cut));
}

TEST_F(EngineServeTest, LogprobsOfTheChosenTokenAndAlternatives) {
  Json c = Completion({{"prompt", "Hello"},
                       {"max_tokens", 4},
                       {"temperature", 0},
                       {"logprobs", 3},
                       {"ignore_eos", true}});
  const Json& lp = c["choices"][0]["logprobs"];
  ASSERT_EQ(lp["tokens"].size(), 4u) << c;
  ASSERT_EQ(lp["top_logprobs"].size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_LE(lp["token_logprobs"][i].get<double>(), 0.0);
    EXPECT_EQ(lp["top_logprobs"][i].size(), 3u) << lp["top_logprobs"][i];
    // Greedy: the chosen token is the most likely one.
    double best = -1e9;
    for (const auto& [token, value] : lp["top_logprobs"][i].items()) {
      best = std::max(best, value.get<double>());
    }
    EXPECT_NEAR(lp["token_logprobs"][i].get<double>(), best, 1e-5);
  }
}

TEST_F(EngineServeTest, BadFieldsGetOpenAIsErrorShapeNamingTheField) {
  auto error = [](const Json& body, int status) {
    HttpAnswer a = Post("/v1/completions", body);
    EXPECT_EQ(a.status, status) << a.body;
    Json j = a.json();
    EXPECT_TRUE(j["error"].contains("message")) << a.body;
    EXPECT_TRUE(j["error"].contains("type")) << a.body;
    EXPECT_TRUE(j["error"].contains("code")) << a.body;
    return j["error"];
  };
  Json e = error({{"prompt", "x"}, {"temperature", "hot"}}, 400);
  EXPECT_EQ(e["param"], "temperature");
  EXPECT_EQ(e["type"], "invalid_request_error");
  EXPECT_THAT(e["message"].get<std::string>(), HasSubstr("temperature"));
  EXPECT_EQ(error({{"prompt", "x"}, {"top_p", 1.5}}, 400)["param"], "top_p");
  EXPECT_EQ(error({{"prompt", "x"}, {"max_tokens", 0}}, 400)["param"], "max_tokens");
  EXPECT_EQ(error({{"prompt", "x"}, {"n", 2}}, 400)["param"], "n");
  EXPECT_EQ(error({{"prompt", "x"}, {"stop", 3}}, 400)["param"], "stop");
  EXPECT_EQ(error({{"max_tokens", 3}}, 400)["param"], "prompt");
  EXPECT_EQ(error({{"prompt", "x"}, {"max_tokens", 600}}, 400)["param"], "max_tokens");
  EXPECT_EQ(error({{"prompt", Json::array({5000})}}, 400)["param"], "prompt");
  EXPECT_EQ(error({{"prompt", "x"}, {"logit_bias", {{"5000", 1}}}}, 400)["param"], "logit_bias");
  Json missing = error({{"prompt", "x"}, {"model", "gpt-4"}}, 404);
  EXPECT_EQ(missing["param"], "model");
  EXPECT_EQ(missing["code"], "model_not_found");
  HttpAnswer not_json = Curl(shared_base, "POST", "/v1/completions", "{not json");
  EXPECT_EQ(not_json.status, 400);
  EXPECT_TRUE(not_json.json()["error"]["param"].is_null());
  EXPECT_EQ(Curl(shared_base, "GET", "/v1/nothing").status, 404);

  // What the HTTP server refuses by itself has the same shape: a body over its 8 MiB.
  std::string big = ::testing::TempDir() + "engine-serve-big-body.json";
  WriteFileBytes(big, Json{{"prompt", std::string(9 << 20, 'x')}}.dump());
  std::vector<std::string> argv = CurlArgv("POST", shared_base + "/v1/completions", "-");
  argv.back() = "@" + big;  // --data-binary @file: too big for a command line
  HttpAnswer too_big = ParseCurlOutput(RunProgram(argv));
  std::filesystem::remove(big);
  EXPECT_EQ(too_big.status, 413) << too_big.body;
  Json refused = too_big.json()["error"];
  EXPECT_EQ(refused["type"], "invalid_request_error") << too_big.body;
  EXPECT_EQ(refused["code"], "request_too_large") << too_big.body;
  EXPECT_TRUE(refused.contains("param") && refused["param"].is_null()) << too_big.body;
  EXPECT_THAT(refused["message"].get<std::string>(), HasSubstr("exceeds"));
}

TEST_F(EngineServeTest, ChatWithoutARenderableTemplateIsRefusedClearly) {
  HttpAnswer a =
      Post("/v1/chat/completions",
           {{"model", "tiny"}, {"messages", Json::array({{{"role", "user"}, {"content", "Hi"}}})}});
  EXPECT_EQ(a.status, 400) << a.body;
  EXPECT_EQ(a.json()["error"]["param"], "messages");
  EXPECT_THAT(a.body, HasSubstr("chat template"));
  HttpAnswer bad = Post("/v1/chat/completions", {{"messages", "Hi"}});
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(bad.json()["error"]["param"], "messages");
}

// The second request with a prompt the first computed is answered from its cached prefix, as
// OpenAI reports it (usage.prompt_tokens_details.cached_tokens), with the same tokens.
TEST_F(EngineServeTest, ARepeatedPromptReportsItsCachedTokens) {
  Json prompt = Json::array();
  for (int i = 0; i < 40; ++i) prompt.push_back(611 + (i * 13) % 300);  // no other test's
  Json body = {{"prompt", prompt},
               {"max_tokens", 6},
               {"temperature", 0},
               {"ignore_eos", true},
               {"logprobs", 2}};
  Json first = Completion(body);
  Json second = Completion(body);
  EXPECT_EQ(first["usage"]["prompt_tokens_details"]["cached_tokens"], 0);
  EXPECT_EQ(second["usage"]["prompt_tokens_details"]["cached_tokens"], 32)
      << "two blocks of 16; the third holds the last prompt token";
  EXPECT_EQ(second["choices"][0]["text"], first["choices"][0]["text"]);
  EXPECT_EQ(second["choices"][0]["logprobs"], first["choices"][0]["logprobs"]);
  HttpAnswer m = Curl(shared_base, "GET", "/metrics");
  EXPECT_THAT(m.body, HasSubstr("tensorfleet_engine_prefix_cache_hits_total "));
  EXPECT_THAT(m.body, Not(HasSubstr("tensorfleet_engine_prefix_cache_cached_tokens_total 0\n")));
}

TEST_F(EngineServeTest, MetricsCountRequestsAndTokens) {
  Completion({{"prompt", "Hi"}, {"max_tokens", 3}, {"ignore_eos", true}});
  HttpAnswer m = Curl(shared_base, "GET", "/metrics");
  ASSERT_EQ(m.status, 200);
  EXPECT_THAT(m.body, HasSubstr("tensorfleet_engine_requests_running 0\n"));
  EXPECT_THAT(m.body, HasSubstr("tensorfleet_engine_requests_waiting 0\n"));
  EXPECT_THAT(m.body, HasSubstr("tensorfleet_engine_generated_tokens_total "));
  EXPECT_THAT(m.body, HasSubstr("tensorfleet_engine_time_to_first_token_seconds_count "));
  EXPECT_THAT(m.body, HasSubstr("tensorfleet_engine_time_per_output_token_seconds_sum "));
  EXPECT_THAT(m.body, Not(HasSubstr("tensorfleet_engine_generated_tokens_total 0\n")));
}

TEST(EngineServe, AModelThatDoesNotLoadEndsTheServerWithItsError) {
  ProgramRun r =
      RunTensorfleet({"engine", "serve", "--model", "/nonexistent/model", "--port", "0"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("/nonexistent/model"));
}

// A copy of the fixture with a ChatML chat template in its tokenizer_config.json.
TEST(EngineServeChat, ChatCompletionsRenderTheTemplate) {
  std::string dir = ::testing::TempDir() + "engine-serve-chat";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  for (const char* f : {"config.json", "model.safetensors", "tokenizer.json"}) {
    std::filesystem::copy_file(EngineData(std::string("llama-gqa/") + f), dir + "/" + f);
  }
  const std::string chatml =
      "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + "
      "message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}"
      "{{ '<|im_start|>assistant\n' }}{% endif %}";
  WriteFileBytes(
      dir + "/tokenizer_config.json",
      Json{{"chat_template", chatml}, {"bos_token", "<s>"}, {"eos_token", "</s>"}}.dump());
  ChildProcess server;
  std::string base =
      StartEngineServer(server, {"--model", dir, "--threads", "1"}, "chat template)");
  ASSERT_FALSE(base.empty());

  Json request = {{"model", "engine-serve-chat"},
                  {"messages", Json::array({{{"role", "user"}, {"content", "Hi there"}}})},
                  {"max_tokens", 8},
                  {"temperature", 0},
                  {"ignore_eos", true}};
  HttpAnswer chat = Curl(base, "POST", "/v1/chat/completions", request.dump());
  ASSERT_EQ(chat.status, 200) << chat.body;
  Json c = chat.json();
  EXPECT_EQ(c["object"], "chat.completion");
  EXPECT_EQ(c["choices"][0]["message"]["role"], "assistant");
  // The same as completing the rendered prompt, encoded without added special tokens.
  auto tokenizer = engine::LoadTokenizer(dir);
  ASSERT_TRUE(tokenizer.ok());
  auto ids = (*tokenizer)
                 ->Encode("<|im_start|>user\nHi there<|im_end|>\n<|im_start|>assistant\n",
                          /*add_special_tokens=*/false);
  ASSERT_TRUE(ids.ok());
  Json plain = {{"prompt", *ids}, {"max_tokens", 8}, {"temperature", 0}, {"ignore_eos", true}};
  HttpAnswer completion = Curl(base, "POST", "/v1/completions", plain.dump());
  ASSERT_EQ(completion.status, 200) << completion.body;
  EXPECT_EQ(c["choices"][0]["message"]["content"], completion.json()["choices"][0]["text"]);
  EXPECT_EQ(c["usage"]["prompt_tokens"], ids->size());

  request["stream"] = true;
  bool done = false;
  std::vector<Json> events =
      SseEvents(Curl(base, "POST", "/v1/chat/completions", request.dump()).body, &done);
  EXPECT_TRUE(done);
  ASSERT_GE(events.size(), 2u);
  EXPECT_EQ(events[0]["object"], "chat.completion.chunk");
  EXPECT_EQ(events[0]["choices"][0]["delta"]["role"], "assistant");
  std::string text;
  for (const Json& e : events) {
    if (e["choices"][0]["delta"].contains("content")) {
      text += e["choices"][0]["delta"]["content"].get<std::string>();
    }
  }
  EXPECT_EQ(text, c["choices"][0]["message"]["content"]);
  EXPECT_EQ(events.back()["choices"][0]["finish_reason"], "length");

  // As vLLM: no generation prompt when asked, or the last message left open to continue.
  auto tokens_of = [&](const std::string& text) {
    auto encoded = (*tokenizer)->Encode(text, /*add_special_tokens=*/false);
    EXPECT_TRUE(encoded.ok());
    return encoded.ok() ? encoded->size() : 0;
  };
  Json without = request;
  without.erase("stream");
  without["add_generation_prompt"] = false;
  HttpAnswer no_prompt = Curl(base, "POST", "/v1/chat/completions", without.dump());
  ASSERT_EQ(no_prompt.status, 200) << no_prompt.body;
  EXPECT_EQ(no_prompt.json()["usage"]["prompt_tokens"],
            tokens_of("<|im_start|>user\nHi there<|im_end|>\n"));
  Json go_on = without;
  go_on["messages"].push_back({{"role", "assistant"}, {"content", "Once upon"}});
  go_on["continue_final_message"] = true;
  HttpAnswer continued = Curl(base, "POST", "/v1/chat/completions", go_on.dump());
  ASSERT_EQ(continued.status, 200) << continued.body;
  EXPECT_EQ(continued.json()["usage"]["prompt_tokens"],
            tokens_of("<|im_start|>user\nHi there<|im_end|>\n<|im_start|>assistant\nOnce upon"));
  go_on.erase("add_generation_prompt");  // true by default: the two cannot go together
  HttpAnswer both = Curl(base, "POST", "/v1/chat/completions", go_on.dump());
  EXPECT_EQ(both.status, 400) << both.body;
  EXPECT_EQ(both.json()["error"]["param"], "continue_final_message");

  // A template that refuses the messages is the client's error, naming the field.
  HttpAnswer empty_role = Curl(base, "POST", "/v1/chat/completions",
                               R"({"messages": [{"role": "user", "content": null}]})");
  EXPECT_EQ(empty_role.status, 400) << empty_role.body;
  EXPECT_EQ(empty_role.json()["error"]["param"], "messages");
  StopEngineServer(server);
  std::filesystem::remove_all(dir);
}

// While the model loads, /health says 503 and the API says so too.
TEST(EngineServe, HealthIs503WhileLoading) {
  serve::ServeState state;
  state.served_name = "m";
  http::testing::IoThread io;
  auto server = http::Server::Start(io.io(), http::ServerOptions{}, serve::MakeServeHandler(state));
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  std::string base = "http://127.0.0.1:" + std::to_string((*server)->port());
  HttpAnswer health = Curl(base, "GET", "/health");
  EXPECT_EQ(health.status, 503);
  EXPECT_EQ(health.json()["status"], "loading");
  HttpAnswer api = Curl(base, "POST", "/v1/completions", R"({"prompt": "x"})");
  EXPECT_EQ(api.status, 503);
  EXPECT_THAT(api.json()["error"]["message"].get<std::string>(), HasSubstr("loading"));
  io.Await([&] { return (*server)->Shutdown(std::chrono::milliseconds(100)); });
  io.Stop();
}

// With an API key, only /health answers without it: an endpoint's replica answers its gateway
// and no one else on the network.
TEST(EngineServe, WithAnApiKeyOnlyHealthAnswersWithoutIt) {
  serve::ServeState state;
  state.served_name = "m";
  state.api_key = "k3y";
  http::testing::IoThread io;
  auto server = http::Server::Start(io.io(), http::ServerOptions{}, serve::MakeServeHandler(state));
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  std::string base = "http://127.0.0.1:" + std::to_string((*server)->port());
  EXPECT_EQ(Curl(base, "GET", "/health").status, 503) << "still loading, and no key needed";
  auto with_key = [&](const std::string& path, const std::string& key) {
    std::vector<std::string> argv = CurlArgv("GET", base + path, "");
    if (!key.empty()) argv.insert(argv.end(), {"-H", "Authorization: Bearer " + key});
    return ParseCurlOutput(RunProgram(argv));
  };
  for (const char* path : {"/v1/models", "/metrics", "/v1/completions"}) {
    for (const char* key : {"", "wrong", "k3"}) {
      HttpAnswer refused = with_key(path, key);
      EXPECT_EQ(refused.status, 401) << path << " with '" << key << "'";
      EXPECT_EQ(refused.json()["error"]["code"], "invalid_api_key") << refused.body;
    }
  }
  EXPECT_EQ(with_key("/v1/models", "k3y").status, 503) << "past the key: loading";
  EXPECT_EQ(with_key("/metrics", "k3y").status, 200);
  io.Await([&] { return (*server)->Shutdown(std::chrono::milliseconds(100)); });
  io.Stop();
}

TEST(EngineServeProtocol, RefusesWhatItCannotDoNamingTheField) {
  serve::CompletionRequest cr;
  const Json chat = {{"messages", Json::array({{{"role", "user"}, {"content", "hi"}}})}};
  auto refused = [&](const Json& extra, serve::Endpoint endpoint) -> std::string {
    Json body = chat;
    if (endpoint == serve::Endpoint::kCompletions) body = {{"prompt", "hi"}};
    body.update(extra);
    auto e = serve::ParseCompletionRequest(body, endpoint, &cr);
    if (!e) return "";
    EXPECT_EQ(e->http_status, 400);
    return e->param;
  };
  const Json tool = {{"type", "function"},
                     {"function", {{"name", "f"}, {"parameters", Json::object()}}}};
  EXPECT_EQ(refused({{"tools", Json::array({tool})}}, serve::Endpoint::kChatCompletions), "tools");
  EXPECT_EQ(
      refused({{"functions", Json::array({tool["function"]})}}, serve::Endpoint::kChatCompletions),
      "functions");
  EXPECT_EQ(refused({{"n", 2}}, serve::Endpoint::kChatCompletions), "n");
  EXPECT_EQ(refused({{"echo", true}}, serve::Endpoint::kCompletions), "echo");
  EXPECT_EQ(refused({{"suffix", "end"}}, serve::Endpoint::kCompletions), "suffix");
  // What asks for nothing this server lacks is accepted.
  EXPECT_EQ(refused({{"tools", Json::array()}, {"tool_choice", "none"}},
                    serve::Endpoint::kChatCompletions),
            "");
  EXPECT_EQ(refused({{"n", 1}, {"echo", false}}, serve::Endpoint::kCompletions), "");
}

TEST(EngineServeProtocol, ChatRequestsAndTheirChunks) {
  serve::CompletionRequest cr;
  Json body = {
      {"messages", Json::array({{{"role", "system"}, {"content", "Be brief."}},
                                {{"role", "user"},
                                 {"content", Json::array({{{"type", "text"}, {"text", "a"}},
                                                          {{"type", "text"}, {"text", "b"}}})}}})},
      {"max_completion_tokens", 7},
      {"logprobs", true},
      {"top_logprobs", 2}};
  ASSERT_FALSE(serve::ParseCompletionRequest(body, serve::Endpoint::kChatCompletions, &cr));
  EXPECT_EQ(cr.messages[1]["content"], "ab");
  EXPECT_EQ(cr.max_tokens, 7);
  EXPECT_EQ(cr.sampling.top_logprobs, 2);
  body.erase("logprobs");
  auto e = serve::ParseCompletionRequest(body, serve::Endpoint::kChatCompletions, &cr);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->param, "top_logprobs");
  body = {{"messages", Json::array({{{"content", "no role"}}})}};
  e = serve::ParseCompletionRequest(body, serve::Endpoint::kChatCompletions, &cr);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->param, "messages[0].role");

  auto tokenizer = engine::LoadTokenizer(EngineData("llama-gqa"));
  ASSERT_TRUE(tokenizer.ok());
  serve::CompletionWriter w(serve::Endpoint::kChatCompletions, "chatcmpl-1", 5, "tiny", **tokenizer,
                            /*logprobs=*/true);
  auto first = w.FirstChunk();
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ((*first)["object"], "chat.completion.chunk");
  EXPECT_EQ((*first)["choices"][0]["delta"]["role"], "assistant");
  engine::SampledToken token;
  token.id = 300;
  token.logprob = -0.5f;
  token.top = {{300, -0.5f}, {301, -1.5f}};
  auto chunk = w.StepChunk({&token, "hey"});
  ASSERT_TRUE(chunk.has_value());
  EXPECT_EQ((*chunk)["choices"][0]["delta"]["content"], "hey");
  const Json& lp = (*chunk)["choices"][0]["logprobs"]["content"][0];
  EXPECT_EQ(lp["token"], engine::LossyUtf8((*tokenizer)->TokenBytes(300), false, nullptr));
  EXPECT_FLOAT_EQ(lp["logprob"].get<float>(), -0.5f);
  EXPECT_EQ(lp["top_logprobs"].size(), 2u);
  EXPECT_TRUE(lp["bytes"].is_array());
  EXPECT_FALSE(w.StepChunk({nullptr, ""}).has_value());  // nothing to send
  Json finish = w.FinishChunk(engine::FinishReason::kStop);
  EXPECT_EQ(finish["choices"][0]["finish_reason"], "stop");
  EXPECT_TRUE(finish["choices"][0]["delta"].empty());

  serve::CompletionWriter whole(serve::Endpoint::kChatCompletions, "chatcmpl-2", 5, "tiny",
                                **tokenizer,
                                /*logprobs=*/false);
  engine::GenerateResult result;
  result.text = "hey";
  result.finish = engine::FinishReason::kLength;
  Json j = whole.Whole(result, serve::Usage{4, 1});
  EXPECT_EQ(j["object"], "chat.completion");
  EXPECT_EQ(j["choices"][0]["message"]["role"], "assistant");
  EXPECT_EQ(j["choices"][0]["message"]["content"], "hey");
  EXPECT_EQ(j["choices"][0]["finish_reason"], "length");
  EXPECT_TRUE(j["choices"][0]["logprobs"].is_null());
  EXPECT_EQ(j["usage"]["total_tokens"], 5);
}

// An executor that keeps what it is given and never runs it: a request stays queued.
class HoldingExecutor : public serve::GenerationExecutor {
 public:
  Status Submit(serve::GenerationJob job) override {
    std::lock_guard lock(mu_);
    jobs_.push_back(std::move(job));
    return OkStatus();
  }
  void Stop() override {}
  // Waits up to 20 s for job `i` to be submitted and then cancelled by its client's going (the
  // sink's flag, which the engine polls too: there is nothing to wait on).
  bool CancelledInTime(size_t i) {
    return Eventually(
        [&] {
          std::lock_guard lock(mu_);
          return jobs_.size() > i && jobs_[i].sink->cancelled();
        },
        std::chrono::seconds(20), std::chrono::milliseconds(10));
  }

 private:
  std::mutex mu_;
  std::vector<serve::GenerationJob> jobs_;  // guarded by mu_
};

TEST(EngineServe, AClientThatGoesAwayCancelsItsRequest) {
  serve::ServeState state;
  state.served_name = "m";
  serve::LoadedModel loaded;
  auto model = engine::Model::Load(EngineData("llama-gqa"), engine::ModelOptions{});
  ASSERT_TRUE(model.ok());
  loaded.model = std::move(model).value();
  auto tokenizer = engine::LoadTokenizer(EngineData("llama-gqa"));
  ASSERT_TRUE(tokenizer.ok());
  loaded.tokenizer = std::move(tokenizer).value();
  loaded.max_model_len = loaded.model->config().MaxContext();
  auto holding = std::make_unique<HoldingExecutor>();
  HoldingExecutor* executor = holding.get();
  loaded.executor = std::move(holding);
  state.loaded.store(&loaded);
  http::testing::IoThread io;
  auto server = http::Server::Start(io.io(), http::ServerOptions{}, serve::MakeServeHandler(state));
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  std::string url = "http://127.0.0.1:" + std::to_string((*server)->port()) + "/v1/completions";

  // Streamed: the client gives up while its request waits; the server's next write fails.
  ProgramRun streamed = RunProgram({"/usr/bin/curl", "-sN", "--max-time", "1.5", url, "--data",
                                    R"({"prompt": "x", "stream": true})"});
  EXPECT_EQ(streamed.exit_code, 28) << streamed.output;  // curl's timeout
  EXPECT_THAT(streamed.output, HasSubstr(": waiting"));
  EXPECT_TRUE(executor->CancelledInTime(0));
  // Not streamed: after its first second the answer probes the connection with whitespace.
  ProgramRun whole = RunProgram(
      {"/usr/bin/curl", "-sN", "--max-time", "1.5", url, "--data", R"({"prompt": "x"})"});
  EXPECT_EQ(whole.exit_code, 28) << whole.output;
  EXPECT_TRUE(executor->CancelledInTime(1));

  io.Await([&] { return (*server)->Shutdown(std::chrono::milliseconds(100)); });
  io.Stop();
}

// A sink that cancels after `limit` steps, as a client that disconnects does.
class CancellingSink : public serve::GenerationSink {
 public:
  explicit CancellingSink(int limit, bool cancelled = false)
      : limit_(limit), cancelled_(cancelled) {}
  bool OnStep(const engine::GenerateStep& step) override {
    if (step.token != nullptr) ++steps_;
    return steps_ < limit_;
  }
  void OnDone(const Status& status, const engine::GenerateResult& result) override {
    done_.set_value({status, result});
  }
  bool cancelled() const override { return cancelled_; }
  std::pair<Status, engine::GenerateResult> Wait() { return done_.get_future().get(); }
  int steps() const { return steps_; }

 private:
  int limit_;
  bool cancelled_;
  std::atomic<int> steps_{0};
  std::promise<std::pair<Status, engine::GenerateResult>> done_;
};

TEST(EngineServeExecutor, ACancelledRequestStopsAndAGoneOneNeverStarts) {
  engine::ModelOptions options;
  options.num_threads = 1;
  auto model = engine::Model::Load(EngineData("llama-gqa"), options);
  ASSERT_TRUE(model.ok());
  auto tokenizer = engine::LoadTokenizer(EngineData("llama-gqa"));
  ASSERT_TRUE(tokenizer.ok());
  serve::ServeMetrics metrics;
  engine::BatchSchedulerOptions batching;
  batching.kv_cache_blocks = 64;
  auto created = serve::BatchExecutor::Create(**model, **tokenizer, metrics, batching);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  serve::BatchExecutor& executor = **created;
  auto job = [](std::shared_ptr<serve::GenerationSink> sink) {
    serve::GenerationJob j;
    j.prompt = {44, 73, 80};
    j.options.max_new_tokens = 400;
    j.options.stop_at_eos = false;
    j.sampling.temperature = 0;
    j.sink = std::move(sink);
    return j;
  };
  auto stops = std::make_shared<CancellingSink>(3);
  auto gone = std::make_shared<CancellingSink>(100, /*cancelled=*/true);
  ASSERT_TRUE(executor.Submit(job(stops)).ok());
  ASSERT_TRUE(executor.Submit(job(gone)).ok());
  auto [status, result] = stops->Wait();
  EXPECT_TRUE(status.ok());
  EXPECT_EQ(result.finish, engine::FinishReason::kCancelled);
  EXPECT_EQ(result.tokens.size(), 3u);
  auto [gone_status, gone_result] = gone->Wait();
  EXPECT_EQ(gone_result.finish, engine::FinishReason::kCancelled);
  EXPECT_EQ(gone->steps(), 0);
  EXPECT_EQ(metrics.running(), 0);
  EXPECT_EQ(metrics.waiting(), 0);
  std::string rendered;
  metrics.Render(rendered);  // the cancelled request's blocks are back in the pool
  EXPECT_THAT(rendered, HasSubstr("tensorfleet_engine_kv_cache_blocks_used 0\n"));
  EXPECT_THAT(rendered, HasSubstr("tensorfleet_engine_kv_cache_blocks_total 64\n"));
  // One that could never fit in the 64 blocks (1024 positions) is refused at once.
  serve::GenerationJob huge = job(std::make_shared<CancellingSink>(1));
  huge.options.max_new_tokens = 2000;
  Status refused = executor.Submit(std::move(huge));
  EXPECT_EQ(refused.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.message(), HasSubstr("up to 512"));
  executor.Stop();
  EXPECT_EQ(executor.Submit(job(std::make_shared<CancellingSink>(1))).code(),
            StatusCode::kUnavailable);
}

}  // namespace
}  // namespace tf::testing
