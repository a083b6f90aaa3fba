// Decoding: ids to bytes, UTF-8 repair, and the streaming decoder.
#include "engine/tokenizers/tokenizer.h"
#include "engine/tokenizers/unicode.h"

namespace tf::engine {
namespace {

constexpr std::string_view kReplacement = "\xef\xbf\xbd";  // U+FFFD

// The length of the longest prefix of s that starts a valid UTF-8 sequence (the leading byte
// and continuation bytes that keep it valid), when s ends before the sequence does; else 0.
size_t IncompletePrefix(std::string_view s) {
  unsigned char lead = static_cast<unsigned char>(s[0]);
  size_t need = lead >= 0xc2 && lead <= 0xdf   ? 2
                : lead >= 0xe0 && lead <= 0xef ? 3
                : lead >= 0xf0 && lead <= 0xf4 ? 4
                                               : 0;
  if (need == 0) return 0;
  size_t i = 1;
  for (; i < s.size() && i < need; ++i) {
    unsigned char b = static_cast<unsigned char>(s[i]);
    // The second byte's range depends on the lead: no overlongs, surrogates or > U+10FFFF.
    unsigned char lo = 0x80, hi = 0xbf;
    if (i == 1) {
      if (lead == 0xe0) lo = 0xa0;
      if (lead == 0xed) hi = 0x9f;
      if (lead == 0xf0) lo = 0x90;
      if (lead == 0xf4) hi = 0x8f;
    }
    if (b < lo || b > hi) return 0;
  }
  return i < need && i == s.size() ? i : 0;
}

}  // namespace

std::string LossyUtf8(std::string_view bytes, bool hold_incomplete, std::string* rest) {
  std::string out;
  if (rest != nullptr) rest->clear();
  size_t i = 0;
  while (i < bytes.size()) {
    std::string_view tail = bytes.substr(i);
    size_t len = Utf8SequenceLength(tail);
    if (len > 0) {
      out.append(tail.substr(0, len));
      i += len;
      continue;
    }
    size_t partial = IncompletePrefix(tail);
    if (partial > 0 && hold_incomplete && rest != nullptr) {
      *rest = std::string(tail);
      break;
    }
    // A maximal invalid sequence: the bytes that began a valid one, or else one byte.
    out.append(kReplacement);
    size_t skip = 1;
    while (skip < tail.size() && skip < 4) {
      unsigned char b = static_cast<unsigned char>(tail[skip]);
      if ((b & 0xc0) != 0x80 || IncompletePrefix(tail.substr(0, skip + 1)) == 0) break;
      ++skip;
    }
    i += skip;
  }
  return out;
}

std::string Tokenizer::DecodeBytes(std::span<const int32_t> ids, bool skip_special_tokens) const {
  std::string out;
  for (int32_t id : ids) {
    if (!skip_special_tokens || !IsSpecial(id)) out += TokenBytes(id);
  }
  if (strips_leading_space() && !out.empty() && out[0] == ' ') out.erase(0, 1);
  return out;
}

std::string Tokenizer::DecodeText(std::span<const int32_t> ids, bool skip_special_tokens) const {
  return LossyUtf8(DecodeBytes(ids, skip_special_tokens), /*hold_incomplete=*/false, nullptr);
}

std::string TokenTextStream::Add(int32_t id) {
  if (skip_special_ && tokenizer_.IsSpecial(id)) return "";
  std::string bytes = tokenizer_.TokenBytes(id);
  if (!started_ && !bytes.empty()) {
    if (tokenizer_.strips_leading_space() && bytes[0] == ' ') bytes.erase(0, 1);
    started_ = true;
  }
  pending_ += bytes;
  std::string rest;
  std::string out = LossyUtf8(pending_, /*hold_incomplete=*/true, &rest);
  pending_ = std::move(rest);
  return out;
}

std::string TokenTextStream::Finish() {
  std::string out = LossyUtf8(pending_, /*hold_incomplete=*/false, nullptr);
  pending_.clear();
  return out;
}

}  // namespace tf::engine
