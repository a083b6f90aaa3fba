#include "engine/chat/strings.h"

#include <algorithm>

#include "engine/tokenizers/unicode.h"

namespace tf::engine::jinja {

bool IsPySpace(char32_t c) {
  return (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x20) || c == 0x85 || c == 0xa0 ||
         c == 0x1680 || (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 || c == 0x202f ||
         c == 0x205f || c == 0x3000;
}

std::vector<char32_t> CodePoints(std::string_view s) {
  std::vector<char32_t> out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    size_t n = Utf8SequenceLength(s.substr(i));
    if (n == 0) {
      out.push_back(static_cast<unsigned char>(s[i]) | 0xdc00u);  // as Python's surrogateescape
      ++i;
      continue;
    }
    auto b = [&](size_t k) { return static_cast<char32_t>(static_cast<unsigned char>(s[i + k])); };
    char32_t c = n == 1   ? b(0)
                 : n == 2 ? ((b(0) & 0x1f) << 6) | (b(1) & 0x3f)
                 : n == 3 ? ((b(0) & 0x0f) << 12) | ((b(1) & 0x3f) << 6) | (b(2) & 0x3f)
                          : ((b(0) & 0x07) << 18) | ((b(1) & 0x3f) << 12) | ((b(2) & 0x3f) << 6) |
                                (b(3) & 0x3f);
    out.push_back(c);
    i += n;
  }
  return out;
}

std::string FromCodePoints(const std::vector<char32_t>& cps, size_t begin, size_t end) {
  std::string out;
  for (size_t i = begin; i < end && i < cps.size(); ++i) {
    char32_t c = cps[i];
    if (c >= 0xdc80 && c <= 0xdcff) {
      out += static_cast<char>(c & 0xff);  // a byte that was not valid UTF-8, given back
    } else {
      AppendUtf8(c, &out);
    }
  }
  return out;
}

std::string PyStrip(std::string_view s, const std::optional<std::string>& chars, bool left,
                    bool right) {
  std::vector<char32_t> cps = CodePoints(s);
  std::vector<char32_t> set;
  if (chars) set = CodePoints(*chars);
  auto strip = [&](char32_t c) {
    return chars ? std::find(set.begin(), set.end(), c) != set.end() : IsPySpace(c);
  };
  size_t begin = 0;
  size_t end = cps.size();
  if (left) {
    while (begin < end && strip(cps[begin])) ++begin;
  }
  if (right) {
    while (end > begin && strip(cps[end - 1])) --end;
  }
  return FromCodePoints(cps, begin, end);
}

std::vector<std::string> PySplit(std::string_view s, const std::optional<std::string>& sep,
                                 int64_t maxsplit) {
  std::vector<std::string> parts;
  if (sep) {
    size_t pos = 0;
    while (maxsplit < 0 || static_cast<int64_t>(parts.size()) < maxsplit) {
      size_t hit = s.find(*sep, pos);
      if (hit == std::string_view::npos) break;
      parts.emplace_back(s.substr(pos, hit - pos));
      pos = hit + sep->size();
    }
    parts.emplace_back(s.substr(pos));
    return parts;
  }
  std::vector<char32_t> cps = CodePoints(s);
  size_t i = 0;
  while (i < cps.size()) {
    while (i < cps.size() && IsPySpace(cps[i])) ++i;
    if (i == cps.size()) break;
    if (maxsplit >= 0 && static_cast<int64_t>(parts.size()) == maxsplit) {
      size_t end = cps.size();
      while (end > i && IsPySpace(cps[end - 1])) --end;
      parts.push_back(FromCodePoints(cps, i, end));
      break;
    }
    size_t start = i;
    while (i < cps.size() && !IsPySpace(cps[i])) ++i;
    parts.push_back(FromCodePoints(cps, start, i));
  }
  return parts;
}

namespace {

char32_t UpperOf(char32_t c) {
  if (c >= 'a' && c <= 'z') return c - 32;
  if ((c >= 0xe0 && c <= 0xfe && c != 0xf7)) return c - 32;
  if (c >= 0x3b1 && c <= 0x3c9 && c != 0x3c2) return c - 32;
  if (c >= 0x430 && c <= 0x44f) return c - 32;
  if (c >= 0x450 && c <= 0x45f) return c - 80;
  return c;
}

char32_t LowerOf(char32_t c) {
  if (c >= 'A' && c <= 'Z') return c + 32;
  if ((c >= 0xc0 && c <= 0xde && c != 0xd7)) return c + 32;
  if (c >= 0x391 && c <= 0x3a9 && c != 0x3a2) return c + 32;
  if (c >= 0x410 && c <= 0x42f) return c + 32;
  if (c >= 0x400 && c <= 0x40f) return c + 80;
  return c;
}

bool IsCased(char32_t c) { return UpperOf(c) != c || LowerOf(c) != c; }

std::string Map(std::string_view s, char32_t (*f)(char32_t)) {
  std::vector<char32_t> cps = CodePoints(s);
  for (char32_t& c : cps) c = f(c);
  return FromCodePoints(cps, 0, cps.size());
}

}  // namespace

std::string PyUpper(std::string_view s) {
  std::vector<char32_t> cps = CodePoints(s);
  std::vector<char32_t> out;
  for (char32_t c : cps) {
    if (c == 0xdf) {  // ß has no capital of one character: Python gives "SS"
      out.push_back('S');
      out.push_back('S');
    } else {
      out.push_back(UpperOf(c));
    }
  }
  return FromCodePoints(out, 0, out.size());
}
std::string PyLower(std::string_view s) { return Map(s, LowerOf); }

std::string PyTitle(std::string_view s) {
  std::vector<char32_t> cps = CodePoints(s);
  bool previous_cased = false;
  for (char32_t& c : cps) {
    bool cased = IsCased(c);
    c = previous_cased ? LowerOf(c) : UpperOf(c);
    previous_cased = cased;
  }
  return FromCodePoints(cps, 0, cps.size());
}

std::string PyCapitalize(std::string_view s) {
  std::vector<char32_t> cps = CodePoints(s);
  for (size_t i = 0; i < cps.size(); ++i) cps[i] = i == 0 ? UpperOf(cps[i]) : LowerOf(cps[i]);
  return FromCodePoints(cps, 0, cps.size());
}

}  // namespace tf::engine::jinja
