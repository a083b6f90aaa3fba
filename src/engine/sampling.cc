#include "engine/sampling.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <string>

namespace tf::engine {
namespace {

uint64_t SplitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t RandomSeed() {
  std::random_device device;
  return (uint64_t{device()} << 32) ^ device();
}

// Higher logit first; equal logits by lower id.
struct Better {
  std::span<const float> logits;
  bool operator()(int32_t a, int32_t b) const {
    return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
  }
};

// The lowest id of the largest logit; NaN logits are never chosen (all NaN: id 0). The largest
// value first, over 8 independent lanes (`v > m ? v : m` compiles to max instructions), then the
// first id holding it: on a 32,000-entry vocabulary this took 1.7% of a 125M model's decode
// step as one loop with a compare and a branch per id (while the other thread waited).
int32_t ArgMax(std::span<const float> logits) {
  const int64_t n = static_cast<int64_t>(logits.size());
  const float* x = logits.data();
  constexpr int kLanes = 8;
  float lane[kLanes];
  for (float& m : lane) m = -std::numeric_limits<float>::infinity();
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) lane[j] = x[i + j] > lane[j] ? x[i + j] : lane[j];
  }
  float max = lane[0];
  for (int j = 1; j < kLanes; ++j) max = lane[j] > max ? lane[j] : max;
  for (; i < n; ++i) max = x[i] > max ? x[i] : max;
  for (i = 0; i < n; ++i) {
    if (x[i] == max) return static_cast<int32_t>(i);
  }
  return 0;  // every logit is NaN
}

double LogSumExp(std::span<const float> logits) {
  float max = *std::max_element(logits.begin(), logits.end());
  double sum = 0;
  for (float l : logits) sum += std::exp(static_cast<double>(l) - max);
  return max + std::log(sum);
}

Status OutOfRange(const char* field, const std::string& what) {
  return InvalidArgument(std::string("'") + field + "' must be " + what);
}

}  // namespace

SeededRandom::SeededRandom(uint64_t seed) {
  for (uint64_t& s : s_) s = SplitMix64(seed);
}

uint64_t SeededRandom::Next() {
  const uint64_t result = Rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = Rotl(s_[3], 45);
  return result;
}

double SeededRandom::NextDouble() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

Status SamplingParams::Validate() const {
  if (!std::isfinite(temperature) || temperature < 0) {
    return OutOfRange("temperature", "a number >= 0");
  }
  if (top_k < 0) return OutOfRange("top_k", "0 (no limit) or more");
  if (!(top_p > 0 && top_p <= 1)) return OutOfRange("top_p", "in (0, 1]");
  if (!std::isfinite(repetition_penalty) || repetition_penalty <= 0) {
    return OutOfRange("repetition_penalty", "a number > 0");
  }
  if (!(frequency_penalty >= -2 && frequency_penalty <= 2)) {
    return OutOfRange("frequency_penalty", "in [-2, 2]");
  }
  if (!(presence_penalty >= -2 && presence_penalty <= 2)) {
    return OutOfRange("presence_penalty", "in [-2, 2]");
  }
  if (top_logprobs && (*top_logprobs < 0 || *top_logprobs > 20)) {
    return OutOfRange("top_logprobs", "in [0, 20]");
  }
  for (const auto& [id, bias] : logit_bias) {
    if (id < 0) return OutOfRange("logit_bias", "keyed by token ids >= 0");
    if (!(bias >= -100 && bias <= 100)) return OutOfRange("logit_bias", "values in [-100, 100]");
  }
  return OkStatus();
}

Sampler::Sampler(const SamplingParams& params, std::span<const int32_t> prompt)
    : params_(params), seed_(params.seed ? *params.seed : RandomSeed()), random_(seed_) {
  if (params_.repetition_penalty != 1.0f) {
    for (int32_t id : prompt) {
      if (id < 0) continue;
      if (static_cast<size_t>(id) >= seen_mask_.size()) seen_mask_.resize(id + 1, false);
      if (!seen_mask_[id]) {
        seen_mask_[id] = true;
        seen_.push_back(id);
      }
    }
  }
}

void Sampler::ApplyPenalties(std::span<float> logits) const {
  const int64_t vocab = static_cast<int64_t>(logits.size());
  for (const auto& [id, bias] : params_.logit_bias) {
    if (id < vocab) logits[id] += bias;
  }
  if (params_.repetition_penalty != 1.0f) {
    const float p = params_.repetition_penalty;
    for (int32_t id : seen_) {
      if (id >= vocab) continue;
      float& l = logits[id];
      l = l > 0 ? l / p : l * p;
    }
  }
  if (params_.frequency_penalty != 0.0f || params_.presence_penalty != 0.0f) {
    for (const auto& [id, count] : generated_counts_) {
      if (id >= vocab) continue;
      logits[id] -= static_cast<float>(count) * params_.frequency_penalty +
                    (count > 0 ? params_.presence_penalty : 0.0f);
    }
  }
}

int32_t Sampler::Draw(std::span<const float> logits) {
  const int64_t vocab = static_cast<int64_t>(logits.size());
  if (params_.temperature == 0.0f || params_.top_k == 1) return ArgMax(logits);
  const double inv_t = 1.0 / params_.temperature;
  const double max = logits[ArgMax(logits)];
  auto weight = [&](int32_t id) { return std::exp((logits[id] - max) * inv_t); };

  const int64_t k = params_.top_k > 0 ? std::min(params_.top_k, vocab) : vocab;
  if (k == vocab && params_.top_p >= 1.0f) {  // nothing cut: draw over all ids in id order
    double total = 0;
    for (int32_t id = 0; id < vocab; ++id) total += weight(id);
    double u = random_.NextDouble() * total;
    for (int32_t id = 0; id < vocab; ++id) {
      u -= weight(id);
      if (u < 0) return id;
    }
    return static_cast<int32_t>(vocab - 1);
  }

  order_.resize(vocab);
  std::iota(order_.begin(), order_.end(), 0);
  Better better{logits};
  int64_t sorted = 0;  // order_[0, sorted) is the best `sorted` ids, best first
  auto sort_to = [&](int64_t n) {
    if (n <= sorted) return;
    std::partial_sort(order_.begin() + sorted, order_.begin() + n, order_.end(), better);
    sorted = n;
  };
  double norm = 0;  // the softmax's denominator over the top-k set
  if (k < vocab) {
    sort_to(k);
    for (int64_t i = 0; i < k; ++i) norm += weight(order_[i]);
  } else {
    for (int32_t id = 0; id < vocab; ++id) norm += weight(id);
  }
  int64_t keep = k;
  if (params_.top_p < 1.0f) {
    // Sort only as far as the nucleus reaches, growing the sorted prefix fourfold at a time.
    double cumulative = 0;
    int64_t i = 0;
    while (i < k) {
      if (i == sorted) sort_to(std::min(k, std::max<int64_t>(64, sorted * 4)));
      cumulative += weight(order_[i]) / norm;
      ++i;
      if (cumulative >= params_.top_p) break;
    }
    keep = std::max<int64_t>(1, i);
  }
  sort_to(keep);
  double total = 0;
  for (int64_t i = 0; i < keep; ++i) total += weight(order_[i]);
  double u = random_.NextDouble() * total;
  for (int64_t i = 0; i < keep; ++i) {
    u -= weight(order_[i]);
    if (u < 0) return order_[i];
  }
  return order_[keep - 1];
}

SampledToken Sampler::Sample(std::span<float> logits) {
  SampledToken out;
  std::vector<float> raw;
  if (params_.top_logprobs) {
    raw.assign(logits.begin(), logits.end());
    out.top = TopLogprobs(raw, *params_.top_logprobs);
  }
  ApplyPenalties(logits);
  out.id = Draw(logits);
  if (params_.top_logprobs) out.logprob = LogSoftmaxAt(raw, out.id);

  ++generated_counts_[out.id];
  if (params_.repetition_penalty != 1.0f) {
    if (static_cast<size_t>(out.id) >= seen_mask_.size()) seen_mask_.resize(out.id + 1, false);
    if (!seen_mask_[out.id]) {
      seen_mask_[out.id] = true;
      seen_.push_back(out.id);
    }
  }
  return out;
}

float LogSoftmaxAt(std::span<const float> logits, int32_t id) {
  return static_cast<float>(logits[id] - LogSumExp(logits));
}

std::vector<TokenLogprob> TopLogprobs(std::span<const float> logits, int n) {
  std::vector<TokenLogprob> out;
  if (n <= 0 || logits.empty()) return out;
  const int64_t count = std::min<int64_t>(n, static_cast<int64_t>(logits.size()));
  std::vector<int32_t> ids(logits.size());
  std::iota(ids.begin(), ids.end(), 0);
  std::partial_sort(ids.begin(), ids.begin() + count, ids.end(), Better{logits});
  const double lse = LogSumExp(logits);
  for (int64_t i = 0; i < count; ++i) {
    out.push_back({ids[i], static_cast<float>(logits[ids[i]] - lse)});
  }
  return out;
}

}  // namespace tf::engine
