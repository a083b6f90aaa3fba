#include "engine/tokenizers/nfc.h"

#include <algorithm>
#include <unordered_map>
#include <vector>

#include "engine/tokenizers/unicode.h"
#include "engine/tokenizers/unicode_nfc_tables.h"

namespace tf::engine::unicode {
namespace {

// Hangul syllables are composed and decomposed by formula (Unicode chapter 3.12).
constexpr char32_t kSBase = 0xac00, kLBase = 0x1100, kVBase = 0x1161, kTBase = 0x11a7;
constexpr char32_t kLCount = 19, kVCount = 21, kTCount = 28, kNCount = kVCount * kTCount;
constexpr char32_t kSCount = kLCount * kNCount;

// The row of a flat table with `width` columns whose first column is c, or null.
const char32_t* FindRow(const char32_t* table, size_t size, size_t width, char32_t c) {
  size_t lo = 0, hi = size / width;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (table[mid * width] < c) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo < size / width && table[lo * width] == c ? table + lo * width : nullptr;
}

// The row of a flat table of (first, last, ...) ranges that holds c, or null.
const char32_t* FindRange(const char32_t* table, size_t size, size_t width, char32_t c) {
  size_t lo = 0, hi = size / width;
  while (lo < hi) {  // the first range whose last is >= c
    size_t mid = (lo + hi) / 2;
    if (table[mid * width + 1] < c) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo < size / width && table[lo * width] <= c ? table + lo * width : nullptr;
}

int CombiningClass(char32_t c) {
  if (c < 0x300) return 0;
  const char32_t* row = FindRange(kCombiningClasses, kCombiningClassesSize, 3, c);
  return row != nullptr ? static_cast<int>(row[2]) : 0;
}

void Decompose(char32_t c, std::vector<char32_t>* out) {
  if (c >= kSBase && c < kSBase + kSCount) {
    char32_t s = c - kSBase;
    out->push_back(kLBase + s / kNCount);
    out->push_back(kVBase + (s % kNCount) / kTCount);
    if (s % kTCount != 0) out->push_back(kTBase + s % kTCount);
    return;
  }
  const char32_t* row =
      c < 0xc0 ? nullptr : FindRow(kCanonicalDecompositions, kCanonicalDecompositionsSize, 3, c);
  if (row == nullptr) {
    out->push_back(c);
    return;
  }
  Decompose(row[1], out);
  if (row[2] != 0) Decompose(row[2], out);
}

// (first << 21 | second) -> the primary composite of the pair.
const std::unordered_map<uint64_t, char32_t>& Compositions() {
  static const auto* map = [] {
    auto* m = new std::unordered_map<uint64_t, char32_t>();
    for (size_t i = 0; i < kCanonicalDecompositionsSize; i += 3) {
      const char32_t* row = kCanonicalDecompositions + i;
      if (row[2] == 0) continue;
      if (FindRange(kCompositionExclusions, kCompositionExclusionsSize, 2, row[0]) != nullptr) {
        continue;
      }
      m->emplace((uint64_t{row[1]} << 21) | row[2], row[0]);
    }
    return m;
  }();
  return *map;
}

// The composite of a + b, or 0.
char32_t Compose(char32_t a, char32_t b) {
  if (a >= kLBase && a < kLBase + kLCount && b >= kVBase && b < kVBase + kVCount) {
    return kSBase + ((a - kLBase) * kVCount + (b - kVBase)) * kTCount;
  }
  if (a >= kSBase && a < kSBase + kSCount && (a - kSBase) % kTCount == 0 && b > kTBase &&
      b < kTBase + kTCount) {
    return a + (b - kTBase);
  }
  auto it = Compositions().find((uint64_t{a} << 21) | b);
  return it == Compositions().end() ? 0 : it->second;
}

}  // namespace

std::string ToNfc(std::string_view text) {
  if (std::all_of(text.begin(), text.end(), [](char c) { return (c & 0x80) == 0; })) {
    return std::string(text);  // ASCII is always NFC
  }
  std::vector<char32_t> cps;
  std::vector<size_t> offsets;
  if (!DecodeUtf8(text, &cps, &offsets)) return std::string(text);
  std::vector<char32_t> d;
  for (char32_t c : cps) Decompose(c, &d);
  // Canonical order: marks between starters sorted by combining class, stably.
  for (size_t i = 1; i < d.size(); ++i) {
    int cc = CombiningClass(d[i]);
    for (size_t j = i; cc != 0 && j > 0 && CombiningClass(d[j - 1]) > cc; --j) {
      std::swap(d[j - 1], d[j]);
    }
  }
  // Canonical composition: each character joins the last starter unless something between
  // blocks it (a starter, or a mark of the same or a higher class).
  std::vector<char32_t> out;
  size_t starter = SIZE_MAX;
  int last_class = 0;
  for (char32_t c : d) {
    int cc = CombiningClass(c);
    if (starter != SIZE_MAX && (out.size() - 1 == starter || last_class < cc)) {
      if (char32_t composite = Compose(out[starter], c); composite != 0) {
        out[starter] = composite;
        continue;
      }
    }
    if (cc == 0) starter = out.size();
    last_class = cc;
    out.push_back(c);
  }
  std::string result;
  result.reserve(text.size());
  for (char32_t c : out) AppendUtf8(c, &result);
  return result;
}

}  // namespace tf::engine::unicode
