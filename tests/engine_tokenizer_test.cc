// The byte-level BPE tokenizer against what the Hugging Face tokenizers library produced for the
// same tokenizer.json (tests/data/engine/tok-bytebpe/encodings.jsonl): ids, tokens and decoded
// text identical for every case, including Unicode letters and digits, emoji with ZWJ, runs of
// spaces, tabs and newlines, contractions and special tokens written in the text.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "engine/tokenizers/pretokenizer.h"
#include "engine/tokenizers/tokenizer.h"
#include "engine/tokenizers/unicode.h"
#include "engine_test_util.h"
#include "engine_tokenizer_test_util.h"

namespace tf::testing {
namespace {

using engine::Tokenizer;
using ::testing::HasSubstr;

std::unique_ptr<Tokenizer> LoadFixture(const std::string& rel) {
  auto t = engine::LoadTokenizerJson(EngineData(rel));
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return t.ok() ? std::move(t).value() : nullptr;
}

TEST(EngineTokenizer, ByteLevelBpeMatchesTokenizersLibrary) {
  auto tok = LoadFixture("tok-bytebpe/tokenizer.json");
  ASSERT_NE(tok, nullptr);
  // Streaming, one id at a time, gives the same text and never a partial character.
  ExpectMatchesEncodings(*tok, "tok-bytebpe/encodings.jsonl", 19, {.whole_utf8 = true});
}

// Metaspace BPE with byte fallback: the same texts through a SentencePiece-style tokenizer.json.
TEST(EngineTokenizer, MetaspaceBpeMatchesTokenizersLibrary) {
  auto tok = LoadFixture("tok-metaspace/tokenizer.json");
  ASSERT_NE(tok, nullptr);
  ExpectMatchesEncodings(*tok, "tok-metaspace/encodings.jsonl", 19);
}

// A SentencePiece tokenizer.model (BPE, nmt_nfkc normalization, byte fallback) against the
// sentencepiece library: the decoded text is the normalized text (spaces collapsed, tabs and
// odd spaces made plain spaces).
TEST(EngineTokenizer, SentencePieceMatchesSentencePieceLibrary) {
  auto loaded = engine::LoadTokenizer(EngineData("tok-sentencepiece"));
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  const Tokenizer& tok = **loaded;
  ASSERT_NO_FATAL_FAILURE(ExpectMatchesEncodings(tok, "tok-sentencepiece/encodings.jsonl", 19,
                                                 {.tokens = false, .skip_special = true}));
  auto with_bos = tok.Encode("Hello", /*add_special_tokens=*/true);
  ASSERT_TRUE(with_bos.ok());
  EXPECT_EQ((*with_bos)[0], 1);
  EXPECT_TRUE(tok.IsSpecial(1));
}

TEST(EngineTokenizer, SentencePieceErrors) {
  auto error = [](const std::string& bytes) {
    auto t = engine::ParseSentencePieceTokenizer(bytes, "tokenizer.model");
    return t.ok() ? std::string() : t.status().message();
  };
  EXPECT_THAT(error(std::string("\x0a\x05", 2) + "ab"),
              HasSubstr("tokenizer.model: "));  // a piece cut short
  EXPECT_THAT(error(""), HasSubstr("tokenizer.model: has no pieces"));
  std::string model = ReadFileBytes(EngineData("tok-sentencepiece/tokenizer.model"));
  EXPECT_THAT(error(model.substr(0, model.size() / 2)), HasSubstr("tokenizer.model: "));
  EXPECT_EQ(error(model), "");
}

TEST(EngineTokenizer, CheckpointPromptsWithBos) {
  auto tok = LoadFixture("llama-gqa/tokenizer.json");
  ASSERT_NE(tok, nullptr);
  auto ids = tok->Encode("Hello, world!", /*add_special_tokens=*/true);
  ASSERT_TRUE(ids.ok());
  auto ref = nlohmann::json::parse(ReadFileBytes(EngineData("llama-gqa/reference.json")));
  EXPECT_EQ(*ids, ref[0]["prompt_ids"].get<std::vector<int32_t>>());
  EXPECT_EQ(tok->DecodeText(*ids, /*skip_special_tokens=*/true), "Hello, world!");
  EXPECT_EQ(tok->DecodeText(*ids, false), "<|begin_of_text|>Hello, world!");
  EXPECT_TRUE(tok->IsSpecial(0));
  EXPECT_FALSE(tok->IsSpecial(44));
  EXPECT_EQ(tok->vocab_size(), 1024);
}

TEST(EngineTokenizer, StreamHoldsBackSplitCharacters) {
  auto tok = LoadFixture("tok-bytebpe/tokenizer.json");
  ASSERT_NE(tok, nullptr);
  auto ids = tok->Encode("\xf0\x9f\x9a\x80!", false);  // a rocket: four byte tokens, then "!"
  ASSERT_TRUE(ids.ok());
  ASSERT_EQ(ids->size(), 5u);
  engine::TokenTextStream stream(*tok, false);
  EXPECT_EQ(stream.Add((*ids)[0]), "");
  EXPECT_EQ(stream.Add((*ids)[1]), "");
  EXPECT_EQ(stream.Add((*ids)[2]), "");
  EXPECT_EQ(stream.Add((*ids)[3]), "\xf0\x9f\x9a\x80");
  EXPECT_EQ(stream.Add((*ids)[4]), "!");
  // A character cut short by the end of the stream becomes U+FFFD.
  engine::TokenTextStream cut(*tok, false);
  EXPECT_EQ(cut.Add((*ids)[0]), "");
  EXPECT_EQ(cut.Add((*ids)[1]), "");
  EXPECT_EQ(cut.Finish(), "\xef\xbf\xbd");
}

TEST(EngineTokenizer, LossyUtf8) {
  std::string rest;
  EXPECT_EQ(engine::LossyUtf8("a\xff"
                              "b",
                              false, nullptr),
            "a\xef\xbf\xbd"
            "b");
  EXPECT_EQ(engine::LossyUtf8("a\xe2\x82", true, &rest), "a");
  EXPECT_EQ(rest, "\xe2\x82");
  EXPECT_EQ(engine::LossyUtf8("\xe2\x82z", true, &rest), "\xef\xbf\xbdz");  // never completed
  EXPECT_EQ(engine::LossyUtf8("\xed\xa0\x80", false, nullptr),              // a surrogate
            "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
}

TEST(EngineTokenizer, RefusesInvalidUtf8Text) {
  auto tok = LoadFixture("tok-bytebpe/tokenizer.json");
  ASSERT_NE(tok, nullptr);
  auto ids = tok->Encode("bad \xc3", false);
  EXPECT_EQ(ids.status().code(), StatusCode::kInvalidArgument);
}

TEST(EngineTokenizer, UnicodeClasses) {
  using namespace engine::unicode;
  EXPECT_TRUE(IsLetter(U'é'));
  EXPECT_TRUE(IsLetter(U'語'));
  EXPECT_TRUE(IsLetter(U'ß'));
  EXPECT_FALSE(IsLetter(U'1'));
  EXPECT_FALSE(IsLetter(0x1F680));  // rocket
  EXPECT_TRUE(IsNumber(U'٣'));      // Arabic-Indic three (Nd)
  EXPECT_TRUE(IsNumber(U'Ⅻ'));      // Roman numeral twelve (Nl)
  EXPECT_TRUE(IsNumber(U'½'));      // No
  EXPECT_TRUE(IsWhiteSpace(0x3000));
  EXPECT_TRUE(IsWhiteSpace(0xa0));
  EXPECT_FALSE(IsWhiteSpace(0x200b));  // zero width space is not White_Space
}

TEST(EngineTokenizer, Llama3SplitPieces) {
  auto pieces = engine::SplitWords(engine::SplitPattern::kLlama3, "I'M  x\n\n  12345 ok!!\n");
  ASSERT_TRUE(pieces.ok());
  std::vector<std::string> got(pieces->begin(), pieces->end());
  EXPECT_EQ(got, (std::vector<std::string>{"I", "'M", " ", " x", "\n\n", " ", " ", "123", "45",
                                           " ok", "!!\n"}));
  auto gpt2 = engine::SplitWords(engine::SplitPattern::kGpt2, "it's 2024  now");
  ASSERT_TRUE(gpt2.ok());
  got.assign(gpt2->begin(), gpt2->end());
  EXPECT_EQ(got, (std::vector<std::string>{"it", "'s", " 2024", " ", " now"}));
}

TEST(EngineTokenizer, ClearErrors) {
  auto error = [](const std::string& json) {
    auto t = engine::ParseTokenizerJson(json, "tokenizer.json");
    return t.ok() ? std::string() : t.status().message();
  };
  EXPECT_THAT(error("{"), HasSubstr("tokenizer.json: not valid JSON"));
  EXPECT_THAT(error("{}"), HasSubstr("tokenizer.json: not a tokenizer.json"));
  auto fixture = nlohmann::json::parse(ReadFileBytes(EngineData("tok-bytebpe/tokenizer.json")));
  auto edited = fixture;
  edited["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = "\\w+";
  EXPECT_THAT(error(edited.dump()),
              HasSubstr("tokenizer.json: pre_tokenizer.pretokenizers[0].pattern.Regex: '\\w+' is "
                        "not one of the patterns"));
  edited = fixture;
  edited["model"]["merges"][3] = nlohmann::json::array({"Ġ", "nope"});
  EXPECT_THAT(error(edited.dump()), HasSubstr("model: merge 3 ('Ġ' 'nope') uses a token"));
  edited = fixture;
  edited["decoder"] = {{"type", "Metaspace"}};
  EXPECT_THAT(error(edited.dump()), HasSubstr("decoder: type 'Metaspace' is not supported"));
  edited = fixture;
  edited["model"]["vocab"]["Ġ"] = "x";
  EXPECT_THAT(error(edited.dump()), HasSubstr("model.vocab: 'Ġ' has id \"x\""));
  auto missing = engine::LoadTokenizerJson("/nonexistent/tokenizer.json");
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr("/nonexistent/tokenizer.json"));
}

}  // namespace
}  // namespace tf::testing
