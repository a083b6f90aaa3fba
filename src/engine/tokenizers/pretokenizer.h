// The regex splits that byte-level BPE tokenizers apply before BPE, implemented by hand with
// the Unicode tables (no regex engine): each known pattern is matched exactly as a
// backtracking regex engine would, alternative by alternative, at each position.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace tf::engine {

enum class SplitPattern {
  // Llama 3 (tiktoken cl100k style): (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|
  // \p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
  kLlama3,
  // Qwen2: the same with \p{N} (one digit per piece).
  kQwen2,
  // GPT-2, the ByteLevel pre-tokenizer's own: 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+|
  // ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
  kGpt2,
};

// The pattern whose regex source (as written in tokenizer.json) is `regex`, or nullopt.
std::optional<SplitPattern> PatternFromRegex(std::string_view regex);

// Splits valid UTF-8 `text` into the pieces the pattern matches ("Isolated": every piece kept,
// in order; together they are exactly `text`). Views point into text. InvalidArgument if text
// is not valid UTF-8.
Result<std::vector<std::string_view>> SplitWords(SplitPattern pattern, std::string_view text);

}  // namespace tf::engine
