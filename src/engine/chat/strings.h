// Python's str operations on UTF-8 text, as chat templates use them: strip (Python's notion of
// whitespace), split, case mapping, and indexing by code point.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tf::engine::jinja {

// Python's str.isspace for one code point.
bool IsPySpace(char32_t c);

// s.strip(chars) / lstrip / rstrip: without chars, Python whitespace; with chars, any of
// their code points.
std::string PyStrip(std::string_view s, const std::optional<std::string>& chars, bool left,
                    bool right);

// s.split() (runs of whitespace, no empty parts) when sep is unset, else s.split(sep), with at
// most maxsplit splits when maxsplit >= 0. sep must not be empty.
std::vector<std::string> PySplit(std::string_view s, const std::optional<std::string>& sep,
                                 int64_t maxsplit);

// upper()/lower()/title()/capitalize(): ASCII letters, Latin-1, Greek and Cyrillic.
std::string PyUpper(std::string_view s);
std::string PyLower(std::string_view s);
std::string PyTitle(std::string_view s);
std::string PyCapitalize(std::string_view s);

// The code points of s (invalid bytes each taken as one code point of their own value), and
// back.
std::vector<char32_t> CodePoints(std::string_view s);
std::string FromCodePoints(const std::vector<char32_t>& cps, size_t begin, size_t end);

}  // namespace tf::engine::jinja
