// What `tensorfleet engine bench` measures, apart from its command line: how fast a model
// prefills a prompt, and how many tokens per second it decodes with one stream and with several
// streams decoding at once. Token ids are random, each next token is the greedy choice (the
// argmax of the logits) and end-of-sequence tokens do not stop a stream, as llama.cpp's
// llama-bench and llama-batched-bench measure.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "engine/config.h"
#include "engine/model.h"

namespace tf::cli {

struct EngineBenchSettings {
  int64_t prompt_tokens = 512;  // the prefill measurement's prompt; 0 skips it
  int64_t gen_tokens = 64;      // tokens one stream decodes
  // Tokens each stream decodes when several run at once; 0: gen_tokens.
  int64_t stream_gen_tokens = 0;
  // Random prompt each stream runs before its decoding is timed (at least 1: decoding needs a
  // previous token).
  int64_t context_tokens = 1;
  std::vector<int> streams = {1, 4, 16, 64};  // stream counts to decode with
  int repetitions = 1;                        // each measurement runs this many times
  uint64_t seed = 1;                          // for the random token ids
};

// InvalidArgument naming the flag (--prompt, --gen, --stream-gen, --context, --streams,
// --repeat) when a setting is out of range or, given a config, would not fit its context (a
// sequence needs positions for its prompt and every token it generates).
Status CheckEngineBenchSettings(const EngineBenchSettings& settings,
                                const engine::ModelConfig* config);

// One measurement, repeated.
struct BenchTiming {
  int64_t tokens = 0;           // tokens processed in each repetition
  std::vector<double> seconds;  // each repetition's time
  // The mean over repetitions of tokens / seconds (as llama-bench averages), and their
  // standard deviation (0 with one repetition).
  double MeanTokensPerSecond() const;
  double StddevTokensPerSecond() const;
};

struct StreamTiming {
  int streams = 0;
  int64_t tokens_per_stream = 0;
  BenchTiming total;  // tokens: streams * tokens_per_stream
};

struct EngineBenchReport {
  BenchTiming prefill;               // empty when prompt_tokens is 0
  std::vector<StreamTiming> decode;  // one per stream count, in the order given
  std::string streams_mode;          // how several streams ran (see MeasureEngine)
};

// Monotonic time in seconds; tests pass a clock of their own.
using SecondsClock = std::function<double()>;
double SteadySeconds();

// Progress lines for a person watching ("prefill: 512 tokens ..."); may be null.
using BenchProgress = std::function<void(std::string_view)>;

// Runs `settings` (checked first) on `model`: one short warm-up pass; the prefill of
// prompt_tokens random ids (from admission to the first token); then for each stream count S,
// S sequences with random prompts of context_tokens ids (not timed) that each generate their
// first token and then decode their tokens, timed from the first token to the last stream's
// last. Everything runs through the continuous-batching scheduler (engine::RunGreedyBatch),
// as `engine serve` runs requests, sized so that every stream runs in one batch: each step is
// one forward pass over every stream.
Result<EngineBenchReport> MeasureEngine(engine::Model& model, const EngineBenchSettings& settings,
                                        const SecondsClock& now, const BenchProgress& progress);

}  // namespace tf::cli
