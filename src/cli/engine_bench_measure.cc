#include "cli/engine_bench_measure.h"

#include <chrono>
#include <climits>
#include <cmath>
#include <memory>
#include <random>
#include <string>

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

int32_t Argmax(const engine::Model& model, const std::vector<float>& logits) {
  return static_cast<int32_t>(
      model.kernels().argmax(logits.data(), static_cast<int64_t>(logits.size())));
}

// The warm-up: a few tokens through every weight once, so that the first timed pass does not
// pay for page faults or cold caches.
Status WarmUp(engine::Model& model, std::mt19937_64& rng) {
  auto cache = model.NewCache(8);
  std::vector<float> logits;
  return model.Forward(RandomIds(4, model.config().vocab_size, rng), cache.get(), false, &logits);
}

Result<double> TimePrefill(engine::Model& model, int64_t tokens, std::mt19937_64& rng,
                           const SecondsClock& now) {
  auto ids = RandomIds(tokens, model.config().vocab_size, rng);
  auto cache = model.NewCache(tokens);
  std::vector<float> logits;
  double start = now();
  TF_RETURN_IF_ERROR(model.Forward(ids, cache.get(), /*all_positions=*/false, &logits));
  return now() - start;
}

// `streams` sequences, each with its random context run first (not timed), then `gen` steps in
// which every stream runs its previous greedy token and chooses the next. The engine runs one
// sequence per forward pass, so the streams take turns within each step.
Result<double> TimeStreams(engine::Model& model, int streams, int64_t context, int64_t gen,
                           std::mt19937_64& rng, const SecondsClock& now) {
  struct Stream {
    std::unique_ptr<engine::KvCache> cache;
    int32_t next = 0;
  };
  std::vector<Stream> all(streams);
  std::vector<float> logits;
  for (Stream& s : all) {
    s.cache = model.NewCache(context + gen);
    TF_RETURN_IF_ERROR(model.Forward(RandomIds(context, model.config().vocab_size, rng),
                                     s.cache.get(), /*all_positions=*/false, &logits));
    s.next = Argmax(model, logits);
  }
  double start = now();
  for (int64_t step = 0; step < gen; ++step) {
    for (Stream& s : all) {
      TF_RETURN_IF_ERROR(model.Forward({&s.next, 1}, s.cache.get(), false, &logits));
      s.next = Argmax(model, logits);
    }
  }
  return now() - start;
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
  const int64_t max_ctx = config != nullptr ? config->MaxContext() : INT64_MAX;
  const std::string ctx_note = " exceeds the model's context of " + Str(max_ctx) + " positions";
  if (s.prompt_tokens < 0) return InvalidArgument("--prompt must be 0 or more");
  if (s.prompt_tokens > max_ctx) {
    return InvalidArgument("--prompt " + Str(s.prompt_tokens) + ctx_note);
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
    int64_t gen = n > 1 && s.stream_gen_tokens > 0 ? s.stream_gen_tokens : s.gen_tokens;
    if (s.context_tokens + gen > max_ctx) {
      return InvalidArgument("--context " + Str(s.context_tokens) + " + " +
                             (n > 1 && s.stream_gen_tokens > 0 ? "--stream-gen " : "--gen ") +
                             Str(gen) + " = " + Str(s.context_tokens + gen) + ctx_note);
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
  report.streams_mode = "round robin: one forward pass per stream and token";
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
