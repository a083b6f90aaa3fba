#include "endpoints/balancer.h"

namespace tf::endpoints {
namespace {

// SplitMix64's finaliser: spreads every input bit over the output.
uint64_t Mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

}  // namespace

uint64_t PrefixHash(std::string_view text, size_t max_bytes) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (char c : text.substr(0, max_bytes)) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  return h;
}

size_t AffinityReplica(std::span<const Candidate> candidates, uint64_t prefix_hash) {
  size_t best = 0;
  uint64_t best_score = 0;
  for (size_t i = 0; i < candidates.size(); ++i) {
    uint64_t score = Mix(prefix_hash ^ PrefixHash(candidates[i].id, candidates[i].id.size()));
    if (i == 0 || score > best_score) {
      best = i;
      best_score = score;
    }
  }
  return best;
}

std::optional<size_t> PickReplica(std::span<const Candidate> candidates, uint64_t random,
                                  std::optional<uint64_t> prefix_hash,
                                  const BalanceOptions& options) {
  size_t n = candidates.size();
  if (n == 0) return std::nullopt;
  if (n == 1) return 0;
  // Two distinct indices from one draw: the first uniform over n, the second over the n - 1
  // others.
  size_t a = static_cast<size_t>((random >> 32) % n);
  size_t b = static_cast<size_t>((random & 0xffffffffULL) % (n - 1));
  if (b >= a) ++b;
  size_t choice = candidates[b].outstanding < candidates[a].outstanding ? b : a;
  if (prefix_hash) {
    size_t preferred = AffinityReplica(candidates, *prefix_hash);
    if (candidates[preferred].outstanding <=
        candidates[choice].outstanding + options.affinity_slack) {
      return preferred;
    }
  }
  return choice;
}

}  // namespace tf::endpoints
