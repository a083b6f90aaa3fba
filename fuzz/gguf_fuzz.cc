// Fuzzes the GGUF reader and everything built on a file it accepts: the header, metadata and
// tensor infos (ParseGguf), the model config and weights (dequantised, llama's rotary rows put
// back), the tokenizer from the metadata (text encoded and ids decoded) and the chat template.
// A crash, hang or sanitizer report is a bug; an error Status is the expected answer to garbage.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/formats/gguf.h"
#include "engine/formats/gguf_model.h"
#include "engine/tokenizers/gguf_tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tf::engine;
  auto file =
      GgufFile::FromBytes(std::string(reinterpret_cast<const char*>(data), size), "fuzz.gguf");
  if (!file.ok()) return 0;
  std::shared_ptr<const GgufFile> gguf = std::move(file).value();
  // Every accepted tensor lies inside the input, and every value reads back.
  for (const GgufTensor& t : gguf->tensors()) {
    if (t.offset + t.num_bytes > size - gguf->contents().data_offset) __builtin_trap();
  }
  for (const auto& [key, value] : gguf->contents().metadata) {
    (void)value.AsInt();
    (void)value.AsNumber();
    (void)value.AsString();
    for (uint64_t i = 0; i < value.size() && i < 64; ++i) {
      (void)value.IntAt(i);
      (void)value.NumberAt(i);
      (void)value.StringAt(i);
    }
  }
  (void)GgufChatTemplate(*gguf);
  auto config = GgufModelConfig(*gguf);
  if (config.ok()) (void)LoadGgufWeights(gguf, *config);
  auto tokenizer = NewGgufTokenizer(*gguf);
  if (tokenizer.ok()) {
    const Tokenizer& tok = **tokenizer;
    (void)tok.Encode("Hello, world! 12345 \xc3\xa9t\xc3\xa9 <|eot_id|> </s>", true);
    std::vector<int32_t> ids;
    for (int32_t id = -1; id <= tok.vocab_size() && id < 300; ++id) ids.push_back(id);
    (void)tok.DecodeText(ids, /*skip_special_tokens=*/false);
  }
  return 0;
}
