// Percent-encoding and query strings (RFC 3986), apart from the rest of the HTTP layer so that
// code without Asio (the fuzzers) can use them.
#pragma once

#include <map>
#include <string>
#include <string_view>

namespace tf::http {

// Percent-decoding for paths and query strings ("+" is a space only in queries). A "%" not
// followed by two hex digits is kept as it is.
std::string PercentDecode(std::string_view s, bool plus_is_space);
// Encodes every byte outside RFC 3986's unreserved set (A-Z a-z 0-9 - . _ ~) as %XY, in upper-case
// hex; '/' too unless Slash::kKeep (a path kept as a path). This is also SigV4's URI encoding.
enum class Slash { kEncode, kKeep };
std::string PercentEncode(std::string_view s, Slash slash = Slash::kEncode);
// Splits "a=1&b=two" into a map, decoding each part.
std::map<std::string, std::string> ParseQuery(std::string_view query);

}  // namespace tf::http
