// Tokenizers of Hugging Face checkpoints: text to token ids and back.
//
// This version reads SentencePiece BPE tokenizer.model files, and tokenizer.json files of BPE
// tokenizers of two kinds:
// - byte-level (Llama 3, Qwen2, GPT-2 style): a Split pre-tokenizer with one of the known regexes
//   (pretokenizer.h) followed by ByteLevel, or ByteLevel with its own regex; the ByteLevel
//   decoder;
// - Metaspace (Llama 2, Mistral style): spaces as "▁" (a Prepend + Replace normalizer, or the
//   Metaspace pre-tokenizer), byte fallback to "<0xXX>" tokens for characters outside the
//   vocabulary; the Replace/ByteFallback/Fuse/Strip or Metaspace decoder.
// Both have added and special tokens and TemplateProcessing / ByteLevel post-processors, and
// byte-level ones may have an NFC normalizer (Qwen2). Anything else in the file (WordPiece,
// Unigram, other normalizers or regexes) is refused with an error that names the file and the
// field, rather than tokenized differently from the original.
//
// Thread safety: a loaded Tokenizer is immutable; Encode and Decode may run concurrently.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace tf::engine {

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;

  // The ids of `text` (valid UTF-8, else InvalidArgument). Added tokens written in the text
  // ("<|eot_id|>") become their ids. add_special_tokens applies the post-processor's template
  // (Llama 3: the BOS id first).
  virtual Result<std::vector<int32_t>> Encode(std::string_view text,
                                              bool add_special_tokens) const = 0;

  // The bytes of `ids`, with special tokens left out if skip_special_tokens. The result may end
  // inside a UTF-8 sequence, or hold invalid UTF-8, when the ids do; see DecodeText.
  std::string DecodeBytes(std::span<const int32_t> ids, bool skip_special_tokens) const;

  // DecodeBytes as text: invalid UTF-8 replaced by U+FFFD, as the tokenizers library does.
  std::string DecodeText(std::span<const int32_t> ids, bool skip_special_tokens) const;

  // The bytes token `id` adds to a decoded sequence ("" for an unknown id).
  virtual std::string TokenBytes(int32_t id) const = 0;
  // Whether decoding drops one space at the very start of a sequence (Metaspace tokenizers,
  // whose encoding put it there).
  virtual bool strips_leading_space() const { return false; }

  // The vocabulary string of `id` ("Ġworld", "<|eot_id|>"), or "" for an unknown id.
  virtual std::string IdToToken(int32_t id) const = 0;
  virtual bool IsSpecial(int32_t id) const = 0;
  // One more than the largest id.
  virtual int32_t vocab_size() const = 0;
};

// Parses tokenizer.json text; `file_name` goes into error messages.
Result<std::unique_ptr<Tokenizer>> ParseTokenizerJson(std::string_view json_text,
                                                      std::string_view file_name);
// Reads and parses the file at `path`.
Result<std::unique_ptr<Tokenizer>> LoadTokenizerJson(const std::string& path);

// A SentencePiece tokenizer.model (BPE models with their normalizer and byte fallback).
Result<std::unique_ptr<Tokenizer>> ParseSentencePieceTokenizer(std::string_view bytes,
                                                               std::string_view file_name);
Result<std::unique_ptr<Tokenizer>> LoadSentencePieceTokenizer(const std::string& path);

// The tokenizer of checkpoint directory `dir`: tokenizer.json, else tokenizer.model; or, when
// `dir` is a GGUF file, the tokenizer in its metadata (gguf_tokenizer.h).
Result<std::unique_ptr<Tokenizer>> LoadTokenizer(const std::string& dir);

// Turns a stream of token ids into text that is always whole UTF-8: bytes that end inside a
// character wait for the next token. Invalid bytes become U+FFFD.
class TokenTextStream {
 public:
  TokenTextStream(const Tokenizer& tokenizer, bool skip_special_tokens)
      : tokenizer_(tokenizer), skip_special_(skip_special_tokens) {}

  // The text that token `id` completes (possibly empty).
  std::string Add(int32_t id);
  // What is still held back, as U+FFFD; call when the stream ends.
  std::string Finish();

 private:
  const Tokenizer& tokenizer_;
  bool skip_special_;
  bool started_ = false;  // some byte has been decoded
  std::string pending_;   // bytes of an unfinished character
};

// bytes as UTF-8 text, each maximal invalid sequence replaced by U+FFFD. With hold_incomplete,
// a tail that is the start of a valid character is left in *rest instead.
std::string LossyUtf8(std::string_view bytes, bool hold_incomplete, std::string* rest);

}  // namespace tf::engine
