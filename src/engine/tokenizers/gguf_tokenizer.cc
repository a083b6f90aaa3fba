#include "engine/tokenizers/gguf_tokenizer.h"

#include <unordered_map>

#include "engine/formats/gguf_metadata.h"
#include "engine/tokenizers/tokenizer_parts.h"

namespace tf::engine {
namespace {

// tokenizer.ggml.token_type values (llama.cpp's, the same as SentencePiece's piece types).
enum TokenType : int64_t {
  kNormal = 1,
  kUnknown = 2,
  kControl = 3,
  kUserDefined = 4,
  kUnused = 5,
  kByte = 6
};

struct Vocab {
  const GgufValue* tokens = nullptr;
  std::vector<int64_t> types;  // [tokens], kNormal where the file has none
  std::optional<int32_t> bos, eos;
  bool add_eos = false;
};

Status ReadVocab(GgufMetadata& m, Vocab* v) {
  v->tokens = m.Array("tokenizer.ggml.tokens", GgufValueType::kString, /*required=*/true);
  TF_RETURN_IF_ERROR(m.status());
  if (v->tokens->size() == 0 || v->tokens->size() > INT32_MAX) {
    m.Fail("tokenizer.ggml.tokens", "has " + std::to_string(v->tokens->size()) + " tokens");
    return m.status();
  }
  const uint64_t n = v->tokens->size();
  v->types.assign(n, kNormal);
  if (const GgufValue* types = m.file().Find("tokenizer.ggml.token_type")) {
    if (!types->is_array() || types->size() != n) {
      m.Fail("tokenizer.ggml.token_type",
             "must be an array of one integer per token (" + std::to_string(n) + ")");
      return m.status();
    }
    for (uint64_t i = 0; i < n; ++i) {
      auto t = types->IntAt(i);
      if (!t || *t < kNormal || *t > kByte) {
        m.Fail("tokenizer.ggml.token_type",
               "[" + std::to_string(i) + "] is not a token type (1 to 6)");
        return m.status();
      }
      v->types[i] = *t;
    }
  }
  for (auto [key, out] : {std::pair{"tokenizer.ggml.bos_token_id", &v->bos},
                          std::pair{"tokenizer.ggml.eos_token_id", &v->eos}}) {
    if (!m.Has(key)) continue;
    int64_t id = m.Int(key, 0, /*allow_zero=*/true);
    if (m.status().ok() && static_cast<uint64_t>(id) >= n) {
      m.Fail(key, std::to_string(id) + " is not a token (" + std::to_string(n) + " tokens)");
    }
    *out = static_cast<int32_t>(id);
  }
  v->add_eos = m.Bool("tokenizer.ggml.add_eos_token", false);
  return m.status();
}

// CONTROL tokens as special added tokens, USER_DEFINED ones as plain added tokens: both are
// matched in the text before anything else.
std::vector<AddedToken> AddedTokens(const Vocab& v) {
  std::vector<AddedToken> added;
  for (uint64_t i = 0; i < v.types.size(); ++i) {
    if (v.types[i] != kControl && v.types[i] != kUserDefined) continue;
    std::string_view text = *v.tokens->StringAt(i);
    if (text.empty()) continue;
    AddedToken a;
    a.id = static_cast<int32_t>(i);
    a.content = std::string(text);
    a.special = v.types[i] == kControl;
    added.push_back(std::move(a));
  }
  return added;
}

Result<SplitPattern> PatternForPre(GgufMetadata& m, const std::string& pre) {
  if (pre == "llama-bpe" || pre == "llama3" || pre == "llama-v3" || pre == "falcon3") {
    return SplitPattern::kLlama3;
  }
  if (pre == "qwen2" || pre == "deepseek-r1-qwen") return SplitPattern::kQwen2;
  if (pre == "gpt-2" || pre == "default") return SplitPattern::kGpt2;
  m.Fail("tokenizer.ggml.pre", "'" + pre +
                                   "' is not a pre-tokenizer this engine implements (llama-bpe, "
                                   "llama3, qwen2, gpt-2 and default are)");
  return m.status();
}

Result<std::unique_ptr<Tokenizer>> ByteLevel(GgufMetadata& m, const Vocab& v) {
  std::string pre = m.String("tokenizer.ggml.pre", "default");
  TF_ASSIGN_OR_RETURN(SplitPattern pattern, PatternForPre(m, pre));
  const GgufValue* merges_value =
      m.Array("tokenizer.ggml.merges", GgufValueType::kString, /*required=*/true);
  TF_RETURN_IF_ERROR(m.status());
  std::unordered_map<std::string, int32_t> vocab;
  for (uint64_t i = 0; i < v.types.size(); ++i) {
    vocab.emplace(std::string(*v.tokens->StringAt(i)), static_cast<int32_t>(i));
  }
  std::vector<std::pair<std::string, std::string>> merges;
  merges.reserve(merges_value->size());
  for (uint64_t i = 0; i < merges_value->size(); ++i) {
    std::string_view s = *merges_value->StringAt(i);
    size_t space = s.size() > 1 ? s.find(' ', 1) : std::string_view::npos;
    if (space == std::string_view::npos) {
      m.Fail("tokenizer.ggml.merges", "[" + std::to_string(i) + "] '" + std::string(s) +
                                          "' is not two tokens separated by a space");
      return m.status();
    }
    merges.emplace_back(std::string(s.substr(0, space)), std::string(s.substr(space + 1)));
  }
  auto model = BpeModel::Build(std::move(vocab), merges, BpeModel::Options{});
  if (!model.ok()) {
    m.Fail("tokenizer.ggml.merges", model.status().message());
    return m.status();
  }
  TokenizerParts parts;
  parts.model = std::move(model).value();
  parts.added_tokens = AddedTokens(v);
  bool add_bos = m.Bool("tokenizer.ggml.add_bos_token", pattern == SplitPattern::kLlama3);
  TF_RETURN_IF_ERROR(m.status());
  if (add_bos && v.bos) parts.prefix_ids.push_back(*v.bos);
  if (v.add_eos && v.eos) parts.suffix_ids.push_back(*v.eos);
  ByteLevelOptions options;
  options.pattern = pattern;
  options.nfc = pattern == SplitPattern::kQwen2;
  return NewByteLevelBpeTokenizer(std::move(parts), options);
}

// SentencePiece BPE with the added tokens of the vocabulary matched first: each piece of text
// between them is encoded on its own (with its leading space, as llama.cpp does after a special
// token).
class GgufSentencePieceTokenizer : public Tokenizer {
 public:
  GgufSentencePieceTokenizer(std::unique_ptr<Tokenizer> inner, std::vector<AddedToken> added,
                             std::vector<int32_t> prefix, std::vector<int32_t> suffix)
      : inner_(std::move(inner)),
        added_(std::move(added)),
        prefix_(std::move(prefix)),
        suffix_(std::move(suffix)) {}

  Result<std::vector<int32_t>> Encode(std::string_view text,
                                      bool add_special_tokens) const override {
    std::vector<int32_t> ids;
    if (add_special_tokens) ids = prefix_;
    for (const auto& segment : added_.Split(text)) {
      if (segment.id >= 0) {
        ids.push_back(segment.id);
        continue;
      }
      TF_ASSIGN_OR_RETURN(auto piece, inner_->Encode(segment.text, /*add_special_tokens=*/false));
      ids.insert(ids.end(), piece.begin(), piece.end());
    }
    if (add_special_tokens) ids.insert(ids.end(), suffix_.begin(), suffix_.end());
    return ids;
  }
  std::string TokenBytes(int32_t id) const override { return inner_->TokenBytes(id); }
  bool strips_leading_space() const override { return inner_->strips_leading_space(); }
  std::string IdToToken(int32_t id) const override { return inner_->IdToToken(id); }
  bool IsSpecial(int32_t id) const override { return inner_->IsSpecial(id); }
  int32_t vocab_size() const override { return inner_->vocab_size(); }

 private:
  std::unique_ptr<Tokenizer> inner_;
  AddedTokenMatcher added_;
  std::vector<int32_t> prefix_, suffix_;
};

Result<std::unique_ptr<Tokenizer>> SentencePiece(GgufMetadata& m, const Vocab& v) {
  const GgufValue* scores =
      m.Array("tokenizer.ggml.scores", GgufValueType::kFloat32, /*required=*/true);
  TF_RETURN_IF_ERROR(m.status());
  if (scores->size() != v.types.size()) {
    m.Fail("tokenizer.ggml.scores", "has " + std::to_string(scores->size()) + " scores for " +
                                        std::to_string(v.types.size()) + " tokens");
    return m.status();
  }
  SentencePieceModel sp;
  sp.model_type = 2;  // BPE
  for (uint64_t i = 0; i < v.types.size(); ++i) {
    SentencePieceModel::Piece p;
    p.text = std::string(*v.tokens->StringAt(i));
    p.score = static_cast<float>(*scores->NumberAt(i));
    p.type = static_cast<SentencePieceModel::PieceType>(v.types[i]);
    sp.byte_fallback |= v.types[i] == kByte;
    sp.pieces.push_back(std::move(p));
  }
  sp.unk_id = static_cast<int32_t>(m.Int("tokenizer.ggml.unknown_token_id", 0, true));
  sp.bos_id = -1;  // BOS and EOS are added by the wrapper
  sp.eos_id = -1;
  sp.add_dummy_prefix = m.Bool("tokenizer.ggml.add_space_prefix", true);
  sp.remove_extra_whitespaces = m.Bool("tokenizer.ggml.remove_extra_whitespaces", false);
  bool add_bos = m.Bool("tokenizer.ggml.add_bos_token", true);
  TF_RETURN_IF_ERROR(m.status());
  auto inner = NewSentencePieceTokenizer(std::move(sp), m.file().path());
  TF_RETURN_IF_ERROR(inner.status());
  std::vector<int32_t> prefix, suffix;
  if (add_bos && v.bos) prefix.push_back(*v.bos);
  if (v.add_eos && v.eos) suffix.push_back(*v.eos);
  return std::unique_ptr<Tokenizer>(new GgufSentencePieceTokenizer(
      std::move(inner).value(), AddedTokens(v), std::move(prefix), std::move(suffix)));
}

}  // namespace

Result<std::unique_ptr<Tokenizer>> NewGgufTokenizer(const GgufFile& file) {
  GgufMetadata m(file);
  std::string model = m.String("tokenizer.ggml.model");
  TF_RETURN_IF_ERROR(m.status());
  if (model != "gpt2" && model != "llama") {
    m.Fail("tokenizer.ggml.model", "'" + model + "' is not supported (gpt2, byte-level BPE, and " +
                                       "llama, SentencePiece BPE, are)");
    return m.status();
  }
  Vocab v;
  TF_RETURN_IF_ERROR(ReadVocab(m, &v));
  return model == "gpt2" ? ByteLevel(m, v) : SentencePiece(m, v);
}

Result<std::unique_ptr<Tokenizer>> LoadGgufTokenizer(const std::string& path) {
  TF_ASSIGN_OR_RETURN(auto file, GgufFile::Open(path));
  return NewGgufTokenizer(*file);
}

Result<std::string> GgufChatTemplate(const GgufFile& file) {
  const GgufValue* v = file.Find("tokenizer.chat_template");
  if (v == nullptr) return NotFound(file.path() + ": has no tokenizer.chat_template");
  auto s = v->AsString();
  if (!s) {
    return InvalidArgument(file.path() + ": metadata key 'tokenizer.chat_template' must be a " +
                           "string, not a value of type " + v->TypeString());
  }
  return std::string(*s);
}

}  // namespace tf::engine
