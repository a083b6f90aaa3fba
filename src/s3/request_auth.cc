#include "s3/request_auth.h"

#include <algorithm>
#include <cctype>

#include "base/ascii.h"
#include "base/crypto.h"
#include "http/url.h"

namespace tf::s3 {
namespace {

// The signature's parts, from the header or from the query.
struct Claimed {
  Credential credential;
  std::vector<std::string> signed_headers;
  std::string signature;
  std::string amz_date;
  std::string payload_hash;  // as it is signed
  bool presigned = false;
};

const std::string* QueryParam(const http::Request& r, const char* name) {
  auto it = r.query.find(name);
  return it == r.query.end() ? nullptr : &it->second;
}

// Every value of a header, each canonical, joined with ",".
std::string HeaderValues(const http::Headers& headers, std::string_view lower_name,
                         HeaderBlanks blanks) {
  std::string out;
  bool first = true;
  for (const auto& [name, value] : headers) {
    if (AsciiLower(name) != lower_name) continue;
    if (!first) out.push_back(',');
    out += CanonicalHeaderValue(value, blanks);
    first = false;
  }
  return out;
}

Error Malformed(bool presigned, std::string message) {
  return MakeError(presigned ? "AuthorizationQueryParametersError" : "AuthorizationHeaderMalformed",
                   std::move(message));
}

Outcome<Claimed> FromHeader(const http::Request& r, TimeMs now, std::string_view service) {
  const std::string& header = r.Header("Authorization");
  if (header.rfind("AWS ", 0) == 0) {
    return MakeError("InvalidRequest",
                     "The authorization mechanism you have provided is not supported. Please use "
                     "AWS4-HMAC-SHA256.");
  }
  auto parsed = ParseAuthorization(header);
  if (!parsed.ok()) {
    return Malformed(false, "The authorization header is malformed: " + parsed.status().message());
  }
  Claimed c;
  c.credential = std::move(parsed->credential);
  c.signed_headers = std::move(parsed->signed_headers);
  c.signature = std::move(parsed->signature);
  c.amz_date = r.Header("x-amz-date");
  auto date = ParseAmzDate(c.amz_date);
  if (!date.ok()) {
    return MakeError("AccessDenied", "AWS authentication requires a valid x-amz-date header: " +
                                         date.status().message());
  }
  if (*date > now + kMaxSkewMs || *date < now - kMaxSkewMs) {
    return MakeError("RequestTimeTooSkewed",
                     "The difference between the request time and the server's time is too "
                     "large.")
        .With("RequestTime", c.amz_date)
        .With("ServerTime", FormatAmzDate(now))
        .With("MaxAllowedSkewMilliseconds", std::to_string(kMaxSkewMs));
  }
  c.payload_hash = r.Header("x-amz-content-sha256");
  if (c.payload_hash.empty() && service != "s3") {
    // Only S3 sends the body's hash in a header; other services sign it all the same.
    c.payload_hash = Sha256Hex(r.body);
  }
  if (c.payload_hash.empty()) {
    return MakeError("InvalidRequest",
                     "Missing required header for this request: x-amz-content-sha256");
  }
  return c;
}

Outcome<Claimed> FromQuery(const http::Request& r, TimeMs now) {
  const std::string* algorithm = QueryParam(r, "X-Amz-Algorithm");
  const std::string* credential = QueryParam(r, "X-Amz-Credential");
  const std::string* date = QueryParam(r, "X-Amz-Date");
  const std::string* expires = QueryParam(r, "X-Amz-Expires");
  const std::string* headers = QueryParam(r, "X-Amz-SignedHeaders");
  const std::string* signature = QueryParam(r, "X-Amz-Signature");
  if (!algorithm || !credential || !date || !expires || !headers || !signature) {
    return Malformed(true,
                     "Query-string authentication version 4 requires the X-Amz-Algorithm, "
                     "X-Amz-Credential, X-Amz-Signature, X-Amz-Date, X-Amz-SignedHeaders, and "
                     "X-Amz-Expires parameters.");
  }
  if (*algorithm != kAlgorithm) {
    return Malformed(true, "X-Amz-Algorithm only supports \"AWS4-HMAC-SHA256\"");
  }
  Claimed c;
  c.presigned = true;
  auto cred = ParseCredential(*credential);
  if (!cred.ok()) return Malformed(true, "X-Amz-Credential: " + cred.status().message());
  c.credential = std::move(*cred);
  auto names = ParseSignedHeaders(*headers);
  if (!names.ok()) return Malformed(true, "X-Amz-SignedHeaders: " + names.status().message());
  c.signed_headers = std::move(*names);
  bool hex =
      signature->size() == 64 && std::all_of(signature->begin(), signature->end(), [](char ch) {
        return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f');
      });
  if (!hex) return Malformed(true, "X-Amz-Signature must be 64 lower-case hex digits");
  c.signature = *signature;
  c.amz_date = *date;
  auto when = ParseAmzDate(*date);
  if (!when.ok()) return Malformed(true, "X-Amz-Date: " + when.status().message());
  int64_t seconds = -1;
  if (!expires->empty() && expires->size() <= 7 &&
      std::all_of(expires->begin(), expires->end(),
                  [](char ch) { return ch >= '0' && ch <= '9'; })) {
    seconds = std::stoll(*expires);
  }
  if (seconds < 1 || seconds > kMaxPresignedSeconds) {
    return Malformed(true, "X-Amz-Expires must be a number of seconds from 1 to " +
                               std::to_string(kMaxPresignedSeconds) + " (7 days)");
  }
  if (now > *when + seconds * kSecondMs) {
    return MakeError("AccessDenied", "Request has expired")
        .With("X-Amz-Expires", *expires)
        .With("Expires", FormatAmzDate(*when + seconds * kSecondMs))
        .With("ServerTime", FormatAmzDate(now));
  }
  if (*when > now + kMaxSkewMs) {
    return MakeError("AccessDenied", "Request is not valid yet")
        .With("X-Amz-Date", *date)
        .With("ServerTime", FormatAmzDate(now));
  }
  const bool hash_signed = std::find(c.signed_headers.begin(), c.signed_headers.end(),
                                     "x-amz-content-sha256") != c.signed_headers.end();
  c.payload_hash = hash_signed ? r.Header("x-amz-content-sha256") : std::string(kUnsignedPayload);
  return c;
}

// How the body is to be checked, from the signed payload hash.
Outcome<Payload> PayloadOf(const std::string& hash) {
  if (hash == kUnsignedPayload) return Payload::kUnsigned;
  if (hash == kStreamingPayload) return Payload::kStreaming;
  if (hash == kStreamingUnsignedTrailer) return Payload::kStreamingUnsignedTrailer;
  if (hash == kStreamingSignedTrailer) return Payload::kStreamingSignedTrailer;
  bool hex = hash.size() == 64 && std::all_of(hash.begin(), hash.end(), [](char c) {
               return std::isxdigit(static_cast<unsigned char>(c)) != 0;
             });
  if (hex) return Payload::kSha256;
  if (hash.rfind("STREAMING-", 0) == 0) {
    return MakeError("NotImplemented", "x-amz-content-sha256 '" + hash.substr(0, 64) +
                                           "' is not supported here: use a hex SHA-256, "
                                           "UNSIGNED-PAYLOAD, " +
                                           std::string(kStreamingPayload) + ", " +
                                           std::string(kStreamingSignedTrailer) + " or " +
                                           std::string(kStreamingUnsignedTrailer));
  }
  return MakeError("InvalidArgument",
                   "x-amz-content-sha256 must be the hex SHA-256 of the body, UNSIGNED-PAYLOAD "
                   "or " +
                       std::string(kStreamingPayload));
}

}  // namespace

Outcome<SignedRequest> VerifyRequest(const http::Request& r, TimeMs now, const KeyLookup& lookup,
                                     std::string_view service) {
  const bool has_header = !r.Header("Authorization").empty();
  const bool presigned = r.query.count("X-Amz-Algorithm") > 0 ||
                         r.query.count("X-Amz-Signature") > 0 ||
                         r.query.count("X-Amz-Credential") > 0;
  if (has_header && presigned) {
    return MakeError("InvalidArgument",
                     "Only one auth mechanism allowed; only the X-Amz-Algorithm query parameter "
                     "or the Authorization header may be given");
  }
  if (!has_header && !presigned && r.query.count("AWSAccessKeyId") > 0 &&
      r.query.count("Signature") > 0) {  // a presigned URL of Signature Version 2 (s3cmd signurl)
    return MakeError("InvalidRequest",
                     "The authorization mechanism you have provided is not supported. Please use "
                     "AWS4-HMAC-SHA256 (a URL presigned with Signature Version 4, e.g. `aws s3 "
                     "presign`).");
  }
  if (!has_header && !presigned) {
    return MakeError("AccessDenied",
                     "Anonymous access is not allowed: sign requests with AWS Signature Version "
                     "4 and an access key (`tensorfleet s3 key create`)");
  }
  Outcome<Claimed> claimed = presigned ? FromQuery(r, now) : FromHeader(r, now, service);
  if (!claimed.ok()) return claimed.error();
  Claimed& c = *claimed;

  if (c.credential.service != service) {
    return Malformed(c.presigned, "the credential's service must be '" + std::string(service) +
                                      "', not '" + c.credential.service + "'");
  }
  if (c.credential.date != c.amz_date.substr(0, 8)) {
    return Malformed(c.presigned, "the credential's date " + c.credential.date +
                                      " is not the request's date " + c.amz_date.substr(0, 8));
  }
  auto signed_name = [&](std::string_view name) {
    return std::find(c.signed_headers.begin(), c.signed_headers.end(), name) !=
           c.signed_headers.end();
  };
  if (!signed_name("host")) return Malformed(c.presigned, "the signed headers must include host");
  for (const auto& [name, value] : r.headers) {
    std::string lower = AsciiLower(name);
    if (lower.rfind("x-amz-", 0) == 0 && !signed_name(lower)) {
      return MakeError("AccessDenied",
                       "There were headers present in the request which were not signed")
          .With("HeadersNotSigned", lower);
    }
  }
  Outcome<Payload> payload = PayloadOf(c.payload_hash);
  if (!payload.ok()) return payload.error();
  if (*payload != Payload::kUnsigned && *payload != Payload::kSha256 && c.presigned) {
    return MakeError("InvalidRequest", "a presigned URL cannot sign a streamed (aws-chunked) body");
  }

  auto key = lookup(c.credential.access_key_id);
  if (!key.ok()) {
    if (key.status().code() != StatusCode::kNotFound) return FromStatus(key.status());
    return MakeError("InvalidAccessKeyId",
                     "The AWS Access Key Id you provided does not exist in our records.")
        .With("AWSAccessKeyId", c.credential.access_key_id);
  }

  const std::string_view target = r.target;
  const size_t question = target.find('?');
  CanonicalInput in;
  in.method = r.method;
  in.uri = std::string(target.substr(0, question));
  in.query = question == std::string_view::npos
                 ? std::string()
                 : CanonicalQuery(target.substr(question + 1),
                                  c.presigned ? "X-Amz-Signature" : std::string_view());
  for (const auto& name : c.signed_headers) {
    in.headers.emplace_back(name, HeaderValues(r.headers, name, HeaderBlanks::kSpacesAndTabs));
  }
  in.payload_hash = c.payload_hash;

  const std::string signing_key = SigningKey(key->secret, c.credential);
  const std::string scope = c.credential.Scope();
  std::string canonical = CanonicalRequest(in);
  std::string to_sign = StringToSign(c.amz_date, scope, canonical);
  bool match = ConstantTimeEquals(Signature(signing_key, to_sign), c.signature);
  auto matches = [&](const CanonicalInput& other) {
    return ConstantTimeEquals(
        Signature(signing_key, StringToSign(c.amz_date, scope, CanonicalRequest(other))),
        c.signature);
  };
  // Where the first form does not match, the others a client may have signed: the path encoded
  // the standard way rather than as it was sent, and tabs in a signed value kept as they were
  // (tried only where a value has one).
  if (!match) {
    const std::string as_sent = in.uri;
    const std::string encoded =
        http::PercentEncode(http::PercentDecode(in.uri, false), http::Slash::kKeep);
    if (encoded != as_sent) {
      in.uri = encoded;
      match = matches(in);
    }
    std::vector<std::pair<std::string, std::string>> kept;
    bool tabbed = false;
    for (const auto& name : c.signed_headers) {
      kept.emplace_back(name, HeaderValues(r.headers, name, HeaderBlanks::kSpacesOnly));
      tabbed = tabbed || kept.back().second.find('\t') != std::string::npos;
    }
    if (!match && tabbed) {
      in.blanks = HeaderBlanks::kSpacesOnly;
      in.headers = std::move(kept);
      in.uri = as_sent;
      match = matches(in);
      if (!match && encoded != as_sent) {
        in.uri = encoded;
        match = matches(in);
      }
    }
  }
  if (!match) {
    return MakeError("SignatureDoesNotMatch",
                     "The request signature we calculated does not match the signature you "
                     "provided. Check your key and signing method.")
        .With("AWSAccessKeyId", c.credential.access_key_id)
        .With("StringToSign", to_sign)
        .With("SignatureProvided", c.signature)
        .With("CanonicalRequest", canonical);
  }

  SignedRequest out;
  out.key = std::move(*key);
  out.payload = *payload;
  if (out.payload == Payload::kSha256) out.payload_sha256 = AsciiLower(c.payload_hash);
  const bool streamed = out.payload != Payload::kUnsigned && out.payload != Payload::kSha256;
  const bool trailer = out.payload == Payload::kStreamingUnsignedTrailer ||
                       out.payload == Payload::kStreamingSignedTrailer;
  if (streamed) {
    const std::string& length = r.Header("x-amz-decoded-content-length");
    bool digits =
        !length.empty() && length.size() <= 19 &&
        std::all_of(length.begin(), length.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
    if (!digits) {
      return MakeError("MissingContentLength",
                       "x-amz-decoded-content-length is required with " + c.payload_hash);
    }
    out.decoded_length = std::stoull(length);
  }
  if (trailer) {
    out.trailer = AsciiLower(r.Header("x-amz-trailer"));
    if (out.trailer.find(',') != std::string::npos) {
      return MakeError("InvalidRequest", "x-amz-trailer names more than one trailing header");
    }
  }
  if (out.payload == Payload::kStreaming || out.payload == Payload::kStreamingSignedTrailer) {
    out.signing_key = signing_key;
    out.amz_date = c.amz_date;
    out.scope = scope;
    out.seed_signature = c.signature;
  }
  return out;
}

}  // namespace tf::s3
