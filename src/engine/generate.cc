#include "engine/generate.h"

#include <algorithm>
#include <chrono>

namespace tf::engine {

Status GenerateGreedy(Model& model, std::span<const int32_t> prompt, const GenerateOptions& options,
                      const std::function<bool(int32_t)>& on_token, std::vector<int32_t>* out,
                      GenerateStats* stats) {
  using Clock = std::chrono::steady_clock;
  const ModelConfig& c = model.config();
  if (prompt.empty()) return InvalidArgument("the prompt has no tokens");
  const int64_t want =
      static_cast<int64_t>(prompt.size()) + std::max<int64_t>(0, options.max_new_tokens);
  auto cache = model.NewCache(want);
  if (static_cast<int64_t>(prompt.size()) > cache->capacity()) {
    return InvalidArgument("the prompt's " + std::to_string(prompt.size()) +
                           " tokens exceed the model's context of " +
                           std::to_string(cache->capacity()));
  }
  GenerateStats local;
  GenerateStats& s = stats != nullptr ? *stats : local;
  s = GenerateStats{};
  s.prompt_tokens = static_cast<int64_t>(prompt.size());
  std::vector<float> logits;
  auto start = Clock::now();
  TF_RETURN_IF_ERROR(model.Forward(prompt, cache.get(), /*all_positions=*/false, &logits));
  auto decode_start = Clock::now();
  s.prefill_seconds = std::chrono::duration<double>(decode_start - start).count();
  for (int64_t i = 0; i < options.max_new_tokens; ++i) {
    int32_t next = static_cast<int32_t>(model.kernels().argmax(logits.data(), c.vocab_size));
    out->push_back(next);
    ++s.generated_tokens;
    if (on_token && !on_token(next)) break;
    bool eos =
        std::find(c.eos_token_ids.begin(), c.eos_token_ids.end(), next) != c.eos_token_ids.end();
    if ((options.stop_at_eos && eos) || i + 1 == options.max_new_tokens) break;
    if (cache->size() >= cache->capacity()) break;
    int32_t one[1] = {next};
    TF_RETURN_IF_ERROR(model.Forward(one, cache.get(), /*all_positions=*/false, &logits));
  }
  s.decode_seconds = std::chrono::duration<double>(Clock::now() - decode_start).count();
  return OkStatus();
}

}  // namespace tf::engine
