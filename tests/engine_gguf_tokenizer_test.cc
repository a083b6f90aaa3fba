// The tokenizers stored in the GGUF fixtures (written by llama.cpp's gguf-py from the fixtures'
// tokenizer.json and tokenizer.model; tests/data/engine/gguf/make_gguf.py) against what the
// Hugging Face tokenizers and sentencepiece libraries produced for the originals.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "engine/chat/chat_template.h"
#include "engine/tokenizers/byte_level.h"
#include "engine/tokenizers/gguf_tokenizer.h"
#include "engine/tokenizers/tokenizer.h"
#include "engine_gguf_test_util.h"
#include "engine_test_util.h"
#include "engine_tokenizer_test_util.h"
#include "store_test_env.h"

namespace tf::testing {
namespace {

using engine::Tokenizer;
using ::testing::HasSubstr;

std::unique_ptr<Tokenizer> Load(const std::string& gguf) {
  auto t = engine::LoadTokenizer(EngineData("gguf/" + gguf));
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return t.ok() ? std::move(t).value() : nullptr;
}

// Both checkpoints' files carry tok-bytebpe's tokenizer (Llama 3's pre-tokenizer, "llama-bpe").
class GgufByteLevelTest : public ::testing::TestWithParam<const char*> {};

TEST_P(GgufByteLevelTest, MatchesTokenizersLibrary) {
  auto tok = Load(GetParam());
  ASSERT_NE(tok, nullptr);
  ASSERT_NO_FATAL_FAILURE(
      ExpectMatchesEncodings(*tok, "tok-bytebpe/encodings.jsonl", 19, {.stream = false}));
  // add_bos_token: the BOS first, as the tokenizer.json's template adds it; special tokens.
  auto with_bos = tok->Encode("Hello, world!", /*add_special_tokens=*/true);
  ASSERT_TRUE(with_bos.ok());
  EXPECT_EQ(*with_bos, (std::vector<int32_t>{0, 44, 73, 80, 337, 16, 336, 274, 624, 5}));
  EXPECT_TRUE(tok->IsSpecial(4));
  EXPECT_EQ(tok->IdToToken(4), "<|eot_id|>");
  EXPECT_EQ(tok->vocab_size(), 1024);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, GgufByteLevelTest,
                         ::testing::Values("llama-gqa.f32.gguf", "qwen2-bias.q4_0.gguf"));

// tokenizer.model as gguf-py stores it (pieces, scores, types; model "llama") against the
// sentencepiece library, on the texts its nmt_nfkc normalizer leaves as they are (GGUF keeps no
// normalizer: llama.cpp only turns spaces into "▁"); the same ids as the tokenizer.model itself.
TEST(EngineGgufTokenizer, SentencePieceMatchesSentencePieceLibrary) {
  auto tok = Load("tok-sentencepiece.gguf");
  ASSERT_NE(tok, nullptr);
  auto original = engine::LoadTokenizer(EngineData("tok-sentencepiece"));
  ASSERT_TRUE(original.ok());
  int compared = 0;
  for (const auto& c : Encodings("tok-sentencepiece/encodings.jsonl")) {
    std::string text = c["text"].get<std::string>();
    if (c["decoded"].get<std::string>() != text) continue;  // the normalizer changes it
    ++compared;
    auto want = c["ids"].get<std::vector<int32_t>>();
    auto ids = tok->Encode(text, /*add_special_tokens=*/false);
    ASSERT_TRUE(ids.ok()) << ids.status().ToString();
    EXPECT_EQ(*ids, want) << "text: " << text;
    EXPECT_EQ(*ids, *(*original)->Encode(text, false)) << "text: " << text;
    EXPECT_EQ(tok->DecodeText(want, /*skip_special_tokens=*/true), text);
  }
  EXPECT_EQ(compared, 13);
  auto with_bos = tok->Encode("Hello", /*add_special_tokens=*/true);
  ASSERT_TRUE(with_bos.ok());
  EXPECT_EQ((*with_bos)[0], 1);
  EXPECT_TRUE(tok->IsSpecial(1));
  // Control tokens written in the text become their ids, the text after them gets its space.
  auto with_control = tok->Encode("Hello</s>Hello", /*add_special_tokens=*/false);
  auto hello = tok->Encode("Hello", /*add_special_tokens=*/false);
  ASSERT_TRUE(with_control.ok() && hello.ok());
  std::vector<int32_t> want = *hello;
  want.push_back(2);
  want.insert(want.end(), hello->begin(), hello->end());
  EXPECT_EQ(*with_control, want);
}

TEST(EngineGgufTokenizer, ChatTemplateFromMetadata) {
  auto chatml = engine::LoadChatTemplate(EngineData("gguf/qwen2-bias.f32.gguf"));
  ASSERT_TRUE(chatml.ok()) << chatml.status().ToString();
  EXPECT_THAT(*chatml, HasSubstr("<|im_start|>"));
  auto parsed = engine::ChatTemplate::Parse(*chatml);
  ASSERT_TRUE(parsed.ok());
  engine::ChatTemplateOptions options;
  options.add_generation_prompt = true;
  auto text =
      parsed->Render(nlohmann::json::parse(R"([{"role": "user", "content": "hi"}])"), options);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n");
  auto none = engine::LoadChatTemplate(EngineData("gguf/llama-gqa.f32.gguf"));
  EXPECT_EQ(none.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(none.status().message(), HasSubstr("has no tokenizer.chat_template"));
}

// A byte-level vocabulary: the 256 byte tokens, then "12" (from the merge "1 2").
GgufBuilder ByteVocab(const std::string& pre) {
  std::vector<std::string> tokens;
  for (int b = 0; b < 256; ++b) {
    tokens.push_back(engine::BytesToChars(std::string(1, static_cast<char>(b))));
  }
  tokens.push_back("12");
  GgufBuilder b;
  b.String("tokenizer.ggml.model", "gpt2").Strings("tokenizer.ggml.tokens", tokens);
  b.Strings("tokenizer.ggml.merges", {"1 2"});
  if (!pre.empty()) b.String("tokenizer.ggml.pre", pre);
  return b;
}

class GgufTokenizerFileTest : public ::testing::Test {
 protected:
  Result<std::unique_ptr<Tokenizer>> FromBytes(const std::string& bytes) {
    std::string path = (dir_.path() / "t.gguf").string();
    WriteFileBytes(path, bytes);
    return engine::LoadTokenizer(path);
  }
  TempDir dir_;
};

// tokenizer.ggml.pre picks the split: Llama 3 keeps up to three digits together (so "12"
// merges), Qwen2 splits every digit.
TEST_F(GgufTokenizerFileTest, PreTokenizerChoosesTheSplit) {
  auto llama3 = FromBytes(ByteVocab("llama-bpe").Bytes());
  ASSERT_TRUE(llama3.ok()) << llama3.status().ToString();
  EXPECT_EQ(*(*llama3)->Encode("12", false), (std::vector<int32_t>{256}));
  auto qwen2 = FromBytes(ByteVocab("qwen2").Bytes());
  ASSERT_TRUE(qwen2.ok()) << qwen2.status().ToString();
  EXPECT_EQ(*(*qwen2)->Encode("12", false), (std::vector<int32_t>{'1', '2'}));
  auto gpt2 = FromBytes(ByteVocab("").Bytes());  // no pre: the default, GPT-2's
  ASSERT_TRUE(gpt2.ok()) << gpt2.status().ToString();
  EXPECT_EQ(*(*gpt2)->Encode("12 a", false), (std::vector<int32_t>{256, ' ', 'a'}));
}

TEST_F(GgufTokenizerFileTest, ClearErrors) {
  auto error = [&](const std::string& bytes) {
    auto t = FromBytes(bytes);
    return t.ok() ? std::string() : t.status().message();
  };
  EXPECT_THAT(error(ByteVocab("falcon").Bytes()),
              HasSubstr("t.gguf: metadata key 'tokenizer.ggml.pre' 'falcon' is not a "
                        "pre-tokenizer this engine implements"));
  EXPECT_THAT(error(GgufBuilder().String("tokenizer.ggml.model", "bert").Bytes()),
              HasSubstr("metadata key 'tokenizer.ggml.model' 'bert' is not supported"));
  EXPECT_THAT(error(GgufBuilder().Bytes()),
              HasSubstr("t.gguf: metadata key 'tokenizer.ggml.model' is missing"));
  EXPECT_THAT(error(GgufBuilder().String("tokenizer.ggml.model", "gpt2").Bytes()),
              HasSubstr("metadata key 'tokenizer.ggml.tokens' is missing"));
  EXPECT_EQ(error(ByteVocab("llama-bpe").Strings("general.unknown", {}).Bytes()), "");
  EXPECT_THAT(error(GgufBuilder()
                        .String("tokenizer.ggml.model", "gpt2")
                        .Strings("tokenizer.ggml.tokens", {"a", "b"})
                        .Strings("tokenizer.ggml.merges", {"a b"})
                        .Bytes()),
              HasSubstr("metadata key 'tokenizer.ggml.merges' merge 0 ('a' 'b') uses a token "
                        "that is not in the vocab"));
  EXPECT_THAT(error(GgufBuilder()
                        .String("tokenizer.ggml.model", "llama")
                        .Strings("tokenizer.ggml.tokens", {"a", "b"})
                        .Bytes()),
              HasSubstr("metadata key 'tokenizer.ggml.scores' is missing"));
  EXPECT_THAT(error(ByteVocab("llama-bpe").U32("tokenizer.ggml.bos_token_id", 5000).Bytes()),
              HasSubstr("metadata key 'tokenizer.ggml.bos_token_id' 5000 is not a token"));
  EXPECT_THAT(error(GgufBuilder()
                        .String("tokenizer.ggml.model", "gpt2")
                        .String("tokenizer.ggml.tokens", "a")
                        .Bytes()),
              HasSubstr("'tokenizer.ggml.tokens' must be an array[string], not string"));
}

}  // namespace
}  // namespace tf::testing
