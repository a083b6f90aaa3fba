// Fuzzes every engine parser that reads files a user hands us: safetensors headers, config.json,
// tokenizer.json, and text and token ids through a real tokenizer (encode, decode, streaming
// decode). Any crash, hang or sanitizer report is a bug; a clean error Status is the expected
// answer to garbage.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/config.h"
#include "engine/safetensors.h"
#include "engine/tokenizer.h"

namespace {

const tf::engine::Tokenizer* FixtureTokenizer() {
  static const auto* tokenizer = [] {
    auto t = tf::engine::LoadTokenizerJson(TF_ENGINE_FUZZ_TOKENIZER);
    return t.ok() ? std::move(t).value().release() : nullptr;
  }();
  return tokenizer;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string input(reinterpret_cast<const char*>(data), size);

  (void)tf::engine::ParseSafetensors(data, size, "fuzz.safetensors");
  (void)tf::engine::ParseModelConfig(input, "config.json");
  (void)tf::engine::ParseTokenizerJson(input, "tokenizer.json");

  const tf::engine::Tokenizer* tok = FixtureTokenizer();
  if (tok == nullptr) __builtin_trap();  // the fixture must load
  auto ids = tok->Encode(input, /*add_special_tokens=*/true);
  if (ids.ok()) {
    // Valid UTF-8 round-trips exactly.
    if (tok->DecodeText(*ids, /*skip_special_tokens=*/true) != input &&
        input.find("<|") == std::string::npos) {
      __builtin_trap();
    }
  }
  // The input's bytes as token ids (some out of range), decoded whole and streamed.
  std::vector<int32_t> raw;
  for (size_t i = 0; i + 1 < size; i += 2) raw.push_back((data[i] | (data[i + 1] << 8)) - 8);
  std::string whole = tok->DecodeText(raw, false);
  tf::engine::TokenTextStream stream(*tok, false);
  std::string streamed;
  for (int32_t id : raw) streamed += stream.Add(id);
  streamed += stream.Finish();
  if (streamed != whole) __builtin_trap();
  return 0;
}
