// Greedy generation: the prompt in one forward pass, then one token at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "base/status.h"
#include "engine/model.h"

namespace tf::engine {

struct GenerateOptions {
  int64_t max_new_tokens = 16;
  bool stop_at_eos = true;  // stop after a token in config().eos_token_ids
};

struct GenerateStats {
  int64_t prompt_tokens = 0;
  int64_t generated_tokens = 0;
  double prefill_seconds = 0;  // the prompt's forward pass, up to the first new token
  double decode_seconds = 0;   // every later token
};

// Appends up to max_new_tokens greedily chosen tokens (argmax of the logits) to *out, calling
// on_token (if set) with each as it is chosen; on_token returning false stops early. The
// context is capped at the model's MaxContext(): generation stops when it is full.
Status GenerateGreedy(Model& model, std::span<const int32_t> prompt, const GenerateOptions& options,
                      const std::function<bool(int32_t)>& on_token, std::vector<int32_t>* out,
                      GenerateStats* stats = nullptr);

}  // namespace tf::engine
