// Checks who signed an S3 request, by SigV4 in the Authorization header or in a presigned URL's
// query, and says how its body must be checked. The secret is found through a lookup (the
// store), so that this file holds the rules and nothing else.
//
// Rules (S3's):
//  - header form: x-amz-date within kMaxSkewMs of the server's clock (RequestTimeTooSkewed), and
//    x-amz-content-sha256 present: a hex SHA-256 of the body, UNSIGNED-PAYLOAD, or
//    STREAMING-AWS4-HMAC-SHA256-PAYLOAD for an aws-chunked body whose chunks are signed too;
//  - presigned form: X-Amz-Expires of 1 s to 7 days, after which the URL is refused
//    (AccessDenied, "Request has expired"); the payload is UNSIGNED-PAYLOAD;
//  - "host" and every x-amz-* header sent must be signed; the scope's date must be the request's
//    and its service the one asked for ("s3"); any region is accepted (one server is one region).
// The other services on this port (SQS) sign the same way but send no x-amz-content-sha256: the
// body they sign is the buffered one, hashed here.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "base/clock.h"
#include "base/status.h"
#include "http/http.h"
#include "s3/errors.h"
#include "s3/sigv4.h"
#include "store/records.h"

namespace tf::s3 {

inline constexpr TimeMs kMaxSkewMs = 15 * kMinuteMs;
inline constexpr int64_t kMaxPresignedSeconds = 7 * 24 * 3600;

// What a verified request's body must be checked against.
enum class Payload {
  kUnsigned,                  // nothing to check
  kSha256,                    // the whole body must hash to SignedRequest::payload_sha256
  kStreaming,                 // aws-chunked, each chunk signed (aws_chunked.h)
  kStreamingUnsignedTrailer,  // aws-chunked, unsigned, with trailing headers (a checksum)
  kStreamingSignedTrailer,    // aws-chunked, each chunk signed, then signed trailing headers
};

struct SignedRequest {
  store::AccessKey key;
  Payload payload = Payload::kUnsigned;
  std::string payload_sha256;  // kSha256: lower-case hex
  // kStreaming and kStreamingSignedTrailer: what the chunk signatures chain from, and the
  // decoded length announced in x-amz-decoded-content-length.
  std::string signing_key;
  std::string amz_date;
  std::string scope;
  std::string seed_signature;
  uint64_t decoded_length = 0;  // every streamed form
  // The trailer forms: the trailing header x-amz-trailer announced ("" if none), lower-case:
  // "x-amz-checksum-crc32".
  std::string trailer;
};

// Returns an active key by id: kNotFound if unknown or revoked, another code if the store
// failed.
using KeyLookup = std::function<Result<store::AccessKey>(const std::string& access_key_id)>;

// Verifies `request` (its method, target, headers and query) at server time `now`. Blocking as
// `lookup` is. Errors as S3 gives them: AccessDenied (unsigned, expired, x-amz-* headers left
// unsigned), InvalidAccessKeyId, SignatureDoesNotMatch (with the StringToSign and
// CanonicalRequest the server expected), RequestTimeTooSkewed, AuthorizationHeaderMalformed,
// AuthorizationQueryParametersError, InvalidRequest, NotImplemented for payload forms this
// server does not take.
Outcome<SignedRequest> VerifyRequest(const http::Request& request, TimeMs now,
                                     const KeyLookup& lookup, std::string_view service = "s3");

}  // namespace tf::s3
