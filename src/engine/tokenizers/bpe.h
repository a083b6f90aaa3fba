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
    // A character outside the vocabulary becomes the tokens "<0xXX>" of its UTF-8 bytes, when
    // the vocabulary has them all.
    bool byte_fallback = false;
    bool fuse_unk = false;  // consecutive unknown characters become one unk_token
  };

  // vocab: token -> id (ids need not be dense); merges in rank order, each a pair of tokens
  // whose concatenation must be in the vocabulary. Errors name the offending entry.
  static Result<BpeModel> Build(std::unordered_map<std::string, int32_t> vocab,
                                const std::vector<std::pair<std::string, std::string>>& merges,
                                Options options);

  // Appends the ids of `word` (valid UTF-8). Characters not in the vocabulary become their
  // byte tokens (byte_fallback), else unk_token, else are dropped.
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
  bool HasByteTokens(std::string_view bytes) const;
  static uint64_t PairKey(int32_t a, int32_t b) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b);
  }

  std::unordered_map<std::string, int32_t> vocab_;
  std::vector<std::string> id_to_token_;  // "" for unused ids
  std::vector<bool> id_used_;
  std::unordered_map<uint64_t, Merge> merges_;
  Options options_;
  std::optional<int32_t> unk_id_;
  std::vector<int32_t> byte_ids_;  // [256] with byte_fallback: the id of "<0xXX>", or -1
};

}  // namespace tf::engine
