// A BPE model: a vocabulary of strings and a ranked list of merges.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/status.h"

namespace tf::engine {

class BpeModel {
 public:
  struct Options {
    std::optional<std::string> unk_token;
    bool ignore_merges = false;  // a word found whole in the vocabulary is not split
  };

  // vocab: token -> id (ids need not be dense); merges in rank order, each a pair of tokens
  // whose concatenation must be in the vocabulary. Errors name the offending entry.
  static Result<BpeModel> Build(std::unordered_map<std::string, int32_t> vocab,
                                const std::vector<std::pair<std::string, std::string>>& merges,
                                Options options);

  // Appends the ids of `word` (a string of vocabulary characters, valid UTF-8). Characters
  // not in the vocabulary become unk_token, or are dropped when there is none.
  void Encode(std::string_view word, std::vector<int32_t>* ids) const;

  // The token of `id`, or null.
  const std::string* IdToToken(int32_t id) const;
  std::optional<int32_t> TokenToId(std::string_view token) const;
  // One more than the largest id.
  int32_t id_limit() const { return static_cast<int32_t>(id_to_token_.size()); }

 private:
  struct Merge {
    int32_t rank;
    int32_t result;
  };
  static uint64_t PairKey(int32_t a, int32_t b) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b);
  }

  std::unordered_map<std::string, int32_t> vocab_;
  std::vector<std::string> id_to_token_;  // "" for unused ids
  std::vector<bool> id_used_;
  std::unordered_map<uint64_t, Merge> merges_;
  Options options_;
  std::optional<int32_t> unk_id_;
};

}  // namespace tf::engine
