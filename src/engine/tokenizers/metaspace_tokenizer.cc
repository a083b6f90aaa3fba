// SentencePiece-style BPE from tokenizer.json (Llama 2, Mistral): spaces become "▁", the text is
// BPE'd as a whole (or per "▁word" with the Metaspace pre-tokenizer's split), characters outside
// the vocabulary fall back to "<0xXX>" byte tokens.
#include "engine/tokenizers/byte_level.h"
#include "engine/tokenizers/tokenizer_parts.h"
#include "engine/tokenizers/unicode.h"

namespace tf::engine {
namespace {

class MetaspaceBpeTokenizer : public BpeTokenizerBase {
 public:
  MetaspaceBpeTokenizer(TokenizerParts parts, MetaspaceOptions options)
      : BpeTokenizerBase(std::move(parts)), options_(options) {}

  Result<std::vector<int32_t>> Encode(std::string_view text,
                                      bool add_special_tokens) const override {
    std::vector<char32_t> cps;
    std::vector<size_t> offsets;
    if (!unicode::DecodeUtf8(text, &cps, &offsets)) {
      return InvalidArgument("text is not valid UTF-8");
    }
    std::vector<int32_t> ids;
    if (add_special_tokens) ids = p_.prefix_ids;
    for (const auto& segment : added_.Split(text)) {
      if (segment.id >= 0) {
        ids.push_back(segment.id);
        continue;
      }
      std::string s;
      for (char c : segment.text) {
        if (c == ' ') {
          s += kMetaspace;
        } else {
          s += c;
        }
      }
      bool at_start = segment.text.data() == text.data();
      bool prepend = options_.prepend == MetaspaceOptions::Prepend::kAlways ||
                     (options_.prepend == MetaspaceOptions::Prepend::kFirst && at_start);
      if (prepend && !(options_.prepend_only_if_missing && s.compare(0, 3, kMetaspace) == 0)) {
        s.insert(0, kMetaspace);
      }
      if (!options_.split) {
        p_.model.Encode(s, &ids);
        continue;
      }
      // Each piece starts at a "▁" (or at the start of the text).
      size_t start = 0;
      for (size_t pos = s.find(kMetaspace, 1); pos != std::string::npos;
           pos = s.find(kMetaspace, pos + 1)) {
        p_.model.Encode(std::string_view(s).substr(start, pos - start), &ids);
        start = pos;
      }
      p_.model.Encode(std::string_view(s).substr(start), &ids);
    }
    if (add_special_tokens) ids.insert(ids.end(), p_.suffix_ids.begin(), p_.suffix_ids.end());
    return ids;
  }

  std::string TokenBytes(int32_t id) const override {
    std::string token = IdToToken(id);
    if (options_.decode_byte_fallback) {
      if (int b = ParseByteToken(token); b >= 0) return std::string(1, static_cast<char>(b));
    }
    std::string out;
    for (size_t pos = 0;;) {
      size_t next = token.find(kMetaspace, pos);
      out.append(token, pos, next == std::string::npos ? std::string::npos : next - pos);
      if (next == std::string::npos) break;
      out += ' ';
      pos = next + kMetaspace.size();
    }
    return out;
  }

  bool strips_leading_space() const override { return options_.strip_leading_space; }

 private:
  MetaspaceOptions options_;
};

}  // namespace

std::unique_ptr<Tokenizer> NewMetaspaceBpeTokenizer(TokenizerParts parts,
                                                    MetaspaceOptions options) {
  return std::make_unique<MetaspaceBpeTokenizer>(std::move(parts), options);
}

}  // namespace tf::engine
