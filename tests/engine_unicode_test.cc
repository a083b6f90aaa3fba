// Unicode normalization form C against Python's unicodedata (tests/data/engine/nfc_cases.jsonl:
// composition, Hangul, canonical reordering, singletons and composition exclusions).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "engine/tokenizers/nfc.h"
#include "engine/tokenizers/tokenizer.h"
#include "engine_test_util.h"

namespace tf::testing {
namespace {

TEST(EngineUnicode, NfcMatchesPythonUnicodedata) {
  std::istringstream in(ReadFileBytes(EngineData("nfc_cases.jsonl")));
  int cases = 0;
  for (std::string line; std::getline(in, line); ++cases) {
    auto c = nlohmann::json::parse(line);
    std::string text = c["text"].get<std::string>(), want = c["nfc"].get<std::string>();
    EXPECT_EQ(engine::unicode::ToNfc(text), want) << line;
    EXPECT_EQ(engine::unicode::ToNfc(want), want) << "not idempotent: " << line;
  }
  EXPECT_EQ(cases, 28);
}

// A byte-level tokenizer.json with an NFC normalizer (as Qwen2's has) tokenizes a decomposed
// "é" as the composed one.
TEST(EngineUnicode, NfcNormalizerAppliesBeforeBpe) {
  auto j = nlohmann::json::parse(ReadFileBytes(EngineData("tok-bytebpe/tokenizer.json")));
  auto plain = engine::ParseTokenizerJson(j.dump(), "tokenizer.json");
  j["normalizer"] = {{"type", "NFC"}};
  auto nfc = engine::ParseTokenizerJson(j.dump(), "tokenizer.json");
  ASSERT_TRUE(plain.ok() && nfc.ok());
  auto composed = (*plain)->Encode("caf\xc3\xa9", false);
  auto decomposed_plain = (*plain)->Encode("cafe\xcc\x81", false);
  auto decomposed_nfc = (*nfc)->Encode("cafe\xcc\x81", false);
  ASSERT_TRUE(composed.ok() && decomposed_plain.ok() && decomposed_nfc.ok());
  EXPECT_NE(*decomposed_plain, *composed);
  EXPECT_EQ(*decomposed_nfc, *composed);
}

}  // namespace
}  // namespace tf::testing
