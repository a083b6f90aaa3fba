#include "s3/request_signer.h"

#include <algorithm>
#include <cstdlib>

#include "base/ascii.h"
#include "http/url.h"
#include "s3/sigv4.h"

namespace tf::s3 {
namespace {

bool ShouldSign(const std::string& lower_name) {
  return lower_name == "host" || lower_name == "range" || lower_name.rfind("x-amz-", 0) == 0;
}

// S3's bucket naming rules, reduced to what matters for a path: 3-63 characters of lower-case
// letters, digits, '.' and '-'.
bool IsBucketName(std::string_view name) {
  if (name.size() < 3 || name.size() > 63) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-';
  });
}

}  // namespace

std::string BucketLocation::PathOf(std::string_view key) const {
  return "/" + bucket + "/" + http::PercentEncode(prefix + std::string(key), http::Slash::kKeep);
}

std::string BucketLocation::Describe() const { return "s3://" + bucket + "/" + prefix; }

EnvLookup ProcessEnv() {
  return [](const char* name) -> std::optional<std::string> {
    const char* v = std::getenv(name);
    if (v == nullptr) return std::nullopt;
    return std::string(v);
  };
}

Result<BucketLocation> ParseBucketLocation(std::string_view url, const EnvLookup& env) {
  const std::string where = "object store URL '" + std::string(url) + "'";
  constexpr std::string_view kScheme = "s3://";
  if (url.substr(0, kScheme.size()) != kScheme) {
    return InvalidArgument(where + " must start with s3://");
  }
  std::string_view rest = url.substr(kScheme.size());
  std::string_view query;
  if (size_t q = rest.find('?'); q != std::string_view::npos) {
    query = rest.substr(q + 1);
    rest = rest.substr(0, q);
  }
  BucketLocation loc;
  size_t slash = rest.find('/');
  loc.bucket = std::string(rest.substr(0, slash));
  if (!IsBucketName(loc.bucket)) {
    return InvalidArgument(where + ": '" + loc.bucket +
                           "' is not a bucket name (3-63 of a-z, 0-9, '.', '-')");
  }
  if (slash != std::string_view::npos) {
    loc.prefix = std::string(rest.substr(slash + 1));
    if (!loc.prefix.empty() && loc.prefix.back() != '/') loc.prefix += '/';
  }
  for (const auto& [name, value] : http::ParseQuery(query)) {
    if (name == "endpoint") {
      loc.endpoint = value;
    } else if (name == "region") {
      loc.region = value;
    } else {
      return InvalidArgument(where + ": unknown parameter '" + name +
                             "' (expected endpoint and region)");
    }
  }
  if (loc.endpoint.empty()) {
    return InvalidArgument(where + " needs ?endpoint=http://HOST:PORT");
  }
  while (!loc.endpoint.empty() && loc.endpoint.back() == '/') loc.endpoint.pop_back();
  if (loc.endpoint.rfind("https://", 0) == 0) {
    return InvalidArgument(where +
                           ": https endpoints are not supported yet (the server's HTTP "
                           "client has no TLS); use an http:// endpoint, e.g. a local "
                           "gateway");
  }
  if (loc.endpoint.rfind("http://", 0) != 0 || loc.endpoint.size() == 7 ||
      loc.endpoint.find('/', 7) != std::string::npos) {
    return InvalidArgument(where + ": endpoint '" + loc.endpoint +
                           "' must be http://HOST[:PORT] with no path");
  }
  loc.host = loc.endpoint.substr(7);
  if (loc.region.empty()) return InvalidArgument(where + ": region is empty");
  auto id = env("AWS_ACCESS_KEY_ID");
  auto secret = env("AWS_SECRET_ACCESS_KEY");
  if (!id || id->empty() || !secret || secret->empty()) {
    return InvalidArgument(where +
                           ": set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY to the "
                           "bucket's credentials");
  }
  loc.access_key_id = *id;
  loc.secret_access_key = *secret;
  return loc;
}

void SignRequest(const BucketLocation& location, std::string_view method, std::string_view path,
                 std::string_view raw_query, std::string_view payload_sha256, TimeMs now,
                 http::Headers* headers, std::string_view service) {
  const std::string amz_date = FormatAmzDate(now);
  headers->emplace_back("Host", location.host);
  headers->emplace_back("x-amz-date", amz_date);
  headers->emplace_back("x-amz-content-sha256", std::string(payload_sha256));

  CanonicalInput in;
  in.method = std::string(method);
  in.uri = std::string(path);
  in.query = CanonicalQuery(raw_query);
  in.payload_hash = std::string(payload_sha256);
  for (const auto& [name, value] : *headers) {
    std::string lower = AsciiLower(name);
    if (ShouldSign(lower)) in.headers.emplace_back(lower, CanonicalHeaderValue(value));
  }
  std::sort(in.headers.begin(), in.headers.end());
  std::string signed_names;
  for (const auto& [name, value] : in.headers) {
    if (!signed_names.empty()) signed_names += ';';
    signed_names += name;
  }
  Credential credential{location.access_key_id, amz_date.substr(0, 8), location.region,
                        std::string(service)};
  const std::string scope = credential.Scope();
  const std::string signature = Signature(SigningKey(location.secret_access_key, credential),
                                          StringToSign(amz_date, scope, CanonicalRequest(in)));
  headers->emplace_back("Authorization",
                        std::string(kAlgorithm) + " Credential=" + location.access_key_id + "/" +
                            scope + ", SignedHeaders=" + signed_names + ", Signature=" + signature);
}

}  // namespace tf::s3
