#include "engine/byte_level_tokenizer.h"

#include "engine/byte_level.h"
#include "engine/unicode.h"

namespace tf::engine {
namespace {

class ByteLevelBpeTokenizer : public Tokenizer {
 public:
  explicit ByteLevelBpeTokenizer(ByteLevelBpeParts parts)
      : p_(std::move(parts)), added_(p_.added_tokens) {
    vocab_size_ = p_.model.id_limit();
    for (const auto& t : p_.added_tokens) vocab_size_ = std::max(vocab_size_, t.id + 1);
  }

  Result<std::vector<int32_t>> Encode(std::string_view text,
                                      bool add_special_tokens) const override {
    std::vector<char32_t> cps;
    std::vector<size_t> offsets;
    if (!unicode::DecodeUtf8(text, &cps, &offsets)) {
      return InvalidArgument("text is not valid UTF-8");
    }
    std::vector<int32_t> ids;
    if (add_special_tokens) ids = p_.prefix_ids;
    std::string buffer;
    for (const auto& segment : added_.Split(text)) {
      if (segment.id >= 0) {
        ids.push_back(segment.id);
        continue;
      }
      std::string_view plain = segment.text;
      if (p_.add_prefix_space && plain[0] != ' ') {
        buffer = " " + std::string(plain);
        plain = buffer;
      }
      TF_ASSIGN_OR_RETURN(auto words, SplitWords(p_.pattern, plain));
      for (std::string_view word : words) p_.model.Encode(BytesToChars(word), &ids);
    }
    if (add_special_tokens) ids.insert(ids.end(), p_.suffix_ids.begin(), p_.suffix_ids.end());
    return ids;
  }

  std::string DecodeBytes(std::span<const int32_t> ids, bool skip_special_tokens) const override {
    std::string out;
    std::vector<char32_t> cps;
    std::vector<size_t> offsets;
    for (int32_t id : ids) {
      if (skip_special_tokens && IsSpecial(id)) continue;
      std::string token = IdToToken(id);
      // A token whose characters all stand for bytes is those bytes; any other (an added token
      // such as "<|eot_id|>" in plain characters) is its own text.
      std::string bytes;
      bool mapped = unicode::DecodeUtf8(token, &cps, &offsets);
      for (size_t i = 0; mapped && i < cps.size(); ++i) {
        auto b = CharToByte(cps[i]);
        if (b) bytes.push_back(static_cast<char>(*b));
        mapped = b.has_value();
      }
      out += mapped ? bytes : token;
    }
    return out;
  }

  std::string IdToToken(int32_t id) const override {
    if (const AddedToken* t = added_.Find(id)) return t->content;
    const std::string* token = p_.model.IdToToken(id);
    return token != nullptr ? *token : "";
  }

  bool IsSpecial(int32_t id) const override {
    const AddedToken* t = added_.Find(id);
    return t != nullptr && t->special;
  }

  int32_t vocab_size() const override { return vocab_size_; }

 private:
  ByteLevelBpeParts p_;
  AddedTokenMatcher added_;
  int32_t vocab_size_;
};

}  // namespace

std::unique_ptr<Tokenizer> NewByteLevelBpeTokenizer(ByteLevelBpeParts parts) {
  return std::make_unique<ByteLevelBpeTokenizer>(std::move(parts));
}

}  // namespace tf::engine
