// Choosing the next token from a row of logits: penalties, temperature, top-k, top-p, a seeded
// generator, and the log-probabilities of the choice.
//
// Order of operations (as Hugging Face and vLLM apply them): logit_bias; the repetition penalty
// (HF: over the prompt and the generated tokens, a positive logit divided by it, a negative one
// multiplied); the frequency and presence penalties (OpenAI: logit -= count * frequency +
// (count > 0) * presence, counting generated tokens only); then temperature 0 takes the argmax
// (ties: the lowest id), otherwise logits / temperature, the top_k highest, the smallest set of
// those whose probabilities reach top_p, and a draw from what is left. Candidates are ordered by
// logit, then by id, so that a seed gives the same tokens on every platform for the same logits.
//
// Log-probabilities are those of the model's own distribution (log-softmax of the raw logits,
// before any penalty or temperature), as vLLM reports them by default.
//
// Thread safety: a Sampler belongs to one sequence; it is not thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "base/status.h"

namespace tf::engine {

// xoshiro256** seeded through splitmix64: the same numbers from the same seed everywhere.
class SeededRandom {
 public:
  explicit SeededRandom(uint64_t seed);
  uint64_t Next();
  // Uniform in [0, 1), from the top 53 bits of Next().
  double NextDouble();

 private:
  uint64_t s_[4];
};

struct SamplingParams {
  float temperature = 1.0f;             // 0: greedy
  int64_t top_k = 0;                    // 0: no limit
  float top_p = 1.0f;                   // in (0, 1]
  std::optional<uint64_t> seed;         // unset: a random seed
  float repetition_penalty = 1.0f;      // > 0; 1: none
  float frequency_penalty = 0.0f;       // [-2, 2] in OpenAI's API
  float presence_penalty = 0.0f;        // [-2, 2]
  std::map<int32_t, float> logit_bias;  // added to the logit of each id
  // Log-probabilities of the chosen token, and of this many most likely alternatives (0: only
  // the chosen one). Unset: none are computed.
  std::optional<int> top_logprobs;

  // InvalidArgument naming the field ("temperature") for a value outside its range.
  Status Validate() const;
};

struct TokenLogprob {
  int32_t id = 0;
  float logprob = 0;
};

struct SampledToken {
  int32_t id = 0;
  // Set when SamplingParams::top_logprobs is: the chosen token's log-probability, and the
  // top_logprobs most likely tokens, most likely first.
  std::optional<float> logprob;
  std::vector<TokenLogprob> top;
};

class Sampler {
 public:
  // `prompt` counts for the repetition penalty.
  Sampler(const SamplingParams& params, std::span<const int32_t> prompt);

  // Chooses the next token from `logits` ([vocab]; changed in place by penalties and
  // temperature), and remembers it for the penalties of the next call.
  SampledToken Sample(std::span<float> logits);

  uint64_t seed() const { return seed_; }

 private:
  void ApplyPenalties(std::span<float> logits) const;
  int32_t Draw(std::span<const float> logits);

  SamplingParams params_;
  uint64_t seed_;
  SeededRandom random_;
  std::unordered_map<int32_t, int64_t> generated_counts_;  // for frequency and presence
  std::vector<int32_t> seen_;    // distinct ids of prompt and output, for repetition
  std::vector<bool> seen_mask_;  // grows with the largest id seen
  std::vector<int32_t> order_;   // scratch: candidate ids
};

// The log-softmax of `logits` at `id`, and the `n` largest entries (ties: lowest id first).
float LogSoftmaxAt(std::span<const float> logits, int32_t id);
std::vector<TokenLogprob> TopLogprobs(std::span<const float> logits, int n);

}  // namespace tf::engine
