// AWS Signature Version 4 as S3 uses it, as pure functions over strings: no I/O, no clock.
// request_auth.h applies them to a request; aws_chunked.h to a chunk-signed body.
//
//   canonical request = METHOD \n URI \n QUERY \n HEADERS \n \n SIGNED-HEADERS \n PAYLOAD-HASH
//   string to sign    = AWS4-HMAC-SHA256 \n AMZ-DATE \n SCOPE \n hex(sha256(canonical request))
//   signing key       = HMAC(HMAC(HMAC(HMAC("AWS4" + secret, date), region), service),
//                            "aws4_request")
//   signature         = hex(HMAC(signing key, string to sign))
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "base/status.h"

namespace tf::s3 {

inline constexpr std::string_view kAlgorithm = "AWS4-HMAC-SHA256";
inline constexpr std::string_view kUnsignedPayload = "UNSIGNED-PAYLOAD";
inline constexpr std::string_view kStreamingPayload = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD";
inline constexpr std::string_view kStreamingUnsignedTrailer = "STREAMING-UNSIGNED-PAYLOAD-TRAILER";
inline constexpr std::string_view kStreamingSignedTrailer =
    "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER";
// SHA-256 of no bytes, in hex.
inline constexpr std::string_view kEmptySha256 =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

// "AKIDEXAMPLE/20130524/us-east-1/s3/aws4_request"
struct Credential {
  std::string access_key_id;
  std::string date;  // YYYYMMDD
  std::string region;
  std::string service;  // "s3"
  // "20130524/us-east-1/s3/aws4_request"
  std::string Scope() const;
};

// kInvalidArgument, saying what is wrong, unless `text` has the five parts above with a
// date of eight digits and the terminator "aws4_request".
Result<Credential> ParseCredential(std::string_view text);

// "AWS4-HMAC-SHA256 Credential=..., SignedHeaders=host;x-amz-date, Signature=<hex>"
struct Authorization {
  Credential credential;
  std::vector<std::string> signed_headers;  // lower-case, in the order listed
  std::string signature;                    // 64 lower-case hex digits
};

// kInvalidArgument naming the missing or malformed part.
Result<Authorization> ParseAuthorization(std::string_view header);
// "host;range;x-amz-date" -> {"host", "range", "x-amz-date"}; kInvalidArgument unless the names
// are lower-case, unique and non-empty.
Result<std::vector<std::string>> ParseSignedHeaders(std::string_view list);

// The canonical query string of a raw query ("b=2&a=x%2fy" -> "a=x%2Fy&b=2"): each name and
// value percent-decoded and encoded again (http::PercentEncode, SigV4's URI encoding), sorted by
// name then value; a part named `skip` (the signature of a presigned URL) is left out.
std::string CanonicalQuery(std::string_view raw_query, std::string_view skip = {});

// How the blanks inside a header's value are signed. The SDKs differ: botocore and the Java and
// JavaScript SDKs make each run of spaces and tabs one space, the Go SDKs make only each run of
// spaces one space and keep tabs as they are.
enum class HeaderBlanks { kSpacesAndTabs, kSpacesOnly };

// A header's value as it is signed: outer spaces and tabs trimmed, and each inner run of blanks
// (as `blanks` says) made one space.
std::string CanonicalHeaderValue(std::string_view value,
                                 HeaderBlanks blanks = HeaderBlanks::kSpacesAndTabs);

struct CanonicalInput {
  std::string method;  // "GET"
  std::string uri;     // the encoded path, as S3 signs it (not normalised)
  std::string query;   // from CanonicalQuery
  // The signed headers in signing order: lower-case name, value (several values of one name
  // already joined with ",").
  std::vector<std::pair<std::string, std::string>> headers;
  std::string payload_hash;  // hex SHA-256, kUnsignedPayload or kStreamingPayload
  HeaderBlanks blanks = HeaderBlanks::kSpacesAndTabs;  // how the header values are canonical
};
std::string CanonicalRequest(const CanonicalInput& in);

std::string StringToSign(std::string_view amz_date, std::string_view scope,
                         std::string_view canonical_request);

// The per-day key derived from the secret (raw bytes).
std::string SigningKey(std::string_view secret, const Credential& credential);

// hex(HMAC-SHA256(signing_key, string_to_sign))
std::string Signature(std::string_view signing_key, std::string_view string_to_sign);

// What one chunk of an aws-chunked body signs (STREAMING-AWS4-HMAC-SHA256-PAYLOAD): the previous
// chunk's signature (the request's for the first chunk) chains every chunk to the one before.
std::string ChunkStringToSign(std::string_view amz_date, std::string_view scope,
                              std::string_view previous_signature, std::string_view chunk_sha256);

// What the trailing headers of such a body sign (STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER),
// chained to the final chunk's signature: `trailers_sha256` is the hex SHA-256 of the headers
// as canonical headers are written, "name:value\n" for each, by name.
std::string TrailerStringToSign(std::string_view amz_date, std::string_view scope,
                                std::string_view previous_signature,
                                std::string_view trailers_sha256);

// Raw HMAC-SHA256 of `data` under `key`.
std::string HmacSha256(std::string_view key, std::string_view data);

// Compares in time that depends only on the lengths, so that a signature cannot be guessed
// byte by byte.
bool ConstantTimeEquals(std::string_view a, std::string_view b);

// "20130524T000000Z" <-> milliseconds since the epoch. kInvalidArgument for another shape or an
// impossible date.
Result<TimeMs> ParseAmzDate(std::string_view text);
std::string FormatAmzDate(TimeMs t);

}  // namespace tf::s3
