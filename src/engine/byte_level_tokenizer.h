// The byte-level BPE tokenizer behind ParseTokenizerJson (tokenizer_json.cc builds its parts).
#pragma once

#include <memory>
#include <vector>

#include "engine/added_tokens.h"
#include "engine/bpe.h"
#include "engine/pretokenizer.h"
#include "engine/tokenizer.h"

namespace tf::engine {

struct ByteLevelBpeParts {
  BpeModel model;
  std::vector<AddedToken> added_tokens;
  SplitPattern pattern = SplitPattern::kGpt2;
  bool add_prefix_space = false;  // a space before text that does not start with one
  // The post-processor's template for one sequence: ids before and after the text's.
  std::vector<int32_t> prefix_ids, suffix_ids;
};

std::unique_ptr<Tokenizer> NewByteLevelBpeTokenizer(ByteLevelBpeParts parts);

}  // namespace tf::engine
