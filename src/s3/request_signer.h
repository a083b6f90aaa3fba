// Signs requests that tensorfleet sends to an external S3-compatible service (SigV4, header
// form), and parses where that service and bucket are. The counterpart of request_auth.h, which
// checks requests that clients send to us; both build on sigv4.h.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "base/clock.h"
#include "base/status.h"
#include "http/http.h"

namespace tf::s3 {

// A bucket of an external S3-compatible service, addressed path-style
// (ENDPOINT/BUCKET/KEY).
struct BucketLocation {
  std::string bucket;
  std::string prefix;    // "" or "dir/..../": every key the server writes starts with it
  std::string endpoint;  // "http://host:port"
  std::string host;      // "host:port": the Host header, as sent and signed
  std::string region = "us-east-1";
  std::string access_key_id;
  std::string secret_access_key;

  // "/BUCKET/PREFIXkey", URI-encoded as SigV4 signs it.
  std::string PathOf(std::string_view key) const;
  // "s3://BUCKET/PREFIX" for messages (no credentials).
  std::string Describe() const;
};

// Reads the environment (a seam for tests); nullopt when the variable is unset.
using EnvLookup = std::function<std::optional<std::string>(const char* name)>;
EnvLookup ProcessEnv();

// Parses "s3://BUCKET[/PREFIX]?endpoint=http://HOST[:PORT][&region=REGION]". The credentials
// come from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, never from the URL, so that they do
// not show up in process listings. kInvalidArgument says which part is wrong or missing; an
// https:// endpoint is refused (the HTTP client has no TLS yet).
Result<BucketLocation> ParseBucketLocation(std::string_view url, const EnvLookup& env);

// Adds Host, x-amz-date, x-amz-content-sha256 and Authorization to `headers` for a request of
// `method` to `path` (already encoded, from PathOf) with `raw_query` ("" or "a=1&b=2"), at time
// `now`. Signed: host, range and every x-amz-* header. `payload_sha256` is the body's hex
// SHA-256 (kEmptySha256 for none) or UNSIGNED-PAYLOAD. `service`: the credential scope's ("sqs"
// signs a request to an SQS API the same way).
void SignRequest(const BucketLocation& location, std::string_view method, std::string_view path,
                 std::string_view raw_query, std::string_view payload_sha256, TimeMs now,
                 http::Headers* headers, std::string_view service = "s3");

}  // namespace tf::s3
