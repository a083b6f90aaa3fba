#include "engine/tokenizers/added_tokens.h"

#include "engine/tokenizers/unicode.h"

namespace tf::engine {
namespace {

// The start of the character that ends at `pos` (> 0) in valid UTF-8.
size_t PrevCharStart(std::string_view text, size_t pos) {
  size_t start = pos - 1;
  while (start > 0 && (static_cast<unsigned char>(text[start]) & 0xc0) == 0x80) --start;
  return start;
}

// The code point starting at `pos` in valid UTF-8, or 0 past the end.
char32_t CharAt(std::string_view text, size_t pos) {
  if (pos >= text.size()) return 0;
  size_t len = Utf8SequenceLength(text.substr(pos));
  std::vector<char32_t> cps;
  std::vector<size_t> offsets;
  if (len == 0 || !unicode::DecodeUtf8(text.substr(pos, len), &cps, &offsets)) return 0;
  return cps[0];
}

bool IsWordChar(char32_t c) { return c == '_' || unicode::IsLetter(c) || unicode::IsNumber(c); }

}  // namespace

AddedTokenMatcher::AddedTokenMatcher(std::vector<AddedToken> tokens)
    : tokens_(std::move(tokens)), by_first_byte_(256) {
  for (size_t i = 0; i < tokens_.size(); ++i) {
    by_id_[tokens_[i].id] = i;
    if (!tokens_[i].content.empty()) {
      by_first_byte_[static_cast<unsigned char>(tokens_[i].content[0])].push_back(i);
    }
  }
}

const AddedToken* AddedTokenMatcher::Find(int32_t id) const {
  auto it = by_id_.find(id);
  return it == by_id_.end() ? nullptr : &tokens_[it->second];
}

const AddedToken* AddedTokenMatcher::LongestAt(std::string_view text, size_t pos) const {
  const AddedToken* best = nullptr;
  for (size_t i : by_first_byte_[static_cast<unsigned char>(text[pos])]) {
    const AddedToken& t = tokens_[i];
    if (text.compare(pos, t.content.size(), t.content) != 0) continue;
    if (best != nullptr && best->content.size() >= t.content.size()) continue;
    if (t.single_word) {
      size_t end = pos + t.content.size();
      if ((pos > 0 && IsWordChar(CharAt(text, PrevCharStart(text, pos)))) ||
          (end < text.size() && IsWordChar(CharAt(text, end)))) {
        continue;
      }
    }
    best = &t;
  }
  return best;
}

std::vector<AddedTokenMatcher::Segment> AddedTokenMatcher::Split(std::string_view text) const {
  std::vector<Segment> out;
  size_t plain_start = 0;  // start of the text not yet emitted
  for (size_t pos = 0; pos < text.size();) {
    const AddedToken* t = tokens_.empty() ? nullptr : LongestAt(text, pos);
    if (t == nullptr) {
      ++pos;
      continue;
    }
    size_t plain_end = pos;
    while (t->lstrip && plain_end > plain_start) {
      size_t prev = PrevCharStart(text, plain_end);
      if (prev < plain_start || !unicode::IsWhiteSpace(CharAt(text, prev))) break;
      plain_end = prev;
    }
    if (plain_end > plain_start) out.push_back({text.substr(plain_start, plain_end - plain_start)});
    out.push_back({{}, t->id});
    pos += t->content.size();
    if (t->rstrip) {
      while (pos < text.size() && unicode::IsWhiteSpace(CharAt(text, pos))) {
        pos += Utf8SequenceLength(text.substr(pos));
      }
    }
    plain_start = pos;
  }
  if (plain_start < text.size()) out.push_back({text.substr(plain_start)});
  return out;
}

}  // namespace tf::engine
