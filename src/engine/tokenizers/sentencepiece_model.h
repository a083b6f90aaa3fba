// SentencePiece's tokenizer.model: a ModelProto (protocol buffers) holding the pieces with their
// scores and types, the trainer's settings and the normalizer's. Only the fields the engine
// uses are read; unknown fields are skipped, as protocol buffers allow.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace tf::engine {

struct SentencePieceModel {
  enum class PieceType {
    kNormal = 1,
    kUnknown = 2,
    kControl = 3,
    kUserDefined = 4,
    kUnused = 5,
    kByte = 6
  };
  struct Piece {
    std::string text;
    float score = 0;
    PieceType type = PieceType::kNormal;
  };
  std::vector<Piece> pieces;  // id = index

  // TrainerSpec.
  int model_type = 1;  // 1 unigram, 2 BPE, 3 word, 4 char
  bool byte_fallback = false;
  bool treat_whitespace_as_suffix = false;
  int32_t unk_id = 0, bos_id = 1, eos_id = 2;

  // NormalizerSpec.
  std::string normalizer_name;
  std::string precompiled_charsmap;  // a double-array trie and its replacement strings
  bool add_dummy_prefix = true;
  bool remove_extra_whitespaces = true;
  bool escape_whitespaces = true;
};

// Parses the bytes of a tokenizer.model. `file_name` goes into errors: InvalidArgument naming
// the file and what is malformed.
Result<SentencePieceModel> ParseSentencePieceModel(std::string_view bytes,
                                                   std::string_view file_name);

}  // namespace tf::engine
