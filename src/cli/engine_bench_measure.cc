#include "cli/engine_bench_measure.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <random>
#include <string>

#include "engine/batch_scheduler.h"

namespace tf::cli {
namespace {

constexpr int kMaxStreams = 1024;
constexpr int kMaxRepetitions = 100;

std::vector<int32_t> RandomIds(int64_t n, int64_t vocab, std::mt19937_64& rng) {
  std::uniform_int_distribution<int32_t> pick(0, static_cast<int32_t>(vocab - 1));
  std::vector<int32_t> ids(n);
  for (auto& id : ids) id = pick(rng);
  return ids;
}

// The warm-up: a few tokens through every weight once, so that the first timed pass does not
// pay for page faults or cold caches.
Status WarmUp(engine::Model& model, std::mt19937_64& rng) {
  auto cache = model.NewCache(8);
  std::vector<float> logits;
  return model.Forward(RandomIds(4, model.config().vocab_size, rng), cache.get(), false, &logits);
}

// Runs `requests` together through the continuous-batching scheduler, as `engine serve` runs
// requests, with room for all of them at once: every stream in the batch, every prompt in the
// first step, and the blocks they will need.
Result<std::vector<engine::GenerateStats>> RunTogether(
    engine::Model& model, const std::vector<engine::GreedyRequest>& requests,
    const SecondsClock& now) {
  engine::BatchSchedulerOptions options;
  options.max_batch = static_cast<int64_t>(requests.size());
  int64_t prompts = 0;
  for (const auto& r : requests) {
    const auto prompt = static_cast<int64_t>(r.prompt.size());
    prompts += prompt;
    // Its blocks, and the spare one that admission keeps for each running sequence.
    options.kv_cache_blocks +=
        (prompt + r.max_new_tokens + engine::kKvBlockSize - 1) / engine::kKvBlockSize + 1;
  }
  options.step_tokens = std::max<int64_t>(256, prompts);
  options.now = now;
  return engine::RunGreedyBatch(model, requests, options);
}

// One prompt of `tokens` random ids; the time from its admission to its first token.
Result<double> TimePrefill(engine::Model& model, int64_t tokens, std::mt19937_64& rng,
                           const SecondsClock& now) {
  std::vector<engine::GreedyRequest> one = {{RandomIds(tokens, model.config().vocab_size, rng), 1}};
  TF_ASSIGN_OR_RETURN(auto stats, RunTogether(model, one, now));
  return stats[0].prefill_seconds;
}

// `streams` sequences with random prompts of `context` ids, each generating gen + 1 tokens:
// the first comes from its prompt's pass, the gen after it are decoded, all streams in one
// forward pass per step. The time from the first token to the last stream's last.
Result<double> TimeStreams(engine::Model& model, int streams, int64_t context, int64_t gen,
                           std::mt19937_64& rng, const SecondsClock& now) {
  std::vector<engine::GreedyRequest> requests;
  for (int i = 0; i < streams; ++i) {
    requests.push_back({RandomIds(context, model.config().vocab_size, rng), gen + 1});
  }
  TF_ASSIGN_OR_RETURN(auto stats, RunTogether(model, requests, now));
  double longest = 0;
  for (const auto& s : stats) {
    if (s.generated_tokens != gen + 1) {
      return Internal("a stream generated " + std::to_string(s.generated_tokens) +
                      " tokens instead of " + std::to_string(gen + 1));
    }
    longest = std::max(longest, s.decode_seconds);
  }
  return longest;
}

std::string Str(int64_t v) { return std::to_string(v); }

}  // namespace

double BenchTiming::MeanTokensPerSecond() const {
  if (seconds.empty()) return 0;
  double sum = 0;
  for (double s : seconds) sum += s > 0 ? tokens / s : 0;
  return sum / seconds.size();
}

double BenchTiming::StddevTokensPerSecond() const {
  if (seconds.size() < 2) return 0;
  double mean = MeanTokensPerSecond(), sq = 0;
  for (double s : seconds) {
    double d = (s > 0 ? tokens / s : 0) - mean;
    sq += d * d;
  }
  return std::sqrt(sq / (seconds.size() - 1));
}

double SteadySeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

Status CheckEngineBenchSettings(const EngineBenchSettings& s, const engine::ModelConfig* config) {
  // A sequence needs a position for its prompt and for every token it generates (the scheduler
  // counts the last one too): the prefill's prompt and its one token, a stream's context, the
  // first token and the ones decoded after it.
  const int64_t max_ctx = config != nullptr ? config->MaxContext() : INT64_MAX;
  const std::string over = " positions, more than the model's context of " + Str(max_ctx);
  if (s.prompt_tokens < 0) return InvalidArgument("--prompt must be 0 or more");
  if (s.prompt_tokens + 1 > max_ctx) {
    return InvalidArgument("--prompt " + Str(s.prompt_tokens) + " needs " +
                           Str(s.prompt_tokens + 1) + over);
  }
  if (s.gen_tokens < 1) return InvalidArgument("--gen must be at least 1");
  if (s.stream_gen_tokens < 0) return InvalidArgument("--stream-gen must be 0 or more");
  if (s.context_tokens < 1) return InvalidArgument("--context must be at least 1");
  if (s.repetitions < 1 || s.repetitions > kMaxRepetitions) {
    return InvalidArgument("--repeat must be between 1 and " + Str(kMaxRepetitions));
  }
  if (s.streams.empty()) return InvalidArgument("--streams needs at least one stream count");
  for (int n : s.streams) {
    if (n < 1 || n > kMaxStreams) {
      return InvalidArgument("--streams: " + Str(n) + " is not between 1 and " + Str(kMaxStreams));
    }
    const bool several = n > 1 && s.stream_gen_tokens > 0;
    const int64_t gen = several ? s.stream_gen_tokens : s.gen_tokens;
    if (s.context_tokens + gen + 1 > max_ctx) {
      return InvalidArgument("--context " + Str(s.context_tokens) + " and " +
                             (several ? "--stream-gen " : "--gen ") + Str(gen) + " need " +
                             Str(s.context_tokens + gen + 1) + over);
    }
  }
  return OkStatus();
}

Result<EngineBenchReport> MeasureEngine(engine::Model& model, const EngineBenchSettings& s,
                                        const SecondsClock& now, const BenchProgress& progress) {
  TF_RETURN_IF_ERROR(CheckEngineBenchSettings(s, &model.config()));
  auto say = [&](const std::string& line) {
    if (progress) progress(line);
  };
  std::mt19937_64 rng(s.seed);
  EngineBenchReport report;
  report.streams_mode = "batched: one forward pass per step over every stream";
  TF_RETURN_IF_ERROR(WarmUp(model, rng));

  if (s.prompt_tokens > 0) {
    report.prefill.tokens = s.prompt_tokens;
    for (int r = 0; r < s.repetitions; ++r) {
      say("prefill: " + Str(s.prompt_tokens) + " tokens");
      TF_ASSIGN_OR_RETURN(double secs, TimePrefill(model, s.prompt_tokens, rng, now));
      report.prefill.seconds.push_back(secs);
    }
  }
  for (int n : s.streams) {
    StreamTiming t;
    t.streams = n;
    t.tokens_per_stream = n > 1 && s.stream_gen_tokens > 0 ? s.stream_gen_tokens : s.gen_tokens;
    t.total.tokens = n * t.tokens_per_stream;
    for (int r = 0; r < s.repetitions; ++r) {
      say("decode: " + Str(n) + (n == 1 ? " stream, " : " streams, ") + Str(t.tokens_per_stream) +
          " tokens each");
      TF_ASSIGN_OR_RETURN(double secs,
                          TimeStreams(model, n, s.context_tokens, t.tokens_per_stream, rng, now));
      t.total.seconds.push_back(secs);
    }
    report.decode.push_back(std::move(t));
  }
  return report;
}

}  // namespace tf::cli
