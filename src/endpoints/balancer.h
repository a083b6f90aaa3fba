// Which replica of an endpoint takes a request: the least loaded of two chosen at random
// ("power of two choices": near the best of all without looking at all, and no herd on one
// replica when counts are stale), or, for a request with a prompt prefix, the replica that
// prefix maps to while it is not much busier than that choice, so that a replica's KV cache
// serves the prefixes it has seen.
//
// Pure: the caller passes its random number, so that tests choose the draw.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace tf::endpoints {

// A replica in rotation, as the gateway counts it.
struct Candidate {
  std::string_view id;  // the replica's id: stable, so a prefix keeps mapping to it
  int outstanding = 0;  // requests sent to it and not yet answered
};

struct BalanceOptions {
  // A prefix's replica is taken while it has at most this many more outstanding requests
  // than the power-of-two choice; past it, the load wins over the cache.
  int affinity_slack = 2;
};

// The index in `candidates` of the replica to use; nothing when there is none. `random` is a
// uniformly random 64-bit number; `prefix_hash` a hash of the request's prompt prefix.
std::optional<size_t> PickReplica(std::span<const Candidate> candidates, uint64_t random,
                                  std::optional<uint64_t> prefix_hash = std::nullopt,
                                  const BalanceOptions& options = {});

// The replica a prefix maps to by rendezvous hashing: the same one while it is in rotation,
// and only the prefixes of a replica that leaves move elsewhere.
size_t AffinityReplica(std::span<const Candidate> candidates, uint64_t prefix_hash);

// A 64-bit hash (FNV-1a) of the first `max_bytes` of `text`, for prefix affinity.
uint64_t PrefixHash(std::string_view text, size_t max_bytes);

}  // namespace tf::endpoints
