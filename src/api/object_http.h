// How objects look over HTTP in the native API: headers in (content type, user metadata, an
// expected checksum), headers and JSON out, and Range requests.
//
//   x-tf-meta-<name>: <value>     user metadata, on PUT and on answers
//   x-tf-checksum-sha256: <hex>   on PUT: refuse the upload unless the content matches; on
//                                 answers: the stored SHA-256
//   ETag: "<md5 hex>"             Last-Modified: <HTTP date>     Accept-Ranges: bytes
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>

#include "base/status.h"
#include "http/http.h"
#include "objects/object_service.h"

namespace tf::api {

inline constexpr std::string_view kMetaPrefix = "x-tf-meta-";
inline constexpr std::string_view kChecksumHeader = "x-tf-checksum-sha256";
// On a PUT without a body: BUCKET/KEY (the key percent-encoded) of an object to copy.
inline constexpr std::string_view kCopySourceHeader = "x-tf-copy-source";

// Content type, metadata, stored headers (objects/names.h, kStoredHeaders) and expected checksum
// from a PUT's headers. kInvalidArgument for a malformed checksum.
Result<objects::PutOptions> PutOptionsFromHeaders(const http::Headers& headers);

// ETag, Last-Modified, checksum, stored headers, metadata and Accept-Ranges headers, and the
// content type.
void SetObjectHeaders(const objects::ObjectInfo& info, http::Response& response);

nlohmann::json ObjectToJson(const objects::ObjectInfo& info);

// "Sun, 06 Nov 1994 08:49:37 GMT"
std::string HttpDate(TimeMs t);
// The time an HTTP date names (the form above; also RFC 850's "Sunday, 06-Nov-94 08:49:37 GMT"
// and asctime's "Sun Nov  6 08:49:37 1994", which RFC 9110 asks servers to accept); nullopt if
// it is none of them.
std::optional<TimeMs> ParseHttpDate(std::string_view text);

// A Range header against an object of `size` bytes (RFC 9110, one range only).
struct ByteRange {
  enum Kind {
    kWhole,          // no Range header, or one to ignore (malformed, several ranges)
    kPart,           // bytes [first, last]
    kUnsatisfiable,  // answer 416
  };
  Kind kind = kWhole;
  uint64_t first = 0;
  uint64_t last = 0;
};
ByteRange ParseRange(std::string_view header, uint64_t size);

}  // namespace tf::api
