// Checking a tokenizer against what the reference library produced for the same texts:
// tests/data/engine/<tokenizer>/encodings.jsonl, one JSON object per line with the text, its
// ids, its tokens and the decoded text (see tests/data/engine/README.md).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "engine/tokenizers/tokenizer.h"
#include "engine_test_util.h"

namespace tf::testing {

// The cases of tests/data/engine/<rel>, one per non-empty line.
inline std::vector<nlohmann::json> Encodings(const std::string& rel) {
  std::vector<nlohmann::json> out;
  std::istringstream in(ReadFileBytes(EngineData(rel)));
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) out.push_back(nlohmann::json::parse(line));
  }
  return out;
}

// What ExpectMatchesEncodings compares beyond the ids and the decoded text.
struct EncodingChecks {
  bool tokens = true;         // each id's token equals the library's token string
  bool skip_special = false;  // decode with skip_special_tokens (the library decoded so)
  bool stream = true;         // decoding one id at a time gives the decoded text
  bool whole_utf8 = false;    // and every streamed piece is whole, valid UTF-8
};

// Every case of `rel` through `tok`: there are `cases` of them, each text encodes to the
// library's ids (no special tokens added) and those ids decode to the library's text.
inline void ExpectMatchesEncodings(const engine::Tokenizer& tok, const std::string& rel,
                                   size_t cases, const EncodingChecks& checks = {}) {
  auto all = Encodings(rel);
  ASSERT_EQ(all.size(), cases) << rel;
  for (const auto& c : all) {
    std::string text = c["text"].get<std::string>();
    auto want = c["ids"].get<std::vector<int32_t>>();
    auto ids = tok.Encode(text, /*add_special_tokens=*/false);
    ASSERT_TRUE(ids.ok()) << ids.status().ToString();
    EXPECT_EQ(*ids, want) << "text: " << text;
    if (checks.tokens) {
      auto tokens = c["tokens"].get<std::vector<std::string>>();
      for (size_t i = 0; i < want.size() && i < tokens.size(); ++i) {
        EXPECT_EQ(tok.IdToToken(want[i]), tokens[i]) << "text: " << text << " token " << i;
      }
    }
    std::string decoded = c["decoded"].get<std::string>();
    EXPECT_EQ(tok.DecodeText(want, checks.skip_special), decoded) << "text: " << text;
    if (!checks.stream) continue;
    engine::TokenTextStream stream(tok, checks.skip_special);
    std::string streamed;
    for (int32_t id : want) {
      std::string piece = stream.Add(id);
      if (checks.whole_utf8) {
        std::string rest;
        EXPECT_EQ(engine::LossyUtf8(piece, true, &rest), piece) << "invalid UTF-8 streamed";
        EXPECT_TRUE(rest.empty());
      }
      streamed += piece;
    }
    streamed += stream.Finish();
    EXPECT_EQ(streamed, decoded) << "text: " << text;
  }
}

}  // namespace tf::testing
