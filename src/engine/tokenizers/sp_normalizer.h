// SentencePiece's text normalization: the precompiled character map of its NormalizerSpec
// (e.g. nmt_nfkc: NFKC plus mapping control characters and odd spaces to spaces), then
// whitespace handling: extra spaces removed, a dummy prefix space added, spaces written as "▁".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "engine/tokenizers/sentencepiece_model.h"

namespace tf::engine {

class SpNormalizer {
 public:
  // InvalidArgument if the character map is malformed.
  static Result<SpNormalizer> Build(const SentencePieceModel& model);

  // The normalized form of valid UTF-8 `text`, with spaces as "▁".
  std::string Normalize(std::string_view text) const;

 private:
  // The replacement for the longest prefix of `input` in the character map, and how many bytes
  // of input it replaces; one character unchanged when none matches.
  std::pair<std::string_view, size_t> NormalizePrefix(std::string_view input) const;

  std::vector<uint32_t> trie_;     // darts-clone double array units
  std::string_view replacements_;  // NUL-terminated strings, indexed by the trie's values
  std::string charsmap_;           // owns the bytes replacements_ points into
  bool add_dummy_prefix_ = true;
  bool remove_extra_whitespaces_ = true;
  bool escape_whitespaces_ = true;
  bool treat_whitespace_as_suffix_ = false;
};

}  // namespace tf::engine
