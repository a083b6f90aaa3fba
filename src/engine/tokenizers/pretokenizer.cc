#include "engine/tokenizers/pretokenizer.h"

#include "engine/tokenizers/unicode.h"

namespace tf::engine {
namespace {

using unicode::IsLetter;
using unicode::IsNumber;
using unicode::IsWhiteSpace;

constexpr std::string_view kLlama3Regex =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr std::string_view kQwen2Regex =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr std::string_view kGpt2Regex =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

bool IsNewline(char32_t c) { return c == '\r' || c == '\n'; }
// [^\s\p{L}\p{N}]
bool IsOther(char32_t c) { return !IsWhiteSpace(c) && !IsLetter(c) && !IsNumber(c); }

// Matches the pattern at the start of cps[i, n), returning the end of the match (> i).
class Matcher {
 public:
  Matcher(SplitPattern p, const std::vector<char32_t>& cps) : p_(p), c_(cps), n_(cps.size()) {}

  size_t Match(size_t i) const {
    size_t end;
    if (Contraction(i, &end)) return end;
    if (Letters(i, &end)) return end;
    if (Numbers(i, &end)) return end;
    if (Punctuation(i, &end)) return end;
    if (p_ != SplitPattern::kGpt2 && SpacesThenNewlines(i, &end)) return end;
    return Spaces(i);
  }

 private:
  char32_t At(size_t i) const { return i < n_ ? c_[i] : 0; }

  // 's|'t|'re|'ve|'m|'ll|'d, case-insensitive except for GPT-2.
  bool Contraction(size_t i, size_t* end) const {
    if (At(i) != '\'' || i + 1 >= n_) return false;
    bool fold = p_ != SplitPattern::kGpt2;
    auto is = [&](size_t k, char lower) {
      char32_t c = At(k);
      if (c == static_cast<char32_t>(lower)) return true;
      if (!fold) return false;
      if (c == static_cast<char32_t>(lower - 'a' + 'A')) return true;
      return lower == 's' && c == 0x17f;  // LATIN SMALL LETTER LONG S folds to s
    };
    for (char one : {'s', 't', 'm', 'd'}) {
      if (is(i + 1, one)) return *end = i + 2, true;
    }
    for (const char* two : {"re", "ve", "ll"}) {
      if (is(i + 1, two[0]) && is(i + 2, two[1])) return *end = i + 3, true;
    }
    return false;
  }

  size_t RunOf(size_t i, bool (*pred)(char32_t), size_t max = SIZE_MAX) const {
    size_t j = i;
    while (j < n_ && j - i < max && pred(c_[j])) ++j;
    return j;
  }

  // Llama 3 / Qwen2: [^\r\n\p{L}\p{N}]?\p{L}+   GPT-2: ` ?\p{L}+`
  bool Letters(size_t i, size_t* end) const {
    if (i >= n_) return false;
    char32_t c = c_[i];
    bool prefix =
        p_ == SplitPattern::kGpt2 ? c == ' ' : !IsNewline(c) && !IsLetter(c) && !IsNumber(c);
    if (prefix && IsLetter(At(i + 1))) return *end = RunOf(i + 1, IsLetter), true;
    if (IsLetter(c)) return *end = RunOf(i, IsLetter), true;
    return false;
  }

  // Llama 3: \p{N}{1,3}   Qwen2: \p{N}   GPT-2: ` ?\p{N}+`
  bool Numbers(size_t i, size_t* end) const {
    if (p_ == SplitPattern::kGpt2) {
      size_t start = At(i) == ' ' && IsNumber(At(i + 1)) ? i + 1 : i;
      if (!IsNumber(At(start)) || start >= n_) return false;
      return *end = RunOf(start, IsNumber), true;
    }
    if (i >= n_ || !IsNumber(c_[i])) return false;
    return *end = RunOf(i, IsNumber, p_ == SplitPattern::kLlama3 ? 3 : 1), true;
  }

  // ` ?[^\s\p{L}\p{N}]+`, then [\r\n]* except for GPT-2.
  bool Punctuation(size_t i, size_t* end) const {
    size_t start = At(i) == ' ' && i + 1 < n_ && IsOther(c_[i + 1]) ? i + 1 : i;
    if (start >= n_ || !IsOther(c_[start])) return false;
    size_t j = RunOf(start, IsOther);
    if (p_ != SplitPattern::kGpt2) j = RunOf(j, IsNewline);
    return *end = j, true;
  }

  // \s*[\r\n]+: the whitespace run up to and including its last \r or \n.
  bool SpacesThenNewlines(size_t i, size_t* end) const {
    size_t run = RunOf(i, IsWhiteSpace);
    for (size_t j = run; j > i; --j) {
      if (IsNewline(c_[j - 1])) return *end = j, true;
    }
    return false;
  }

  // \s+(?!\S)|\s+: a whitespace run, leaving its last character to the next piece when a
  // non-space follows and the run is longer than one.
  size_t Spaces(size_t i) const {
    size_t run = RunOf(i, IsWhiteSpace);
    if (run == i) return i + 1;  // unreachable: every character matches some alternative
    if (run < n_ && run - i > 1) return run - 1;
    return run;
  }

  SplitPattern p_;
  const std::vector<char32_t>& c_;
  size_t n_;
};

}  // namespace

std::optional<SplitPattern> PatternFromRegex(std::string_view regex) {
  if (regex == kLlama3Regex) return SplitPattern::kLlama3;
  if (regex == kQwen2Regex) return SplitPattern::kQwen2;
  if (regex == kGpt2Regex) return SplitPattern::kGpt2;
  return std::nullopt;
}

Result<std::vector<std::string_view>> SplitWords(SplitPattern pattern, std::string_view text) {
  std::vector<char32_t> cps;
  std::vector<size_t> offsets;
  if (!unicode::DecodeUtf8(text, &cps, &offsets)) return InvalidArgument("text is not valid UTF-8");
  Matcher m(pattern, cps);
  std::vector<std::string_view> out;
  for (size_t i = 0; i < cps.size();) {
    size_t end = m.Match(i);
    out.push_back(text.substr(offsets[i], offsets[end] - offsets[i]));
    i = end;
  }
  return out;
}

}  // namespace tf::engine
