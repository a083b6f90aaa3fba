// The pieces a tokenizer.json is made of, and the tokenizers built from them. Internal to the
// engine: tokenizer_json.cc and metaspace_json.cc fill them, *_tokenizer.cc use them.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "engine/tokenizers/added_tokens.h"
#include "engine/tokenizers/bpe.h"
#include "engine/tokenizers/pretokenizer.h"
#include "engine/tokenizers/sentencepiece_model.h"
#include "engine/tokenizers/tokenizer.h"

namespace tf::engine {

// What every BPE tokenizer.json has.
struct TokenizerParts {
  BpeModel model;
  std::vector<AddedToken> added_tokens;
  // The post-processor's template for one sequence: ids before and after the text's.
  std::vector<int32_t> prefix_ids, suffix_ids;
};

// What byte-level and Metaspace BPE tokenizers share: the parts, the added-token matcher, and
// the id lookups that depend on nothing else.
class BpeTokenizerBase : public Tokenizer {
 public:
  std::string IdToToken(int32_t id) const override {
    if (const AddedToken* t = added_.Find(id)) return t->content;
    const std::string* token = p_.model.IdToToken(id);
    return token != nullptr ? *token : "";
  }
  bool IsSpecial(int32_t id) const override {
    const AddedToken* t = added_.Find(id);
    return t != nullptr && t->special;
  }
  int32_t vocab_size() const override { return vocab_size_; }

 protected:
  explicit BpeTokenizerBase(TokenizerParts parts)
      : p_(std::move(parts)), added_(p_.added_tokens), vocab_size_(p_.model.id_limit()) {
    for (const auto& t : p_.added_tokens) vocab_size_ = std::max(vocab_size_, t.id + 1);
  }

  TokenizerParts p_;
  AddedTokenMatcher added_;  // over p_.added_tokens
  int32_t vocab_size_;       // past the largest id of the model and the added tokens
};

// Byte-level BPE (Llama 3, Qwen2, GPT-2).
struct ByteLevelOptions {
  SplitPattern pattern = SplitPattern::kGpt2;
  bool add_prefix_space = false;  // a space before text that does not start with one
  bool nfc = false;               // text is put in Unicode normalization form C first
};

// The Metaspace replacement for a space: U+2581 LOWER ONE EIGHTH BLOCK, "▁", in UTF-8.
inline constexpr std::string_view kMetaspace = "\xe2\x96\x81";

// SentencePiece-style BPE on "▁"-joined text (Llama 2, Mistral), usually with byte fallback.
struct MetaspaceOptions {
  enum class Prepend { kNever, kFirst, kAlways };
  // "▁" before each piece of text between added tokens (kAlways), or before the text's start
  // only (kFirst).
  Prepend prepend = Prepend::kAlways;
  // The Metaspace pre-tokenizer prepends only to text not already starting with "▁"; the
  // Prepend normalizer always does.
  bool prepend_only_if_missing = false;
  bool split = false;                // BPE each "▁word" separately instead of the whole text
  bool decode_byte_fallback = true;  // "<0x41>" decodes to the byte 0x41
  bool strip_leading_space = true;   // decoding drops one space at the very start
};

std::unique_ptr<Tokenizer> NewByteLevelBpeTokenizer(TokenizerParts parts, ByteLevelOptions options);
// A SentencePiece BPE tokenizer over `model` (which must be BPE, model_type 2); errors name `file`.
Result<std::unique_ptr<Tokenizer>> NewSentencePieceTokenizer(SentencePieceModel model,
                                                             std::string_view file);
std::unique_ptr<Tokenizer> NewMetaspaceBpeTokenizer(TokenizerParts parts, MetaspaceOptions options);

// Helpers for reading tokenizer.json fields without exceptions.
namespace json_fields {
// j["type"] if j is an object with a string type, else "".
std::string Type(const nlohmann::json& j);
// j[key] if it is a string, else "".
std::string Str(const nlohmann::json& j, const char* key);
// j[key] if it is a boolean, else fallback.
bool Flag(const nlohmann::json& j, const char* key, bool fallback);
// InvalidArgument "file: field: what".
Status Error(std::string_view file, const std::string& field, const std::string& what);
}  // namespace json_fields

// The metaspace options from the normalizer, pre_tokenizer and decoder of tokenizer.json `j`.
Status ParseMetaspaceOptions(const nlohmann::json& j, std::string_view file,
                             MetaspaceOptions* options);

}  // namespace tf::engine
