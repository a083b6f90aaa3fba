// The continuous-batching scheduler on the llama-gqa fixture, step by step (no clock, no
// sleeping): sequences run together give the tokens and text they give alone; admission makes
// what does not fit wait and refuses what never could; preemption, chunked prefill and cancel.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <vector>

#include "engine/batch_scheduler.h"
#include "engine/generate.h"
#include "engine/model.h"
#include "engine/tokenizers/tokenizer.h"
#include "engine_test_util.h"

namespace tf::testing {
namespace {

using engine::BatchScheduler;
using engine::BatchSchedulerOptions;
using engine::FinishReason;
using engine::GenerateResult;
using engine::SequenceRequest;
using ::testing::HasSubstr;

class BatchSchedulerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    engine::ModelOptions options;
    options.num_threads = 2;
    auto model = engine::Model::Load(EngineData("llama-gqa"), options);
    ASSERT_TRUE(model.ok()) << model.status().ToString();
    model_ = std::move(model).value();
    auto tokenizer = engine::LoadTokenizer(EngineData("llama-gqa"));
    ASSERT_TRUE(tokenizer.ok()) << tokenizer.status().ToString();
    tokenizer_ = std::move(tokenizer).value();
  }

  std::unique_ptr<BatchScheduler> Scheduler(int64_t blocks, int64_t max_batch = 16,
                                            int64_t step_tokens = 256) {
    BatchSchedulerOptions options;
    options.kv_cache_blocks = blocks;
    options.max_batch = max_batch;
    options.step_tokens = step_tokens;
    auto s = BatchScheduler::Create(*model_, tokenizer_.get(), options);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return std::move(s).value();
  }

  // What one request gets: its streamed texts, the tokens seen per step, and the end.
  struct Outcome {
    std::string streamed;
    std::vector<int32_t> tokens;
    bool done = false;
    Status status;
    GenerateResult result;
  };

  SequenceRequest Request(const std::vector<int32_t>& prompt, int64_t max_new, Outcome* out,
                          std::optional<uint64_t> seed = std::nullopt) {
    SequenceRequest r;
    r.prompt = prompt;
    r.options.max_new_tokens = max_new;
    r.options.stop_at_eos = false;
    if (seed) {
      r.sampling.temperature = 0.9f;
      r.sampling.top_k = 50;
      r.sampling.seed = seed;
    } else {
      r.sampling.temperature = 0;
    }
    r.on_step = [out](const engine::GenerateStep& step) {
      if (step.token != nullptr) out->tokens.push_back(step.token->id);
      out->streamed += step.text;
      return true;
    };
    r.on_done = [out](const Status& s, GenerateResult&& result) {
      out->done = true;
      out->status = s;
      out->result = std::move(result);
    };
    return r;
  }

  // The same request alone, through Generate.
  GenerateResult Alone(const SequenceRequest& r) {
    GenerateResult result;
    Status s =
        engine::Generate(*model_, *tokenizer_, r.prompt, r.options, r.sampling, nullptr, &result);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return result;
  }

  static std::vector<int32_t> Prompt(int64_t n, int32_t seed) {
    std::vector<int32_t> p;
    for (int64_t i = 0; i < n; ++i) {
      p.push_back(static_cast<int32_t>((int64_t{seed} * 131 + i * 37) % 1000 + 2));
    }
    return p;
  }

  std::unique_ptr<engine::Model> model_;
  std::unique_ptr<engine::Tokenizer> tokenizer_;
};

// Prompts of 3, 17, 40 and 9 tokens; two join at once, one after 3 steps and one after 7; with
// greedy and with seeded sampling, every request's tokens and text equal its run alone.
TEST_F(BatchSchedulerTest, BatchedEqualsOneAtATime) {
  for (bool sampled : {false, true}) {
    auto scheduler = Scheduler(64);
    std::vector<std::vector<int32_t>> prompts = {Prompt(3, 1), Prompt(17, 2), Prompt(40, 3),
                                                 Prompt(9, 4)};
    std::vector<int64_t> max_new = {20, 12, 25, 16}, join = {0, 0, 3, 7};
    std::vector<Outcome> outs(prompts.size());
    std::vector<SequenceRequest> requests;
    for (size_t i = 0; i < prompts.size(); ++i) {
      std::optional<uint64_t> seed;
      if (sampled) seed = 1000 + i;
      requests.push_back(Request(prompts[i], max_new[i], &outs[i], seed));
    }
    int64_t most_together = 0;
    for (int64_t step = 0; step < 200 && (step < 8 || !scheduler->idle()); ++step) {
      for (size_t i = 0; i < prompts.size(); ++i) {
        if (join[i] == step) {
          ASSERT_TRUE(scheduler->Submit(requests[i]).ok());
        }
      }
      most_together = std::max(most_together, scheduler->Step().sequences);
    }
    EXPECT_EQ(most_together, 4);
    for (size_t i = 0; i < prompts.size(); ++i) {
      ASSERT_TRUE(outs[i].done) << "request " << i;
      GenerateResult alone = Alone(requests[i]);
      EXPECT_EQ(outs[i].result.tokens, alone.tokens) << "request " << i << " sampled " << sampled;
      EXPECT_EQ(outs[i].tokens, alone.tokens);
      EXPECT_EQ(outs[i].result.text, alone.text);
      EXPECT_EQ(outs[i].streamed, alone.text);
      EXPECT_EQ(outs[i].result.finish, FinishReason::kLength);
      EXPECT_EQ(outs[i].result.stats.generated_tokens, max_new[i]);
      EXPECT_EQ(outs[i].result.stats.prompt_tokens, static_cast<int64_t>(prompts[i].size()));
    }
    EXPECT_EQ(scheduler->used_blocks(), 0);
  }
}

// A pool of 6 blocks (96 positions): two requests of 30 + 10 positions (3 blocks each) take it
// all, so the third waits, whole, until one has finished, and then gets its full answer.
TEST_F(BatchSchedulerTest, WhatDoesNotFitWaitsAndIsNotTruncated) {
  auto scheduler = Scheduler(6);
  std::vector<Outcome> outs(3);
  std::vector<SequenceRequest> requests = {Request(Prompt(30, 1), 10, &outs[0]),
                                           Request(Prompt(30, 2), 10, &outs[1]),
                                           Request(Prompt(30, 3), 10, &outs[2])};
  for (auto& r : requests) ASSERT_TRUE(scheduler->Submit(r).ok());
  scheduler->Step();
  EXPECT_EQ(scheduler->running(), 2);
  EXPECT_EQ(scheduler->waiting(), 1);
  int64_t steps = 1, first_done = -1, third_started = -1;
  while (!scheduler->idle() && steps < 200) {
    scheduler->Step();
    ++steps;
    EXPECT_LE(scheduler->used_blocks(), 6);
    if (first_done < 0 && (outs[0].done || outs[1].done)) first_done = steps;
    if (third_started < 0 && !outs[2].tokens.empty()) third_started = steps;
  }
  EXPECT_GT(third_started, first_done);
  EXPECT_GT(first_done, 0);
  for (size_t i = 0; i < outs.size(); ++i) {
    ASSERT_TRUE(outs[i].done);
    EXPECT_EQ(outs[i].result.tokens, Alone(requests[i]).tokens) << "request " << i;
    EXPECT_EQ(outs[i].result.stats.generated_tokens, 10);
    EXPECT_EQ(outs[i].result.finish, FinishReason::kLength);
  }
  EXPECT_EQ(scheduler->used_blocks(), 0);
}

TEST_F(BatchSchedulerTest, OptionsOutOfRangeAreRefused) {
  BatchSchedulerOptions options;
  options.kv_cache_blocks = 0;
  auto none = BatchScheduler::Create(*model_, nullptr, options);
  ASSERT_FALSE(none.ok());
  EXPECT_THAT(none.status().message(), HasSubstr("must have 1 to 16777216 blocks, not 0"));
  options.kv_cache_blocks = 4;
  options.max_batch = 0;
  EXPECT_THAT(BatchScheduler::Create(*model_, nullptr, options).status().message(),
              HasSubstr("max_batch must be positive"));
  options.max_batch = 4;
  options.step_tokens = -1;
  EXPECT_THAT(BatchScheduler::Create(*model_, nullptr, options).status().message(),
              HasSubstr("step_tokens must be positive"));
}

TEST_F(BatchSchedulerTest, RefusesWhatCouldNeverRun) {
  auto scheduler = Scheduler(4);  // 64 positions
  Outcome out;
  auto too_long = scheduler->Submit(Request(Prompt(50, 1), 20, &out));
  ASSERT_FALSE(too_long.ok());
  EXPECT_EQ(too_long.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(too_long.status().message(),
              HasSubstr("need 70 positions, but the whole KV cache holds 64"));
  auto context = scheduler->Submit(Request(Prompt(10, 1), 600, &out));
  ASSERT_FALSE(context.ok());
  EXPECT_THAT(context.status().message(), HasSubstr("exceed the model's context of 512"));
  auto bad_id = scheduler->Submit(Request({1, 2, 5000}, 2, &out));
  ASSERT_FALSE(bad_id.ok());
  EXPECT_THAT(bad_id.status().message(), HasSubstr("token id 5000 is outside the vocabulary"));
  auto empty = scheduler->Submit(Request({}, 2, &out));
  EXPECT_FALSE(empty.ok());
  EXPECT_FALSE(out.done);
  EXPECT_TRUE(scheduler->idle());
  EXPECT_EQ(scheduler->max_sequence_positions(), 64);
}

// Four requests whose prompts fit together but whose answers do not: the pool runs out while
// they decode, the most recently admitted ones are preempted and recomputed later, and every
// request still gets the tokens it gets alone.
TEST_F(BatchSchedulerTest, PreemptionGivesTheSameTokens) {
  auto scheduler = Scheduler(10);  // 160 positions
  std::vector<Outcome> outs(4);
  std::vector<SequenceRequest> requests;
  for (int i = 0; i < 4; ++i) requests.push_back(Request(Prompt(14, i + 1), 50, &outs[i], 7 + i));
  for (auto& r : requests) ASSERT_TRUE(scheduler->Submit(r).ok());
  int64_t preempted = 0, steps = 0;
  while (!scheduler->idle() && steps < 1000) {
    preempted += scheduler->Step().preempted;
    ++steps;
    EXPECT_LE(scheduler->used_blocks(), 10);
  }
  EXPECT_GT(preempted, 0);
  for (size_t i = 0; i < outs.size(); ++i) {
    ASSERT_TRUE(outs[i].done) << "request " << i;
    GenerateResult alone = Alone(requests[i]);
    EXPECT_EQ(outs[i].result.tokens, alone.tokens) << "request " << i;
    EXPECT_EQ(outs[i].streamed, alone.text) << "request " << i;
  }
  EXPECT_EQ(scheduler->used_blocks(), 0);
}

// A 200-token prompt arrives while another request decodes: with 32 tokens per step it is
// prefilled over 7 steps, and the decoding request gets a token in every one of them.
TEST_F(BatchSchedulerTest, LongPrefillDoesNotStarveDecode) {
  auto scheduler = Scheduler(64, 16, /*step_tokens=*/32);
  Outcome running, arriving;
  ASSERT_TRUE(scheduler->Submit(Request(Prompt(5, 1), 40, &running)).ok());
  scheduler->Step();  // its prompt
  ASSERT_EQ(running.tokens.size(), 1u);
  ASSERT_TRUE(scheduler->Submit(Request(Prompt(200, 2), 5, &arriving)).ok());
  int64_t prefill_steps = 0;
  while (arriving.tokens.empty()) {
    size_t before = running.tokens.size();
    engine::StepReport report = scheduler->Step();
    ++prefill_steps;
    EXPECT_EQ(running.tokens.size(), before + 1) << "step " << prefill_steps;
    EXPECT_EQ(report.decode_tokens, 1);
    EXPECT_LE(report.decode_tokens + report.prefill_tokens, 32);
  }
  EXPECT_EQ(prefill_steps, 7);  // ceil(200 / 31)
  while (!scheduler->idle()) scheduler->Step();
  EXPECT_EQ(arriving.result.tokens, Alone(Request(Prompt(200, 2), 5, &arriving)).tokens);
}

// Eight sequences decode with a budget of 8 tokens per step: a new prompt still gets a quarter
// of the budget (2 tokens) in every step, and the eight keep decoding.
TEST_F(BatchSchedulerTest, PromptsProgressEvenWhenDecodeFillsTheBudget) {
  // Declared before the scheduler, which outlives none of them: it ends the sequences still
  // running when it is destroyed, and reports to their outcomes.
  std::vector<Outcome> decoding(8);
  Outcome arriving;
  auto scheduler = Scheduler(64, /*max_batch=*/9, /*step_tokens=*/8);
  for (int i = 0; i < 8; ++i) {
    ASSERT_TRUE(scheduler->Submit(Request({static_cast<int32_t>(10 + i)}, 40, &decoding[i])).ok());
  }
  scheduler->Step();  // eight one-token prompts
  ASSERT_TRUE(scheduler->Submit(Request(Prompt(20, 5), 3, &arriving)).ok());
  int64_t steps = 0;
  while (arriving.tokens.empty() && steps < 100) {
    engine::StepReport report = scheduler->Step();
    ++steps;
    EXPECT_EQ(report.decode_tokens, 8);
    EXPECT_EQ(report.prefill_tokens, 2);
  }
  EXPECT_EQ(steps, 10);
  for (const Outcome& d : decoding) EXPECT_EQ(d.tokens.size(), 11u);
}

TEST_F(BatchSchedulerTest, CancelFreesBlocksAtOnce) {
  auto scheduler = Scheduler(16);
  Outcome a, b, c;
  auto ida = scheduler->Submit(Request(Prompt(40, 1), 30, &a));
  auto idb = scheduler->Submit(Request(Prompt(20, 2), 30, &b));
  ASSERT_TRUE(ida.ok() && idb.ok());
  scheduler->Step();
  scheduler->Step();
  const int64_t used = scheduler->used_blocks();
  EXPECT_EQ(used, 3 + 2);
  EXPECT_TRUE(scheduler->Cancel(*ida));
  EXPECT_TRUE(a.done);
  EXPECT_TRUE(a.status.ok());
  EXPECT_EQ(a.result.finish, FinishReason::kCancelled);
  EXPECT_EQ(scheduler->used_blocks(), 2);
  EXPECT_FALSE(scheduler->Cancel(*ida));  // already gone
  // A waiting one, and one whose stream says stop.
  auto idc = scheduler->Submit(Request(Prompt(8, 3), 30, &c));
  ASSERT_TRUE(idc.ok());
  EXPECT_TRUE(scheduler->Cancel(*idc));
  EXPECT_EQ(c.result.finish, FinishReason::kCancelled);
  EXPECT_EQ(scheduler->waiting(), 0);
  Outcome d;
  SequenceRequest stop_early = Request(Prompt(8, 4), 30, &d);
  stop_early.on_step = [&d](const engine::GenerateStep& step) {
    if (step.token != nullptr) d.tokens.push_back(step.token->id);
    return d.tokens.size() < 3;
  };
  ASSERT_TRUE(scheduler->Submit(stop_early).ok());
  while (!d.done) scheduler->Step();
  EXPECT_EQ(d.result.finish, FinishReason::kCancelled);
  EXPECT_EQ(d.tokens.size(), 3u);
  EXPECT_EQ(scheduler->used_blocks(), 2);  // only b's
  while (!scheduler->idle()) scheduler->Step();
  EXPECT_EQ(b.result.stats.generated_tokens, 30);
  EXPECT_EQ(scheduler->used_blocks(), 0);
}

TEST_F(BatchSchedulerTest, StopStringsAndEosAsGenerateDoes) {
  auto scheduler = Scheduler(32);
  SequenceRequest plain;
  Outcome first;
  plain = Request(Prompt(6, 5), 24, &first);
  GenerateResult alone = Alone(plain);
  ASSERT_GT(alone.text.size(), 6u);
  Outcome out;
  SequenceRequest r = Request(Prompt(6, 5), 24, &out);
  r.options.stop = {alone.text.substr(3, 3)};
  GenerateResult want = Alone(r);
  ASSERT_EQ(want.finish, FinishReason::kStop);
  ASSERT_TRUE(scheduler->Submit(r).ok());
  ASSERT_TRUE(scheduler->Submit(plain).ok());
  while (!scheduler->idle()) scheduler->Step();
  EXPECT_EQ(out.result.text, want.text);
  EXPECT_EQ(out.streamed, want.text);
  EXPECT_EQ(out.result.finish, FinishReason::kStop);
  EXPECT_EQ(out.result.tokens, want.tokens);
  EXPECT_EQ(first.result.text, alone.text);
}

// Prefix caching: a request whose first tokens an earlier one computed adopts their blocks
// (every full block but the one with its last token) and gets the tokens it gets alone, greedy
// and sampled, at block boundaries and between them; off, nothing is adopted.
TEST_F(BatchSchedulerTest, APromptsCachedPrefixIsAdoptedAndChangesNoToken) {
  for (bool sampled : {false, true}) {
    auto scheduler = Scheduler(64);
    const std::vector<int32_t> base = Prompt(60, 9);
    auto run = [&](const std::vector<int32_t>& prompt) {
      Outcome out;
      SequenceRequest r =
          Request(prompt, 12, &out, sampled ? std::optional<uint64_t>(77) : std::nullopt);
      EXPECT_TRUE(scheduler->Submit(r).ok());
      while (!scheduler->idle()) scheduler->Step();
      EXPECT_TRUE(out.done);
      EXPECT_EQ(out.result.tokens, Alone(r).tokens) << prompt.size() << " tokens";
      EXPECT_EQ(out.streamed, Alone(r).text);
      return out.result.stats.cached_prompt_tokens;
    };
    auto first = [&](size_t n) { return std::vector<int32_t>(base.begin(), base.begin() + n); };
    EXPECT_EQ(run(first(40)), 0) << "nothing cached yet";
    EXPECT_EQ(run(first(40)), 32) << "blocks 0-1; block 2 has the last token";
    EXPECT_EQ(run(first(33)), 32) << "only the last token left to compute";
    EXPECT_EQ(run(first(32)), 16) << "the second block has the last token";
    EXPECT_EQ(run(first(16)), 0);
    // Another tail after the shared first 37 tokens: the two full blocks before it.
    std::vector<int32_t> other = first(37);
    for (int32_t t : Prompt(20, 3)) other.push_back(t);
    EXPECT_EQ(run(other), 32);
    // Block 2 of the 40-token runs held their answers' first tokens, not these prompt tokens.
    EXPECT_EQ(run(first(60)), 32);
    EXPECT_EQ(run(first(60)), 48) << "now blocks 0-2";
    engine::PrefixCacheStats stats = scheduler->prefix_cache_stats();
    EXPECT_EQ(stats.sequences, 8);
    EXPECT_EQ(stats.hits, 6);
    EXPECT_EQ(stats.cached_tokens, 32 + 32 + 16 + 32 + 32 + 48);
    EXPECT_EQ(scheduler->used_blocks(), 0) << "cached blocks no one holds count as free";
  }
  BatchSchedulerOptions off;
  off.kv_cache_blocks = 64;
  off.prefix_caching = false;
  auto plain = BatchScheduler::Create(*model_, tokenizer_.get(), off);
  ASSERT_TRUE(plain.ok());
  for (int i = 0; i < 2; ++i) {
    Outcome out;
    ASSERT_TRUE((*plain)->Submit(Request(Prompt(40, 9), 4, &out)).ok());
    while (!(*plain)->idle()) (*plain)->Step();
    EXPECT_EQ(out.result.stats.cached_prompt_tokens, 0);
  }
  EXPECT_EQ((*plain)->prefix_cache_stats().cached_blocks, 0);
}

// What a sequence generated is cached too: the next turn of a chat, whose prompt is the last
// prompt and its answer, starts after every full block of them.
TEST_F(BatchSchedulerTest, AChatsNextTurnAdoptsThePreviousAnswer) {
  auto scheduler = Scheduler(64);
  Outcome turn1;
  ASSERT_TRUE(scheduler->Submit(Request(Prompt(10, 4), 30, &turn1)).ok());
  while (!scheduler->idle()) scheduler->Step();
  std::vector<int32_t> next = Prompt(10, 4);
  next.insert(next.end(), turn1.result.tokens.begin(), turn1.result.tokens.end());  // 40
  for (int32_t t : Prompt(5, 8)) next.push_back(t);                                 // 45
  Outcome turn2;
  SequenceRequest r = Request(next, 10, &turn2);
  ASSERT_TRUE(scheduler->Submit(r).ok());
  while (!scheduler->idle()) scheduler->Step();
  // The first turn's keys and values reached position 39 (its last token is never fed back).
  EXPECT_EQ(turn2.result.stats.cached_prompt_tokens, 32);
  EXPECT_EQ(turn2.result.tokens, Alone(r).tokens);
}

// Requests that share a prefix, arriving while the first still runs, adopt its blocks as it
// holds them; with the pool too small to keep everything, cached blocks are evicted for new
// work and what is found later is still exact.
TEST_F(BatchSchedulerTest, SharedPrefixesUnderConcurrencyAndEviction) {
  auto scheduler = Scheduler(12);  // 192 positions
  const std::vector<int32_t> system = Prompt(48, 6);
  auto with_question = [&](int32_t q) {
    std::vector<int32_t> p = system;
    for (int32_t t : Prompt(6, q)) p.push_back(t);
    return p;
  };
  std::vector<Outcome> outs(4);
  std::vector<SequenceRequest> requests;
  for (int i = 0; i < 4; ++i)
    requests.push_back(Request(with_question(20 + i), 20, &outs[i], 5 + i));
  ASSERT_TRUE(scheduler->Submit(requests[0]).ok());
  scheduler->Step();  // its whole prompt: the system prompt's 3 blocks are published
  for (int i = 1; i < 4; ++i) ASSERT_TRUE(scheduler->Submit(requests[i]).ok());
  scheduler->Step();
  EXPECT_EQ(scheduler->running(), 4);
  EXPECT_LE(scheduler->used_blocks(), 3 + 4 * 2) << "the system prompt's blocks are shared";
  int64_t steps = 0;
  while (!scheduler->idle() && steps++ < 1000) scheduler->Step();
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(outs[i].done);
    EXPECT_EQ(outs[i].result.tokens, Alone(requests[i]).tokens) << "request " << i;
    EXPECT_EQ(outs[i].result.stats.cached_prompt_tokens, i == 0 ? 0 : 48) << "request " << i;
  }
  // Unrelated work that needs the whole pool evicts the cache; the system prompt is computed
  // again, and cached again, afterwards.
  Outcome big;
  ASSERT_TRUE(scheduler->Submit(Request(Prompt(150, 7), 40, &big)).ok());
  while (!scheduler->idle()) scheduler->Step();
  EXPECT_GT(scheduler->prefix_cache_stats().evictions, 0);
  for (int round = 0; round < 2; ++round) {
    Outcome again;
    SequenceRequest r = Request(with_question(30), 8, &again);
    ASSERT_TRUE(scheduler->Submit(r).ok());
    while (!scheduler->idle()) scheduler->Step();
    EXPECT_EQ(again.result.tokens, Alone(r).tokens) << "round " << round;
    EXPECT_EQ(again.result.stats.cached_prompt_tokens, round == 0 ? 0 : 48) << "round " << round;
  }
  EXPECT_EQ(big.result.tokens, Alone(Request(Prompt(150, 7), 40, &big)).tokens);
}

TEST_F(BatchSchedulerTest, GreedyBatchForBenchmarks) {
  BatchSchedulerOptions options;
  options.kv_cache_blocks = 64;
  options.max_batch = 2;
  double now = 0;
  options.now = [&now] { return now += 0.5; };  // every reading half a second later
  std::vector<engine::GreedyRequest> requests = {
      {Prompt(10, 1), 8}, {Prompt(4, 2), 5}, {Prompt(20, 3), 3}};
  auto stats = engine::RunGreedyBatch(*model_, requests, options);
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  ASSERT_EQ(stats->size(), 3u);
  for (size_t i = 0; i < requests.size(); ++i) {
    EXPECT_EQ((*stats)[i].prompt_tokens, static_cast<int64_t>(requests[i].prompt.size()));
    EXPECT_EQ((*stats)[i].generated_tokens, requests[i].max_new_tokens);
    EXPECT_GT((*stats)[i].prefill_seconds, 0);
    EXPECT_GT((*stats)[i].decode_seconds, 0);
  }
  EXPECT_GT((*stats)[2].queue_seconds, (*stats)[0].queue_seconds);  // waited for a slot
  requests.push_back({Prompt(10, 1), 2000});
  auto refused = engine::RunGreedyBatch(*model_, requests, options);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("request 3: "));
}

}  // namespace
}  // namespace tf::testing
