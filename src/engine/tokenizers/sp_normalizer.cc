#include "engine/tokenizers/sp_normalizer.h"

#include <cstring>

#include "engine/tokenizers/unicode.h"

namespace tf::engine {
namespace {

constexpr std::string_view kSpaceSymbol = "\xe2\x96\x81";  // "▁"
constexpr std::string_view kReplacementChar = "\xef\xbf\xbd";

// A double-array unit (darts-clone layout).
bool HasLeaf(uint32_t unit) { return (unit >> 8) & 1; }
uint32_t Value(uint32_t unit) { return unit & ((1u << 31) - 1); }
uint32_t Label(uint32_t unit) { return unit & ((1u << 31) | 0xff); }
uint32_t Offset(uint32_t unit) { return (unit >> 10) << ((unit & (1u << 9)) >> 6); }

}  // namespace

Result<SpNormalizer> SpNormalizer::Build(const SentencePieceModel& model) {
  SpNormalizer n;
  n.add_dummy_prefix_ = model.add_dummy_prefix;
  n.remove_extra_whitespaces_ = model.remove_extra_whitespaces;
  n.escape_whitespaces_ = model.escape_whitespaces;
  n.treat_whitespace_as_suffix_ = model.treat_whitespace_as_suffix;
  n.charsmap_ = model.precompiled_charsmap;
  if (n.charsmap_.empty()) return n;
  // [u32 trie size in bytes][trie units][replacement strings]
  uint32_t trie_bytes;
  if (n.charsmap_.size() < 4) return InvalidArgument("precompiled_charsmap is truncated");
  std::memcpy(&trie_bytes, n.charsmap_.data(), 4);
  if (trie_bytes % 4 != 0 || trie_bytes == 0 || trie_bytes > n.charsmap_.size() - 4) {
    return InvalidArgument("precompiled_charsmap has a bad trie size");
  }
  n.trie_.resize(trie_bytes / 4);
  std::memcpy(n.trie_.data(), n.charsmap_.data() + 4, trie_bytes);
  n.replacements_ = std::string_view(n.charsmap_).substr(4 + trie_bytes);
  return n;
}

std::pair<std::string_view, size_t> SpNormalizer::NormalizePrefix(std::string_view input) const {
  size_t char_len = Utf8SequenceLength(input);
  if (!trie_.empty()) {
    // The longest key of the trie that prefixes input: walk the double array byte by byte,
    // remembering the last node that ends a key.
    size_t best_len = 0;
    uint32_t best_value = 0;
    uint32_t pos = Offset(trie_[0]);
    for (size_t i = 0; i < input.size(); ++i) {
      uint8_t c = static_cast<uint8_t>(input[i]);
      pos ^= c;
      if (pos >= trie_.size()) break;
      uint32_t unit = trie_[pos];
      if (Label(unit) != c) break;
      pos ^= Offset(unit);
      if (pos >= trie_.size()) break;
      if (HasLeaf(unit)) {
        best_len = i + 1;
        best_value = Value(trie_[pos]);
      }
    }
    if (best_len > 0 && best_value < replacements_.size()) {
      std::string_view rest = replacements_.substr(best_value);
      return {rest.substr(0, rest.find('\0')), best_len};
    }
  }
  if (char_len == 0) return {kReplacementChar, 1};
  return {input.substr(0, char_len), char_len};
}

std::string SpNormalizer::Normalize(std::string_view input) const {
  std::string out;
  const std::string_view space = escape_whitespaces_ ? kSpaceSymbol : " ";
  if (remove_extra_whitespaces_) {  // leading whitespace
    while (!input.empty()) {
      auto [piece, consumed] = NormalizePrefix(input);
      if (piece != " ") break;
      input.remove_prefix(consumed);
    }
  }
  if (input.empty()) return out;
  if (add_dummy_prefix_ && !treat_whitespace_as_suffix_) out += space;
  bool prev_space = remove_extra_whitespaces_;
  while (!input.empty()) {
    auto [piece, consumed] = NormalizePrefix(input);
    while (prev_space && !piece.empty() && piece[0] == ' ') piece.remove_prefix(1);
    if (!piece.empty()) {
      for (char c : piece) {
        if (c == ' ' && escape_whitespaces_) {
          out += kSpaceSymbol;
        } else {
          out += c;
        }
      }
      prev_space = piece.back() == ' ';
    }
    prev_space = prev_space && remove_extra_whitespaces_;
    input.remove_prefix(consumed);
  }
  if (remove_extra_whitespaces_) {  // trailing whitespace
    while (out.size() >= space.size() &&
           out.compare(out.size() - space.size(), space.size(), space) == 0) {
      out.resize(out.size() - space.size());
    }
  }
  return out;
}

}  // namespace tf::engine
