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
  if (prompt.empty()) return InvalidArgument("the prompt has no tokens");
  SequenceGenerator gen(&tokenizer, model.config(), prompt, options, sampling);
  const int64_t want =
      static_cast<int64_t>(prompt.size()) + std::max<int64_t>(0, options.max_new_tokens);
  auto cache = model.NewCache(want);
  if (static_cast<int64_t>(prompt.size()) > cache->capacity()) {
    return InvalidArgument("the prompt's " + std::to_string(prompt.size()) +
                           " tokens exceed the model's context of " +
                           std::to_string(cache->capacity()));
  }
  GenerateStats& s = gen.result().stats;
  s.prompt_tokens = static_cast<int64_t>(prompt.size());
  std::vector<float> logits;
  auto start = SteadyClock::now();
  TF_RETURN_IF_ERROR(model.Forward(prompt, cache.get(), /*all_positions=*/false, &logits));
  auto decode_start = SteadyClock::now();
  s.prefill_seconds = std::chrono::duration<double>(decode_start - start).count();
  while (!gen.ended() && gen.Add(std::span<float>(logits.data(), logits.size()), on_step)) {
    if (cache->size() >= cache->capacity()) break;
    int32_t one[1] = {gen.result().tokens.back()};
    TF_RETURN_IF_ERROR(model.Forward(one, cache.get(), /*all_positions=*/false, &logits));
  }
  s.decode_seconds = std::chrono::duration<double>(SteadyClock::now() - decode_start).count();
  gen.Finish(on_step);
  *result = std::move(gen.result());
  return OkStatus();
}

SequenceGenerator::SequenceGenerator(const Tokenizer* tokenizer, const ModelConfig& config,
                                     std::span<const int32_t> prompt,
                                     const GenerateOptions& options, const SamplingParams& sampling)
    : tokenizer_(tokenizer),
      eos_(config.eos_token_ids),
      options_(options),
      sampler_(sampling, prompt),
      matcher_(tokenizer != nullptr ? options.stop : std::vector<std::string>{}) {
  if (tokenizer_ != nullptr) stream_.emplace(*tokenizer_, /*skip_special_tokens=*/true);
  result_.seed = sampler_.seed();
  result_.stats.prompt_tokens = static_cast<int64_t>(prompt.size());
  ended_ = options_.max_new_tokens <= 0;
}

bool SequenceGenerator::Add(std::span<float> logits,
                            const std::function<bool(const GenerateStep&)>& on_step) {
  SampledToken token = sampler_.Sample(logits);
  result_.tokens.push_back(token.id);
  ++result_.stats.generated_tokens;
  std::string text;
  if (stream_) text = matcher_.Add(stream_->Add(token.id));
  result_.text += text;
  if (on_step && !on_step(GenerateStep{&token, text})) {
    cancelled_ = true;
    ended_ = true;
    return false;
  }
  eos_seen_ = options_.stop_at_eos && std::find(eos_.begin(), eos_.end(), token.id) != eos_.end();
  if (matcher_.stopped() || eos_seen_ ||
      result_.stats.generated_tokens >= options_.max_new_tokens) {
    ended_ = true;
  }
  return !ended_;
}

void SequenceGenerator::Finish(const std::function<bool(const GenerateStep&)>& on_step) {
  if (finished_) return;
  finished_ = true;
  ended_ = true;
  if (cancelled_) {
    result_.finish = FinishReason::kCancelled;
    return;
  }
  std::string tail;
  if (stream_ && !matcher_.stopped()) {
    tail = matcher_.Add(stream_->Finish());  // a character cut short, as U+FFFD
    if (!matcher_.stopped()) tail += matcher_.Finish();
  }
  result_.finish = matcher_.stopped() || eos_seen_ ? FinishReason::kStop : FinishReason::kLength;
  result_.text += tail;
  if (on_step) on_step(GenerateStep{nullptr, tail});
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
