// What bucket names, object keys and user metadata may be. Keys are only ever stored and
// compared, never used as file names (content lives under random blob ids), so "..", "/" at
// the start or any other path-like key is just a key.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "base/status.h"

namespace tf::objects {

inline constexpr size_t kMaxKeyBytes = 1024;
inline constexpr size_t kMaxMetadataBytes = 2048;  // names and values together
inline constexpr size_t kMaxContentTypeBytes = 256;
inline constexpr size_t kMaxStoredHeaderBytes = 2048;  // one stored header's value

// The representation headers an object keeps beside its content type, sent back as they were
// given on every GET and HEAD of it.
inline constexpr std::string_view kStoredHeaders[] = {
    "Cache-Control", "Content-Disposition", "Content-Encoding", "Content-Language", "Expires"};

// 3-63 characters of [a-z0-9.-], starting and ending with a letter or digit, no "..".
// kInvalidArgument naming the rule otherwise.
Status ValidateBucketName(std::string_view name);

// 1-1024 bytes of valid UTF-8 (no overlong forms, no surrogates), without NUL.
Status ValidateKey(std::string_view key);

// Names of [a-z0-9_-] (1-128 characters); values of printable UTF-8 without control
// characters; at most kMaxMetadataBytes in all.
Status ValidateMetadata(const std::map<std::string, std::string>& metadata);

// Printable ASCII, at most kMaxContentTypeBytes; "" is allowed (the default applies).
Status ValidateContentType(std::string_view content_type);

// The name in kStoredHeaders that `name` is in any case; "" if none.
std::string_view StoredHeaderNamed(std::string_view name);

// Names from kStoredHeaders; values of at most kMaxStoredHeaderBytes of valid UTF-8 without
// control characters other than tab ("" is allowed: the header is sent empty).
Status ValidateStoredHeaders(const std::map<std::string, std::string>& headers);

}  // namespace tf::objects
