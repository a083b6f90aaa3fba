// Fuzzes every engine parser that reads files a user hands us: safetensors headers, config.json,
// tokenizer.json, and text and token ids through real tokenizers (byte-level, Metaspace and
// SentencePiece BPE: encode, decode, streaming decode). Any crash, hang or sanitizer report is a
// bug; a clean error Status is the expected answer to garbage.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/config.h"
#include "engine/formats/safetensors.h"
#include "engine/tokenizers/nfc.h"
#include "engine/tokenizers/tokenizer.h"

namespace {

const tf::engine::Tokenizer* Fixture(const char* dir) {
  auto t = tf::engine::LoadTokenizer(std::string(TF_ENGINE_FUZZ_DATA) + "/" + dir);
  if (!t.ok()) __builtin_trap();  // the fixtures must load
  return std::move(t).value().release();
}

// Encodes the input, checks what decoding gives back, and decodes the input's bytes as token ids
// (some out of range) whole and streamed: both must agree.
void Exercise(const tf::engine::Tokenizer& tok, const uint8_t* data, size_t size,
              bool round_trips) {
  std::string input(reinterpret_cast<const char*>(data), size);
  auto ids = tok.Encode(input, /*add_special_tokens=*/true);
  if (ids.ok() && round_trips && input.find("<|") == std::string::npos &&
      tok.DecodeText(*ids, /*skip_special_tokens=*/true) != input) {
    __builtin_trap();  // byte-level BPE loses nothing
  }
  std::vector<int32_t> raw;
  for (size_t i = 0; i + 1 < size; i += 2) raw.push_back((data[i] | (data[i + 1] << 8)) - 8);
  std::string whole = tok.DecodeText(raw, false);
  tf::engine::TokenTextStream stream(tok, false);
  std::string streamed;
  for (int32_t id : raw) streamed += stream.Add(id);
  streamed += stream.Finish();
  if (streamed != whole) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const tf::engine::Tokenizer* byte_level = Fixture("tok-bytebpe");
  static const tf::engine::Tokenizer* metaspace = Fixture("tok-metaspace");
  static const tf::engine::Tokenizer* sentencepiece = Fixture("tok-sentencepiece");
  std::string input(reinterpret_cast<const char*>(data), size);

  (void)tf::engine::ParseSafetensors(data, size, "fuzz.safetensors");
  (void)tf::engine::ParseModelConfig(input, "config.json");
  (void)tf::engine::ParseTokenizerJson(input, "tokenizer.json");
  (void)tf::engine::ParseSentencePieceTokenizer(input, "tokenizer.model");
  if (byte_level->Encode(input, false).ok()) {  // valid UTF-8: NFC is idempotent
    std::string nfc = tf::engine::unicode::ToNfc(input);
    if (tf::engine::unicode::ToNfc(nfc) != nfc) __builtin_trap();
  }
  Exercise(*byte_level, data, size, /*round_trips=*/true);
  Exercise(*metaspace, data, size, /*round_trips=*/false);
  Exercise(*sentencepiece, data, size, /*round_trips=*/false);
  return 0;
}
