#include "engine/tokenizers/byte_level.h"
#include "engine/tokenizers/nfc.h"
#include "engine/tokenizers/tokenizer_parts.h"
#include "engine/tokenizers/unicode.h"

namespace tf::engine {
namespace {

class ByteLevelBpeTokenizer : public BpeTokenizerBase {
 public:
  ByteLevelBpeTokenizer(TokenizerParts parts, ByteLevelOptions options)
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
    std::string buffer;
    for (const auto& segment : added_.Split(text)) {
      if (segment.id >= 0) {
        ids.push_back(segment.id);
        continue;
      }
      std::string_view plain = segment.text;
      if (options_.nfc) {
        buffer = unicode::ToNfc(plain);
        plain = buffer;
      }
      if (options_.add_prefix_space && plain[0] != ' ') {
        buffer = " " + std::string(plain);
        plain = buffer;
      }
      TF_ASSIGN_OR_RETURN(auto words, SplitWords(options_.pattern, plain));
      for (std::string_view word : words) p_.model.Encode(BytesToChars(word), &ids);
    }
    if (add_special_tokens) ids.insert(ids.end(), p_.suffix_ids.begin(), p_.suffix_ids.end());
    return ids;
  }

  std::string TokenBytes(int32_t id) const override {
    // A token whose characters all stand for bytes is those bytes; any other (an added token
    // such as "<|eot_id|>" in plain characters) is its own text.
    std::string token = IdToToken(id);
    std::vector<char32_t> cps;
    std::vector<size_t> offsets;
    if (!unicode::DecodeUtf8(token, &cps, &offsets)) return token;
    std::string bytes;
    for (char32_t c : cps) {
      auto b = CharToByte(c);
      if (!b) return token;
      bytes.push_back(static_cast<char>(*b));
    }
    return bytes;
  }

 private:
  ByteLevelOptions options_;
};

}  // namespace

std::unique_ptr<Tokenizer> NewByteLevelBpeTokenizer(TokenizerParts parts,
                                                    ByteLevelOptions options) {
  return std::make_unique<ByteLevelBpeTokenizer>(std::move(parts), options);
}

}  // namespace tf::engine
