// SentencePiece BPE models (tokenizer.model): normalize (sp_normalizer.cc), then merge adjacent
// symbols, the pair whose merged piece scores highest first; characters outside the vocabulary
// become their byte pieces (byte fallback) or the unknown piece.
#include <array>
#include <fstream>
#include <queue>
#include <sstream>
#include <unordered_map>

#include "engine/tokenizers/byte_level.h"
#include "engine/tokenizers/sentencepiece_model.h"
#include "engine/tokenizers/sp_normalizer.h"
#include "engine/tokenizers/tokenizer_parts.h"
#include "engine/tokenizers/unicode.h"

namespace tf::engine {
namespace {

using PieceType = SentencePieceModel::PieceType;

class SentencePieceTokenizer : public Tokenizer {
 public:
  SentencePieceTokenizer(SentencePieceModel model, SpNormalizer normalizer)
      : m_(std::move(model)), normalizer_(std::move(normalizer)) {
    byte_ids_.fill(-1);
    for (size_t id = 0; id < m_.pieces.size(); ++id) {
      const auto& p = m_.pieces[id];
      if (p.type == PieceType::kNormal || p.type == PieceType::kUserDefined ||
          p.type == PieceType::kUnused) {
        mergeable_.emplace(p.text, static_cast<int32_t>(id));
      }
      if (p.type == PieceType::kByte) {
        int b = ParseByteToken(p.text);
        if (b >= 0) byte_ids_[b] = static_cast<int32_t>(id);
      }
    }
  }

  Result<std::vector<int32_t>> Encode(std::string_view text,
                                      bool add_special_tokens) const override {
    std::vector<char32_t> cps;
    std::vector<size_t> offsets;
    if (!unicode::DecodeUtf8(text, &cps, &offsets))
      return InvalidArgument("text is not valid UTF-8");
    std::vector<int32_t> ids;
    if (add_special_tokens && m_.bos_id >= 0) ids.push_back(m_.bos_id);
    std::string normalized = normalizer_.Normalize(text);
    for (const std::string& symbol : Merge(normalized)) {
      if (auto it = mergeable_.find(symbol); it != mergeable_.end()) {
        ids.push_back(it->second);
      } else if (m_.byte_fallback && HasBytePieces(symbol)) {
        for (char b : symbol) ids.push_back(byte_ids_[static_cast<uint8_t>(b)]);
      } else {
        ids.push_back(m_.unk_id);
      }
    }
    return ids;
  }

  std::string TokenBytes(int32_t id) const override {
    if (id < 0 || id >= vocab_size()) return "";
    const auto& p = m_.pieces[id];
    switch (p.type) {
      case PieceType::kControl:
        return "";
      case PieceType::kUnknown:
        return " \xe2\x81\x87 ";  // " ⁇ ", as SentencePiece shows it
      case PieceType::kByte: {
        int b = ParseByteToken(p.text);
        return b >= 0 ? std::string(1, static_cast<char>(b)) : "";
      }
      default:
        break;
    }
    std::string out;
    for (size_t pos = 0;;) {
      size_t next = p.text.find("\xe2\x96\x81", pos);
      out.append(p.text, pos, next == std::string::npos ? std::string::npos : next - pos);
      if (next == std::string::npos) break;
      out += ' ';
      pos = next + 3;
    }
    return out;
  }

  bool strips_leading_space() const override {
    return m_.add_dummy_prefix && !m_.treat_whitespace_as_suffix;
  }
  std::string IdToToken(int32_t id) const override {
    return id >= 0 && id < vocab_size() ? m_.pieces[id].text : "";
  }
  bool IsSpecial(int32_t id) const override {
    return id >= 0 && id < vocab_size() && m_.pieces[id].type == PieceType::kControl;
  }
  int32_t vocab_size() const override { return static_cast<int32_t>(m_.pieces.size()); }

 private:
  bool HasBytePieces(const std::string& s) const {
    for (char b : s) {
      if (byte_ids_[static_cast<uint8_t>(b)] < 0) return false;
    }
    return true;
  }

  // The symbols of `text` after every merge: start from its characters and repeatedly join the
  // adjacent pair whose concatenation is the best-scoring piece (the leftmost among equals).
  std::vector<std::string> Merge(const std::string& text) const {
    struct Symbol {
      size_t begin, len;  // in text
      int prev, next;     // -1 at the ends
    };
    std::vector<Symbol> symbols;
    for (size_t i = 0; i < text.size();) {
      size_t len = std::max<size_t>(1, Utf8SequenceLength(std::string_view(text).substr(i)));
      int index = static_cast<int>(symbols.size());
      symbols.push_back({i, len, index - 1, -1});
      if (index > 0) symbols[index - 1].next = index;
      i += len;
    }
    struct Candidate {
      float score;
      int left;
      size_t size;  // the merged length: stale when the symbols have changed since
      bool operator<(const Candidate& o) const {
        return score != o.score ? score < o.score : left > o.left;
      }
    };
    std::priority_queue<Candidate> queue;
    auto consider = [&](int left) {
      if (left < 0 || symbols[left].next < 0) return;
      const Symbol& a = symbols[left];
      const Symbol& b = symbols[a.next];
      auto it = mergeable_.find(text.substr(a.begin, a.len + b.len));
      if (it != mergeable_.end()) queue.push({m_.pieces[it->second].score, left, a.len + b.len});
    };
    for (int i = 0; i + 1 < static_cast<int>(symbols.size()); ++i) consider(i);
    while (!queue.empty()) {
      Candidate c = queue.top();
      queue.pop();
      Symbol& a = symbols[c.left];
      if (a.len == 0 || a.next < 0 || a.len + symbols[a.next].len != c.size) continue;
      Symbol& b = symbols[a.next];
      a.len += b.len;
      a.next = b.next;
      if (b.next >= 0) symbols[b.next].prev = c.left;
      b.len = 0;
      consider(a.prev);
      consider(c.left);
    }
    std::vector<std::string> out;
    for (int i = symbols.empty() ? -1 : 0; i >= 0; i = symbols[i].next) {
      out.push_back(text.substr(symbols[i].begin, symbols[i].len));
    }
    return out;
  }

  SentencePieceModel m_;
  SpNormalizer normalizer_;
  std::unordered_map<std::string, int32_t> mergeable_;  // normal, user-defined, unused pieces
  std::array<int32_t, 256> byte_ids_;                   // the byte pieces' ids, or -1
};

}  // namespace

Result<std::unique_ptr<Tokenizer>> ParseSentencePieceTokenizer(std::string_view bytes,
                                                               std::string_view file) {
  TF_ASSIGN_OR_RETURN(SentencePieceModel model, ParseSentencePieceModel(bytes, file));
  return NewSentencePieceTokenizer(std::move(model), file);
}

Result<std::unique_ptr<Tokenizer>> NewSentencePieceTokenizer(SentencePieceModel model,
                                                             std::string_view file) {
  if (model.model_type != 2) {
    return InvalidArgument(std::string(file) + ": model_type " + std::to_string(model.model_type) +
                           " is not supported yet (BPE, 2, is; unigram is planned)");
  }
  for (int32_t id : {model.unk_id}) {
    if (id < 0 || id >= static_cast<int32_t>(model.pieces.size())) {
      return InvalidArgument(std::string(file) + ": unk_id " + std::to_string(id) +
                             " is not a piece");
    }
  }
  if (model.bos_id >= static_cast<int32_t>(model.pieces.size())) model.bos_id = -1;
  auto normalizer = SpNormalizer::Build(model);
  if (!normalizer.ok()) return normalizer.status().WithContext(file);
  return std::unique_ptr<Tokenizer>(
      new SentencePieceTokenizer(std::move(model), std::move(normalizer).value()));
}

Result<std::unique_ptr<Tokenizer>> LoadSentencePieceTokenizer(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound(path + ": cannot be read");
  std::stringstream ss;
  ss << in.rdbuf();
  return ParseSentencePieceTokenizer(ss.str(), path);
}

}  // namespace tf::engine
