#include "engine/generate.h"

#include <algorithm>
#include <chrono>

namespace tf::engine {
namespace {

using SteadyClock = std::chrono::steady_clock;

enum class LoopEnd { kLength, kEos, kStopped };

// The loop both generators share: prefill, then choose and feed back one token at a time.
// `choose` picks a token from the last position's logits; `accept` sees it and returns false
// to stop there.
template <typename Choose, typename Accept>
Status DecodeLoop(Model& model, std::span<const int32_t> prompt, const GenerateOptions& options,
                  Choose&& choose, Accept&& accept, GenerateStats* stats, LoopEnd* end) {
  const ModelConfig& c = model.config();
  *end = LoopEnd::kLength;
  if (prompt.empty()) return InvalidArgument("the prompt has no tokens");
  const int64_t want =
      static_cast<int64_t>(prompt.size()) + std::max<int64_t>(0, options.max_new_tokens);
  auto cache = model.NewCache(want);
  if (static_cast<int64_t>(prompt.size()) > cache->capacity()) {
    return InvalidArgument("the prompt's " + std::to_string(prompt.size()) +
                           " tokens exceed the model's context of " +
                           std::to_string(cache->capacity()));
  }
  GenerateStats& s = *stats;
  s = GenerateStats{};
  s.prompt_tokens = static_cast<int64_t>(prompt.size());
  std::vector<float> logits;
  auto start = SteadyClock::now();
  TF_RETURN_IF_ERROR(model.Forward(prompt, cache.get(), /*all_positions=*/false, &logits));
  auto decode_start = SteadyClock::now();
  s.prefill_seconds = std::chrono::duration<double>(decode_start - start).count();
  for (int64_t i = 0; i < options.max_new_tokens; ++i) {
    int32_t next = choose(std::span<float>(logits.data(), c.vocab_size));
    ++s.generated_tokens;
    if (!accept(next)) {
      *end = LoopEnd::kStopped;
      break;
    }
    bool eos =
        std::find(c.eos_token_ids.begin(), c.eos_token_ids.end(), next) != c.eos_token_ids.end();
    if (options.stop_at_eos && eos) {
      *end = LoopEnd::kEos;
      break;
    }
    if (i + 1 == options.max_new_tokens) break;
    if (cache->size() >= cache->capacity()) break;
    int32_t one[1] = {next};
    TF_RETURN_IF_ERROR(model.Forward(one, cache.get(), /*all_positions=*/false, &logits));
  }
  s.decode_seconds = std::chrono::duration<double>(SteadyClock::now() - decode_start).count();
  return OkStatus();
}

}  // namespace

Status GenerateGreedy(Model& model, std::span<const int32_t> prompt, const GenerateOptions& options,
                      const std::function<bool(int32_t)>& on_token, std::vector<int32_t>* out,
                      GenerateStats* stats) {
  GenerateStats local;
  LoopEnd end;
  auto choose = [&](std::span<float> logits) {
    return static_cast<int32_t>(model.kernels().argmax(logits.data(), logits.size()));
  };
  auto accept = [&](int32_t id) {
    out->push_back(id);
    return !on_token || on_token(id);
  };
  return DecodeLoop(model, prompt, options, choose, accept, stats != nullptr ? stats : &local,
                    &end);
}

std::string_view FinishReasonName(FinishReason reason) {
  switch (reason) {
    case FinishReason::kLength:
      return "length";
    case FinishReason::kStop:
      return "stop";
    case FinishReason::kCancelled:
      return "cancelled";
  }
  return "length";
}

Status Generate(Model& model, const Tokenizer& tokenizer, std::span<const int32_t> prompt,
                const GenerateOptions& options, const SamplingParams& sampling,
                const std::function<bool(const GenerateStep&)>& on_step, GenerateResult* result) {
  TF_RETURN_IF_ERROR(sampling.Validate());
  *result = GenerateResult{};
  Sampler sampler(sampling, prompt);
  result->seed = sampler.seed();
  TokenTextStream stream(tokenizer, /*skip_special_tokens=*/true);
  StopStringMatcher matcher(options.stop);
  SampledToken last;
  bool cancelled = false;
  auto choose = [&](std::span<float> logits) {
    last = sampler.Sample(logits);
    return last.id;
  };
  auto accept = [&](int32_t id) {
    result->tokens.push_back(id);
    std::string text = matcher.Add(stream.Add(id));
    result->text += text;
    if (on_step && !on_step(GenerateStep{&last, text})) {
      cancelled = true;
      return false;
    }
    return !matcher.stopped();
  };
  LoopEnd end;
  Status s = DecodeLoop(model, prompt, options, choose, accept, &result->stats, &end);
  if (!s.ok()) return s;
  if (cancelled) {
    result->finish = FinishReason::kCancelled;
    return OkStatus();
  }
  std::string tail;
  if (!matcher.stopped()) {
    tail = matcher.Add(stream.Finish());  // a character cut short, as U+FFFD
    if (!matcher.stopped()) tail += matcher.Finish();
  }
  result->finish =
      matcher.stopped() || end == LoopEnd::kEos ? FinishReason::kStop : FinishReason::kLength;
  result->text += tail;
  if (on_step) on_step(GenerateStep{nullptr, tail});
  return OkStatus();
}

StopStringMatcher::StopStringMatcher(std::vector<std::string> stops) {
  for (auto& s : stops) {
    if (!s.empty()) stops_.push_back(std::move(s));
  }
}

std::string StopStringMatcher::Add(std::string_view text) {
  if (stopped_) return "";
  held_.append(text);
  // The earliest complete stop string wins.
  size_t first = std::string::npos;
  for (const auto& stop : stops_) first = std::min(first, held_.find(stop));
  if (first != std::string::npos) {
    stopped_ = true;
    std::string out = held_.substr(0, first);
    held_.clear();
    return out;
  }
  // Keep the longest tail of held_ that some stop string begins with.
  size_t keep = 0;
  for (const auto& stop : stops_) {
    for (size_t n = std::min(stop.size() - 1, held_.size()); n > keep; --n) {
      if (held_.compare(held_.size() - n, n, stop, 0, n) == 0) {
        keep = n;
        break;
      }
    }
  }
  std::string out = held_.substr(0, held_.size() - keep);
  held_.erase(0, held_.size() - keep);
  return out;
}

std::string StopStringMatcher::Finish() {
  std::string out = std::move(held_);
  held_.clear();
  return out;
}

}  // namespace tf::engine
