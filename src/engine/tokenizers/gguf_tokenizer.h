// The tokenizer and chat template stored in a GGUF file's metadata (tokenizer.ggml.*), built
// from the engine's own BPE pieces (tokenizer_parts.h).
//
// - tokenizer.ggml.model "gpt2": byte-level BPE from tokens, token_type and merges, split first
//   by the regex that tokenizer.ggml.pre names: llama-bpe (also llama3, llama-v3, falcon3: the
//   Llama 3 pattern), qwen2 (also deepseek-r1-qwen; with NFC first, as Qwen2's tokenizer.json
//   does), gpt-2 and default (GPT-2's pattern; a missing pre means default). Another pre is an
//   error rather than a different split.
// - "llama": SentencePiece BPE from tokens, scores and token_type (pieces merged by score, byte
//   fallback to <0xXX> pieces, "▁" for spaces, a leading space when add_space_prefix).
// Both: CONTROL (special) and USER_DEFINED tokens written in the text become their ids;
// bos/eos ids; add_bos_token (default true for llama and the llama-bpe pre, false otherwise)
// and add_eos_token apply to Encode's add_special_tokens.
#pragma once

#include <memory>
#include <string>

#include "base/status.h"
#include "engine/formats/gguf.h"
#include "engine/tokenizers/tokenizer.h"

namespace tf::engine {

// Errors are InvalidArgument naming the file and the key.
Result<std::unique_ptr<Tokenizer>> NewGgufTokenizer(const GgufFile& file);
Result<std::unique_ptr<Tokenizer>> LoadGgufTokenizer(const std::string& path);

// tokenizer.chat_template; NotFound when the file has none.
Result<std::string> GgufChatTemplate(const GgufFile& file);

}  // namespace tf::engine
