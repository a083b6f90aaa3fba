// The inference gateway end to end (/openai/v1/ on a real server, replicas run by a real
// worker): OpenAI's own Node.js client unchanged, scale from zero and back with no request lost,
// a replica killed mid-stream failing only its own request, a full queue and a wait that times
// out, one project's endpoints invisible to another's token, and no credential passed on (a
// replica gets its own key).
// Replicas are the built-in engine on the small test model, or tests/endpoints/echo_server.py
// as a `command:` engine (quick to start, and it reports what it was sent).
#include <signal.h>

#include <filesystem>
#include <mutex>
#include <thread>

#include "endpoints_test_util.h"
#include "engine_test_util.h"

namespace tf::testing {
namespace {

using Json = nlohmann::json;

std::string EchoCommand() {
  return "[/usr/bin/python3, " + std::string(TENSORFLEET_SOURCE_DIR) +
         "/tests/endpoints/echo_server.py, --host, '{host}', --port, '{port}']";
}

// An echo endpoint's spec, with `more` appended.
std::string EchoSpec(const std::string& name, const std::string& more) {
  return "name: " + name + "\nmodel: /unused\nengine:\n  command: " + EchoCommand() +
         "\n  readiness: {path: /health, timeout: 1m}\nresources: {cpus: 1}\n" + more;
}

Json ChatBody(const std::string& model, const std::string& said, bool stream = false) {
  Json body = {{"model", model}, {"messages", {{{"role", "user"}, {"content", said}}}}};
  if (stream) body["stream"] = true;
  return body;
}

// A streamed request through the gateway on a thread of its own: what came, and how it ended.
class StreamingCall {
 public:
  StreamingCall(const std::string& url, const std::string& token, const Json& body) {
    thread_ = std::thread([=, this] {
      auto client = http::Client::Create(url);
      if (!client.ok()) return;
      auto r = (*client)->SendStreaming(
          "POST", "/openai/v1/chat/completions",
          {{"Content-Type", "application/json"}, {"Authorization", "Bearer " + token}}, body.dump(),
          std::chrono::seconds(60), [this](std::string_view piece) {
            std::lock_guard lock(mu_);
            received_.append(piece);
            return true;
          });
      std::lock_guard lock(mu_);
      status_ = r.ok() ? r->status : -1;
      ended_ = true;
    });
  }
  ~StreamingCall() { Join(); }
  void Join() {
    if (thread_.joinable()) thread_.join();
  }
  std::string received() {
    std::lock_guard lock(mu_);
    return received_;
  }
  bool finished() {  // the whole stream, to its [DONE]
    return received().find("data: [DONE]") != std::string::npos;
  }

 private:
  std::thread thread_;
  std::mutex mu_;
  std::string received_;
  int status_ = 0;
  bool ended_ = false;
};

// The port in an echo replica's first streamed event ("echo@30123 heard: ...").
std::string EchoPortIn(const std::string& stream) {
  size_t at = stream.find("echo@");
  if (at == std::string::npos) return "";
  size_t end = stream.find(' ', at);
  return stream.substr(at + 5, end - at - 5);
}

class GatewayTest : public EndpointsFixture {};

TEST_P(GatewayTest, OpenAisOwnClientWorksUnchangedFromZero) {
  std::string client_dir = std::string(TENSORFLEET_SOURCE_DIR) + "/tests/openai-client";
  if (!std::filesystem::exists(client_dir + "/node_modules/openai")) {
    GTEST_SKIP() << "OpenAI's Node.js client is not installed in " << client_dir
                 << " (scripts/install-deps.sh installs it from the npm registry)";
  }
  // The test model with a ChatML chat template, so that chat completions render.
  std::string model = (dir_.path() / "chat-model").string();
  std::filesystem::create_directories(model);
  for (const char* f : {"config.json", "model.safetensors", "tokenizer.json"}) {
    std::filesystem::copy_file(EngineData(std::string("llama-gqa/") + f), model + "/" + f);
  }
  std::ofstream(model + "/tokenizer_config.json") << Json{
      {"chat_template",
       "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + "
       "message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}{% if "
       "add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"},
      {"bos_token", "<s>"},
      {"eos_token", "</s>"}}.dump();
  Up("chat", "name: chat\nmodel: " + model +
                 "\nengine:\n  builtin: {threads: 1, kv_cache: 64Mi, max_batch: 4}\n"
                 "resources: {cpus: 1}\nreplicas: {min: 0, max: 1}\n");
  EXPECT_TRUE(Describe("chat")["replicas"].empty());

  ProgramRun node = RunProgram({"/usr/bin/env", "node", client_dir + "/chat.mjs",
                                server_->url() + "/openai/v1", token_, "chat"});
  ASSERT_EQ(node.exit_code, 0) << node.output << "\n" << Describe("chat").dump(2);
  Json out = Json::parse(node.output, nullptr, false);
  ASSERT_TRUE(out.is_object()) << node.output;
  EXPECT_EQ(out["whole"]["object"], "chat.completion");
  EXPECT_EQ(out["whole"]["model"], "chat");
  EXPECT_EQ(out["whole"]["tokens"], 8);
  EXPECT_GE(out["stream"]["chunks"], 2);
  EXPECT_EQ(out["completion"]["object"], "text_completion");
  EXPECT_EQ(out["completion"]["tokens"], 4);
  EXPECT_EQ(out["missing"]["status"], 404);
  EXPECT_EQ(out["missing"]["code"], "model_not_found");
  EXPECT_EQ(out["missing"]["param"], "model");
  EXPECT_EQ(out["models"], Json::array({"chat"}));
}

TEST_P(GatewayTest, ScalesFromZeroAndBackWithNoRequestLostAndNoCredentialPassedOn) {
  Up("echo", EchoSpec("echo",
                      "replicas: {min: 0, max: 2}\n"
                      "autoscaling: {scale_to_zero_after: 10s, downscale_delay: 5s}\n"));
  EXPECT_TRUE(Describe("echo")["replicas"].empty());
  // Eight requests at once at an endpoint with no replica: they wait, none is lost.
  std::vector<std::pair<int, std::string>> answers(8);
  std::vector<std::thread> callers;
  for (int i = 0; i < 8; ++i) {
    callers.emplace_back([&, i] {
      answers[i] = Post("/openai/v1/chat/completions", ChatBody("echo", "n" + std::to_string(i)));
    });
  }
  for (auto& t : callers) t.join();
  for (int i = 0; i < 8; ++i) {
    ASSERT_EQ(answers[i].first, 200) << answers[i].second;
    Json a = Json::parse(answers[i].second);
    std::string content = a["choices"][0]["message"]["content"];
    EXPECT_NE(content.find("heard: n" + std::to_string(i)), std::string::npos) << content;
    // The replica got its own key (which it checked), so not the client's token.
    EXPECT_EQ(a["key_checked"], true) << answers[i].second;
  }
  Json e = Describe("echo");
  EXPECT_NE(e["scaling"].dump().find("waiting and no replica: from 0 to"), std::string::npos)
      << e.dump(2);

  // Idle: back to zero, and a request then starts a replica again.
  WaitFor(
      "echo", [](const Json& e) { return e["replicas"].empty(); }, "scale to zero",
      std::chrono::seconds(60));
  auto again = Post("/openai/v1/chat/completions", ChatBody("echo", "again"));
  EXPECT_EQ(again.first, 200) << again.second;

  // The gateway's metrics count all nine.
  auto client = http::Client::Create(server_->url());
  ASSERT_TRUE(client.ok());
  auto metrics = (*client)->Send("GET", "/metrics", {{"Authorization", "Bearer " + token_}}, "",
                                 std::chrono::seconds(10));
  ASSERT_TRUE(metrics.ok());
  for (const char* series :
       {"endpoint=\"echo\",code=\"200\"} 9\n", "tensorfleet_endpoint_request_seconds_count{",
        "} 9\n", "tensorfleet_endpoint_first_byte_seconds_bucket{",
        "tensorfleet_endpoint_queue_depth{", "tensorfleet_endpoint_in_flight{",
        "tensorfleet_endpoint_replicas{"}) {
    EXPECT_NE(metrics->body.find(series), std::string::npos) << series << "\n" << metrics->body;
  }
}

TEST_P(GatewayTest, AReplicaKilledMidStreamFailsOnlyItsOwnRequest) {
  Up("echo", EchoSpec("echo", "replicas: {min: 2, max: 2}\n"));
  WaitFor(
      "echo", [](const Json& e) { return e["replica_counts"].value("ready", 0) == 2; },
      "two ready replicas");
  auto slow = [](const std::string& said) {
    Json body = ChatBody("echo", said, true);
    body["events"] = 40;
    body["interval"] = 0.1;  // four seconds of stream
    return body;
  };
  StreamingCall victim(server_->url(), token_, slow("victim"));
  ASSERT_TRUE(Eventually([&] { return !EchoPortIn(victim.received()).empty(); }))
      << victim.received();
  std::string doomed = EchoPortIn(victim.received());
  // A second stream on the other replica (the balancer prefers the idle one; prompts that map
  // to the busy one are tried again with another prompt).
  std::unique_ptr<StreamingCall> bystander;
  std::vector<std::unique_ptr<StreamingCall>> on_the_doomed_one;  // joined at the end
  for (int i = 0; i < 10 && !bystander; ++i) {
    auto call = std::make_unique<StreamingCall>(server_->url(), token_,
                                                slow("bystander " + std::to_string(i)));
    ASSERT_TRUE(Eventually([&] { return !EchoPortIn(call->received()).empty(); }));
    if (EchoPortIn(call->received()) != doomed) {
      bystander = std::move(call);
    } else {
      on_the_doomed_one.push_back(std::move(call));
    }
  }
  ASSERT_TRUE(bystander) << "no stream reached the second replica";

  pid_t pid = FindProcess({"echo_server.py", "--port " + doomed});
  ASSERT_GT(pid, 0);
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  victim.Join();
  bystander->Join();
  EXPECT_FALSE(victim.finished()) << "the killed replica's stream cannot have ended well";
  EXPECT_TRUE(bystander->finished()) << bystander->received();
  // A replacement takes the killed one's place.
  WaitFor(
      "echo",
      [&](const Json& e) {
        int ready = 0;
        for (const Json& r : e["replicas"]) {
          ready += r["state"] == "ready" && PortOf(r["address"]) != doomed;
        }
        return ready == 2;
      },
      "a replacement replica");
}

TEST_P(GatewayTest, AFullQueueIsRefusedAndAWaitThatTimesOutSaysWhy) {
  // Replicas that never become ready: their server never answers its readiness check.
  std::string never =
      "name: never\nmodel: /unused\nengine:\n  command: sleep 600\n"
      "resources: {cpus: 1}\nreplicas: {min: 0, max: 1}\n";
  Up("never", never + "max_queue: 0\n");
  auto full = Post("/openai/v1/chat/completions", ChatBody("never", "hi"));
  EXPECT_EQ(full.first, 429) << full.second;
  Json error = Json::parse(full.second)["error"];
  EXPECT_EQ(error["code"], "rate_limit_exceeded");
  EXPECT_NE(error["message"].get<std::string>().find("max_queue"), std::string::npos);

  Up("never", never + "max_queue: 4\nqueue_timeout: 1s\n");
  auto waited = Post("/openai/v1/chat/completions", ChatBody("never", "hi"));
  EXPECT_EQ(waited.first, 503) << waited.second;
  error = Json::parse(waited.second)["error"];
  EXPECT_EQ(error["code"], "service_unavailable");
  EXPECT_NE(error["message"].get<std::string>().find("within 1 s"), std::string::npos)
      << error.dump();

  auto bad = Post("/openai/v1/chat/completions", Json{{"messages", Json::array()}});
  EXPECT_EQ(bad.first, 400);
  EXPECT_EQ(Json::parse(bad.second)["error"]["param"], "model");
}

TEST_P(GatewayTest, AnotherProjectsTokenFindsNoEndpoint) {
  Up("echo", EchoSpec("echo", "replicas: {min: 1, max: 1}\n"));
  std::string other = "other-" + run_;
  ASSERT_EQ(Run({"project", "create", other}, server_->token()).exit_code, 0);
  ProgramRun issued =
      Run({"--json", "token", "create", "bob", "--project", other}, server_->token());
  ASSERT_EQ(issued.exit_code, 0) << issued.output;
  std::string bob = Json::parse(issued.output)["secret"];

  auto theirs = Post("/openai/v1/chat/completions", ChatBody("echo", "hi"), bob);
  EXPECT_EQ(theirs.first, 404) << theirs.second;
  EXPECT_EQ(Json::parse(theirs.second)["error"]["code"], "model_not_found");
  auto mine = Post("/openai/v1/chat/completions", ChatBody("echo", "hi"));
  EXPECT_EQ(mine.first, 200) << mine.second;

  auto client = http::Client::Create(server_->url());
  ASSERT_TRUE(client.ok());
  auto models = (*client)->Send("GET", "/openai/v1/models", {{"Authorization", "Bearer " + bob}},
                                "", std::chrono::seconds(10));
  ASSERT_TRUE(models.ok());
  EXPECT_TRUE(Json::parse(models->body)["data"].empty()) << models->body;
  auto anonymous = (*client)->Send("GET", "/openai/v1/models", {}, "", std::chrono::seconds(10));
  ASSERT_TRUE(anonymous.ok());
  EXPECT_EQ(anonymous->status, 401);
}

INSTANTIATE_TEST_SUITE_P(Backends, GatewayTest, ::testing::ValuesIn(StoreBackends()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace tf::testing
