// What `endpoint describe` shows of an endpoint's recent traffic: the gateway's recent requests
// (endpoints/recent_requests.h) summarized over a fake clock's window, and the tokens counted in
// whole answers and in streams split anywhere (endpoints/completion_tokens.h).
#include <gtest/gtest.h>

#include "endpoints/completion_tokens.h"
#include "endpoints/recent_requests.h"

namespace tf::endpoints {
namespace {

constexpr TimeMs kNow = 1'000'000'000;

TEST(RecentRequestsTest, SummarizesTheWindowWithNearestRankPercentiles) {
  RecentRequests recent;
  // 100 answers of 1..100 ms, 2 tokens each, first byte at a tenth; one 503 and one 429.
  for (int i = 1; i <= 100; ++i) {
    recent.Add("ep_a", {kNow - 1000 + i, 200, i / 1000.0, i / 10000.0, 2});
  }
  recent.Add("ep_a", {kNow, 503, 30.0, 30.0, 0});
  recent.Add("ep_a", {kNow, 429, 0.001, 0.001, 0});
  recent.Add("ep_b", {kNow, 200, 5.0, 1.0, 7});

  RecentSummary a = recent.Summarize("ep_a", kNow);
  EXPECT_EQ(a.requests, 102);
  EXPECT_EQ(a.errors, 2);
  EXPECT_DOUBLE_EQ(a.requests_per_second, 102.0 / 300);
  EXPECT_DOUBLE_EQ(a.p50_seconds, 0.050);  // the failures are not in the latencies
  EXPECT_DOUBLE_EQ(a.p90_seconds, 0.090);
  EXPECT_DOUBLE_EQ(a.p99_seconds, 0.099);
  EXPECT_DOUBLE_EQ(a.p50_first_byte_seconds, 0.0050);
  EXPECT_EQ(a.completion_tokens, 200);
  EXPECT_DOUBLE_EQ(a.tokens_per_second, 200.0 / 300);
  EXPECT_EQ(recent.Summarize("ep_b", kNow).completion_tokens, 7);
  EXPECT_EQ(recent.Summarize("ep_none", kNow).requests, 0);

  // Five minutes on, only what ended within the window counts.
  EXPECT_EQ(recent.Summarize("ep_a", kNow + kRecentWindowMs - 1).requests, 2);
  RecentSummary later = recent.Summarize("ep_a", kNow + kRecentWindowMs);
  EXPECT_EQ(later.requests, 0);
  EXPECT_EQ(later.p99_seconds, 0);
}

TEST(RecentRequestsTest, KeepsAtMostItsBoundPerEndpoint) {
  RecentRequests recent;
  for (size_t i = 0; i < kMaxRecentRequests + 10; ++i) recent.Add("ep_a", {kNow, 200, 0.1, 0.1, 1});
  EXPECT_EQ(recent.Summarize("ep_a", kNow).requests, static_cast<int64_t>(kMaxRecentRequests));
}

TEST(CompletionTokensTest, AWholeAnswerCountsItsUsage) {
  EXPECT_EQ(
      CompletionTokensOf(R"({"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":9}})"), 9);
  EXPECT_EQ(CompletionTokensOf(R"({"choices":[]})"), 0);
  EXPECT_EQ(CompletionTokensOf("not json"), 0);
}

// Read without building the document: only the answer's own usage counts, as a whole parse
// would find it.
TEST(CompletionTokensTest, OnlyTheAnswersOwnUsageCounts) {
  // A usage nested elsewhere, or a completion_tokens outside usage, is not the answer's.
  EXPECT_EQ(CompletionTokensOf(
                R"({"choices":[{"usage":{"completion_tokens":5}}],"completion_tokens":7})"),
            0);
  EXPECT_EQ(CompletionTokensOf(R"({"usage":{"details":{"completion_tokens":5}}})"), 0);
  // Keys after the nested object still count; other values around it do not confuse it.
  EXPECT_EQ(
      CompletionTokensOf(
          R"({"usage":{"details":{"completion_tokens":5},"completion_tokens":12},"x":[1,{}]})"),
      12);
  // The last of a repeated key wins, as in a parsed document.
  EXPECT_EQ(
      CompletionTokensOf(R"({"usage":{"completion_tokens":3},"usage":{"completion_tokens":4}})"),
      4);
  EXPECT_EQ(CompletionTokensOf(R"({"usage":{"completion_tokens":3},"usage":null})"), 0);
  // Not a count: a string, a fraction, an array at the top, or a broken document.
  EXPECT_EQ(CompletionTokensOf(R"({"usage":{"completion_tokens":"3"}})"), 0);
  EXPECT_EQ(CompletionTokensOf(R"({"usage":{"completion_tokens":3.5}})"), 0);
  EXPECT_EQ(CompletionTokensOf(R"([{"usage":{"completion_tokens":3}}])"), 0);
  EXPECT_EQ(CompletionTokensOf(R"({"usage":{"completion_tokens":3}})"), 3);
  EXPECT_EQ(CompletionTokensOf(R"({"usage":{"completion_tokens":3}} trailing)"), 0);
  EXPECT_EQ(CompletionTokensOf(R"({"usage":{"completion_tokens":3})"), 0);
}

TEST(CompletionTokensTest, AStreamCountsEventsWithTextWhereverItIsSplit) {
  const std::string stream =
      "data: {\"choices\":[{\"delta\":{\"role\":\"assistant\"}}]}\n\n"
      "data: {\"choices\":[{\"delta\":{\"content\":\"Hel\"}}]}\n\n"
      "data: {\"choices\":[{\"delta\":{\"content\":\"lo\"}}]}\n\n"
      "data: {\"choices\":[{\"text\":\"!\"}]}\n\n"
      "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"
      "data: [DONE]\n\n";
  for (size_t split = 0; split <= stream.size(); split += 7) {
    StreamTokenCounter counter;
    counter.Feed(stream.substr(0, split));
    counter.Feed(stream.substr(split));
    EXPECT_EQ(counter.tokens(), 3) << "split at " << split;
  }
  StreamTokenCounter byte_by_byte;
  for (char c : stream) byte_by_byte.Feed(std::string_view(&c, 1));
  EXPECT_EQ(byte_by_byte.tokens(), 3);
}

TEST(CompletionTokensTest, AStreamsUsageWinsOverItsEvents) {
  StreamTokenCounter counter;
  counter.Feed(
      "data: {\"choices\":[{\"delta\":{\"content\":\"Hello there\"}}]}\n\n"
      "data: {\"choices\":[],\"usage\":{\"completion_tokens\":2}}\n\ndata: [DONE]\n\n");
  EXPECT_EQ(counter.tokens(), 2);
}

}  // namespace
}  // namespace tf::endpoints
