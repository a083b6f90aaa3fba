// `tensorfleet engine serve` with continuous batching, end to end: the real binary on the
// llama-gqa fixture, asked by several curl processes at once. Every answer equals the one the
// same request gets alone, and /metrics shows the KV cache.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine_serve_test_util.h"
#include "engine_test_util.h"

namespace tf::testing {
namespace {

using Json = nlohmann::json;
using ::testing::HasSubstr;

// The body of the call's answer, which must be 200.
std::string OkBody(CurlCall& call) {
  HttpAnswer a = call.Finish();
  EXPECT_EQ(a.status, 200) << a.body;
  return a.body;
}

class EngineBatchServeTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    server_ = new ChildProcess;
    // 1 MiB of 8 KiB blocks: 128 blocks of 16 positions; at most 3 requests decode together.
    base_ = StartEngineServer(*server_, {"--model", EngineData("llama-gqa"), "--threads", "2",
                                         "--kv-cache-mb", "1", "--max-batch", "3"});
    ASSERT_FALSE(base_.empty());
  }
  static void TearDownTestSuite() {
    StopEngineServer(*server_);
    delete server_;
    server_ = nullptr;
  }

  static ChildProcess* server_;
  static std::string base_;
};

ChildProcess* EngineBatchServeTest::server_ = nullptr;
std::string EngineBatchServeTest::base_;

// Eight requests of different prompt lengths and sizes, greedy and seeded, streamed and not,
// sent at once (more than --max-batch, so some wait and join as others finish), then one at a
// time: the same texts and token counts.
TEST_F(EngineBatchServeTest, ConcurrentAnswersEqualSequentialOnes) {
  std::vector<Json> bodies;
  const char* prompts[] = {"Hi", "Hello, world! How are you today?", "Once upon a time",
                           "The quick brown fox jumps over the lazy dog and keeps running"};
  for (int i = 0; i < 8; ++i) {
    Json b = {{"prompt", prompts[i % 4]}, {"max_tokens", 8 + 9 * i}, {"ignore_eos", true}};
    if (i % 2 == 0) {
      b["temperature"] = 0;
    } else {
      b["temperature"] = 0.9;
      b["seed"] = 100 + i;
    }
    bodies.push_back(b);
  }
  auto text_of = [](const std::string& body, bool streamed) {
    if (!streamed) {
      Json j = Json::parse(body, nullptr, false);
      EXPECT_FALSE(j.is_discarded()) << body;
      return j["choices"][0]["text"].get<std::string>();
    }
    std::string text;
    size_t pos = 0;
    while ((pos = body.find("data: {", pos)) != std::string::npos) {
      size_t end = body.find("\n\n", pos);
      Json chunk = Json::parse(body.substr(pos + 6, end - pos - 6), nullptr, false);
      if (!chunk["choices"].empty()) text += chunk["choices"][0]["text"].get<std::string>();
      pos = end;
    }
    EXPECT_THAT(body, HasSubstr("data: [DONE]"));
    return text;
  };
  const std::string url = base_ + "/v1/completions";
  std::vector<std::string> sequential;
  for (const Json& b : bodies) {
    CurlCall call("POST", url, b.dump());
    sequential.push_back(text_of(OkBody(call), false));
  }
  std::vector<std::unique_ptr<CurlCall>> calls;
  for (size_t i = 0; i < bodies.size(); ++i) {
    Json b = bodies[i];
    if (i % 3 == 1) b["stream"] = true;
    calls.push_back(std::make_unique<CurlCall>("POST", url, b.dump()));
  }
  for (size_t i = 0; i < calls.size(); ++i) {
    EXPECT_EQ(text_of(OkBody(*calls[i]), i % 3 == 1), sequential[i]) << "request " << i;
    EXPECT_FALSE(sequential[i].empty());
  }
}

TEST_F(EngineBatchServeTest, MetricsShowTheKvCache) {
  HttpAnswer completion =
      Curl(base_, "POST", "/v1/completions",
           Json({{"prompt", "Hi"}, {"max_tokens", 4}, {"ignore_eos", true}}).dump());
  EXPECT_EQ(completion.status, 200) << completion.body;
  HttpAnswer metrics = Curl(base_, "GET", "/metrics");
  EXPECT_EQ(metrics.status, 200);
  const std::string& m = metrics.body;
  EXPECT_THAT(m, HasSubstr("tensorfleet_engine_kv_cache_blocks_total 128\n"));
  EXPECT_THAT(m, HasSubstr("tensorfleet_engine_kv_cache_blocks_used 0\n"));
  EXPECT_THAT(m, HasSubstr("tensorfleet_engine_kv_cache_usage_ratio 0\n"));
  EXPECT_THAT(m, HasSubstr("tensorfleet_engine_requests_running 0\n"));
  EXPECT_THAT(m, HasSubstr("tensorfleet_engine_requests_waiting 0\n"));
  EXPECT_THAT(m, HasSubstr("tensorfleet_engine_generated_tokens_per_second "));
  EXPECT_THAT(m, HasSubstr("tensorfleet_engine_time_to_first_token_seconds_count "));
}

// 128 blocks hold 2048 positions, more than the model's context of 512: the context is the
// limit. A request beyond it is refused as OpenAI does.
TEST_F(EngineBatchServeTest, RequestsBeyondTheContextAreRefused) {
  HttpAnswer models = Curl(base_, "GET", "/v1/models");
  EXPECT_EQ(models.status, 200);
  EXPECT_EQ(models.json()["data"][0]["max_model_len"], 512);
  HttpAnswer refused =
      Curl(base_, "POST", "/v1/completions", Json({{"prompt", "Hi"}, {"max_tokens", 600}}).dump());
  EXPECT_THAT(refused.body, HasSubstr("context_length_exceeded"));
}

}  // namespace
}  // namespace tf::testing
