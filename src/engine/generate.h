// Generation: the prompt in one forward pass, then one token at a time, each chosen greedily
// (GenerateGreedy) or by a Sampler (Generate, which also decodes text and applies stop strings).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "engine/model.h"
#include "engine/sampling.h"
#include "engine/tokenizers/tokenizer.h"

namespace tf::engine {

struct GenerateOptions {
  int64_t max_new_tokens = 16;
  bool stop_at_eos = true;  // stop after a token in config().eos_token_ids
  // Generate only: the text ends before the first of these appears in it (the stop string
  // itself is not returned). Empty strings are ignored.
  std::vector<std::string> stop;
};

struct GenerateStats {
  int64_t prompt_tokens = 0;
  int64_t generated_tokens = 0;
  double prefill_seconds = 0;  // the prompt's forward pass, up to the first new token
  double decode_seconds = 0;   // every later token
  double queue_seconds = 0;    // BatchScheduler: from Submit until the sequence first ran
  // BatchScheduler: prompt tokens whose keys and values came from the prefix cache when the
  // sequence was first admitted, instead of being computed.
  int64_t cached_prompt_tokens = 0;
};

// Appends up to max_new_tokens greedily chosen tokens (argmax of the logits) to *out, calling
// on_token (if set) with each as it is chosen; on_token returning false stops early. The
// context is capped at the model's MaxContext(): generation stops when it is full.
Status GenerateGreedy(Model& model, std::span<const int32_t> prompt, const GenerateOptions& options,
                      const std::function<bool(int32_t)>& on_token, std::vector<int32_t>* out,
                      GenerateStats* stats = nullptr);

enum class FinishReason {
  kLength,     // max_new_tokens, or the context is full
  kStop,       // an end-of-sequence token or a stop string
  kCancelled,  // on_step returned false
};
// "length", "stop", "cancelled"
std::string_view FinishReasonName(FinishReason reason);

// What Generate reports as it goes.
struct GenerateStep {
  // The token just chosen; null for the last call, which only releases held-back text.
  const SampledToken* token = nullptr;
  // Text released by this step (often empty: a character split over tokens, or text that may
  // be the start of a stop string, waits until it is resolved).
  std::string_view text;
};

struct GenerateResult {
  std::vector<int32_t> tokens;  // every token chosen, the one that ended generation included
  std::string text;             // the decoded text (special tokens skipped), stop string cut
  FinishReason finish = FinishReason::kLength;
  GenerateStats stats;
  uint64_t seed = 0;  // the sampler's seed (the one given, or the random one drawn)
};

// Samples up to max_new_tokens tokens after `prompt`, decoding them with `tokenizer` as they
// come. on_step (if set) sees each token with the text it releases, then one last call with
// the remaining text; the concatenation of the texts equals result->text. Returning false from
// on_step cancels (FinishReason::kCancelled). InvalidArgument for an empty prompt, one longer
// than the context, or bad sampling parameters.
Status Generate(Model& model, const Tokenizer& tokenizer, std::span<const int32_t> prompt,
                const GenerateOptions& options, const SamplingParams& sampling,
                const std::function<bool(const GenerateStep&)>& on_step, GenerateResult* result);

// Holds back streamed text that may be the start of a stop string until it is resolved.
class StopStringMatcher {
 public:
  explicit StopStringMatcher(std::vector<std::string> stops);

  // Adds `text` and returns what may be released now. Once a stop string appears, returns the
  // text before it, sets stopped(), and ignores everything after.
  std::string Add(std::string_view text);
  // The text still held back (none of it completes a stop string); call at the end.
  std::string Finish();
  bool stopped() const { return stopped_; }

 private:
  std::vector<std::string> stops_;
  std::string held_;
  bool stopped_ = false;
};

// What Generate does with each token of one sequence, apart from running the model: sample it
// with the sequence's own Sampler, decode its text (TokenTextStream), hold back and cut stop
// strings, and decide whether generation goes on. Generate drives one; the batch scheduler
// drives one per sequence in its batch. Not thread-safe.
class SequenceGenerator {
 public:
  // `sampling` must be valid (SamplingParams::Validate). `tokenizer` may be null: then no text
  // is decoded and stop strings are not applied (token ids only). The tokenizer must outlive
  // this object.
  SequenceGenerator(const Tokenizer* tokenizer, const ModelConfig& config,
                    std::span<const int32_t> prompt, const GenerateOptions& options,
                    const SamplingParams& sampling);

  // Chooses the next token from the last position's logits ([vocab]; changed in place by the
  // sampler), and reports it with the text it releases to on_step (if set). Returns false once
  // generation has ended: an end-of-sequence token, a stop string, max_new_tokens, or on_step
  // returning false (cancelled). Call only while !ended().
  bool Add(std::span<float> logits, const std::function<bool(const GenerateStep&)>& on_step);
  // Ends generation (at the latest when the context is full): releases the held-back text
  // through one last on_step call with a null token and sets result().finish. Does nothing
  // more after a cancel, and nothing at all when called twice.
  void Finish(const std::function<bool(const GenerateStep&)>& on_step);

  // True once Add returned false (or max_new_tokens is 0).
  bool ended() const { return ended_; }
  // Tokens, text, finish reason and seed so far; stats.generated_tokens counts the tokens.
  GenerateResult& result() { return result_; }

 private:
  const Tokenizer* tokenizer_;
  std::vector<int32_t> eos_;
  GenerateOptions options_;
  Sampler sampler_;
  std::optional<TokenTextStream> stream_;
  StopStringMatcher matcher_;
  GenerateResult result_;
  bool ended_ = false;
  bool eos_seen_ = false;
  bool cancelled_ = false;
  bool finished_ = false;
};

}  // namespace tf::engine
