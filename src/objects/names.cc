#include "objects/names.h"

#include <algorithm>
#include <cctype>
#include <cstdint>

#include "base/utf8.h"

namespace tf::objects {
namespace {

bool IsLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

// A key or value for an error message: quoted, cut at 64 bytes (on a character boundary),
// control bytes escaped, and every byte past 0x7f too unless `s` is valid UTF-8, so that the
// message itself always is.
std::string Show(std::string_view s) {
  const bool utf8 = IsValidUtf8(s);
  size_t cut = std::min<size_t>(s.size(), 64);
  while (utf8 && cut < s.size() && (static_cast<unsigned char>(s[cut]) & 0xc0) == 0x80) --cut;
  std::string out = "'";
  for (size_t i = 0; i < cut; ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7f || (c >= 0x80 && !utf8)) {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + (cut < s.size() ? "...'" : "'");
}

}  // namespace

Status ValidateBucketName(std::string_view name) {
  auto bad = [&](const char* why) {
    return InvalidArgument("bad bucket name " + Show(name) + ": " + why);
  };
  if (name.size() < 3 || name.size() > 63) return bad("it must be 3-63 characters long");
  for (char c : name) {
    if (!IsLowerAlnum(c) && c != '-' && c != '.') {
      return bad("only lowercase letters, digits, '-' and '.' are allowed");
    }
  }
  if (!IsLowerAlnum(name.front()) || !IsLowerAlnum(name.back())) {
    return bad("it must start and end with a letter or digit");
  }
  if (name.find("..") != std::string_view::npos) return bad("it must not contain '..'");
  return OkStatus();
}

Status ValidateKey(std::string_view key) {
  if (key.empty()) return InvalidArgument("an object key must not be empty");
  if (key.size() > kMaxKeyBytes) {
    return InvalidArgument("object key of " + std::to_string(key.size()) +
                           " bytes is longer than " + std::to_string(kMaxKeyBytes));
  }
  if (key.find('\0') != std::string_view::npos) {
    return InvalidArgument("object key " + Show(key) + " contains a NUL byte");
  }
  if (!IsValidUtf8(key)) return InvalidArgument("object key " + Show(key) + " is not valid UTF-8");
  return OkStatus();
}

Status ValidateMetadata(const std::map<std::string, std::string>& metadata) {
  size_t total = 0;
  for (const auto& [name, value] : metadata) {
    if (name.empty() || name.size() > 128) {
      return InvalidArgument("metadata name " + Show(name) + " must be 1-128 characters");
    }
    for (char c : name) {
      // An HTTP header name's characters (RFC 9110's tchar), lower-case as S3 keeps them.
      if (!IsLowerAlnum(c) &&
          std::string_view("!#$%&'*+-.^_`|~").find(c) == std::string_view::npos) {
        return InvalidArgument("metadata name " + Show(name) +
                               " may hold only lowercase letters, digits and !#$%&'*+-.^_`|~");
      }
    }
    for (unsigned char c : value) {
      if (c < 0x20 || c == 0x7f) {
        return InvalidArgument("metadata '" + name + "' holds a control character");
      }
    }
    if (!IsValidUtf8(value)) return InvalidArgument("metadata '" + name + "' is not valid UTF-8");
    total += name.size() + value.size();
  }
  if (total > kMaxMetadataBytes) {
    return InvalidArgument("user metadata of " + std::to_string(total) + " bytes exceeds " +
                           std::to_string(kMaxMetadataBytes));
  }
  return OkStatus();
}

Status ValidateContentType(std::string_view content_type) {
  if (content_type.size() > kMaxContentTypeBytes) {
    return InvalidArgument("content type longer than " + std::to_string(kMaxContentTypeBytes));
  }
  for (unsigned char c : content_type) {
    if (c < 0x20 || c >= 0x7f)
      return InvalidArgument("content type " + Show(content_type) + " must be printable ASCII");
  }
  return OkStatus();
}

std::string_view StoredHeaderNamed(std::string_view name) {
  for (std::string_view known : kStoredHeaders) {
    if (known.size() != name.size()) continue;
    bool same = true;
    for (size_t i = 0; i < name.size() && same; ++i) {
      same = std::tolower(static_cast<unsigned char>(name[i])) ==
             std::tolower(static_cast<unsigned char>(known[i]));
    }
    if (same) return known;
  }
  return {};
}

Status ValidateStoredHeaders(const std::map<std::string, std::string>& headers) {
  for (const auto& [name, value] : headers) {
    if (StoredHeaderNamed(name) != name) {
      return InvalidArgument("header " + Show(name) + " is not one an object keeps");
    }
    if (value.size() > kMaxStoredHeaderBytes) {
      return InvalidArgument(name + " of " + std::to_string(value.size()) +
                             " bytes is longer than " + std::to_string(kMaxStoredHeaderBytes));
    }
    for (unsigned char c : value) {
      if ((c < 0x20 && c != '\t') || c == 0x7f) {
        return InvalidArgument(name + " holds a control character");
      }
    }
    // Kept as JSON text, which is UTF-8: a Latin-1 "é" (one byte, 0xe9) is not taken.
    if (!IsValidUtf8(value)) return InvalidArgument(name + " is not valid UTF-8");
  }
  return OkStatus();
}

}  // namespace tf::objects
