// How the S3 handlers read requests and answer: errors in S3's XML, the names S3 refuses with
// codes of its own, PUT headers, and request bodies (plain or aws-chunked).
#include <algorithm>
#include <span>

#include "api/body_pump.h"
#include "api/object_http.h"
#include "api/s3/s3_api.h"
#include "base/ascii.h"
#include "base/crypto.h"
#include "objects/blob_format.h"
#include "objects/names.h"
#include "s3/aws_chunked.h"
#include "s3/xml.h"

namespace tf::api {
namespace {

constexpr std::string_view kAmzMetaPrefix = "x-amz-meta-";
constexpr std::string_view kAmzChecksumPrefix = "x-amz-checksum-";

// The MD5 a Content-MD5 header names, in hex; "" when there is none. InvalidDigest if it is not
// the base64 of 16 bytes, an empty header included (as S3 answers it).
s3::Outcome<std::string> ContentMd5(const http::Request& request) {
  const bool present =
      std::any_of(request.headers.begin(), request.headers.end(),
                  [](const auto& h) { return AsciiLower(h.first) == "content-md5"; });
  if (!present) return std::string();
  const std::string& header = request.Header("Content-MD5");
  auto raw = Base64Decode(header);
  if (!raw || raw->size() != 16) {
    return s3::MakeError("InvalidDigest", "The Content-MD5 you specified was invalid.");
  }
  return HexEncode(*raw);
}

// An error from reading the request body, as S3 names it.
s3::Error BodyError(const Status& s) {
  switch (s.code()) {
    case StatusCode::kUnauthenticated: {
      s3::Error e = s3::MakeError(
          "SignatureDoesNotMatch",
          "The request signature we calculated does not match the signature you provided: " +
              s.message());
      return e;
    }
    case StatusCode::kResourceExhausted:
      return s3::MakeError("EntityTooLarge", s.message());
    case StatusCode::kInvalidArgument:
      return s3::MakeError("IncompleteBody", s.message());
    case StatusCode::kUnavailable:
    case StatusCode::kDeadlineExceeded:
      return s3::MakeError("RequestTimeout",
                           "Your socket connection to the server was not read from or written to "
                           "within the timeout period: " +
                               s.message());
    default:
      return s3::FromStatus(s);
  }
}

// A Content-Encoding without its "aws-chunked" codings: "aws-chunked,gzip" is "gzip".
std::string WithoutAwsChunked(std::string_view encoding) {
  std::string out;
  while (!encoding.empty()) {
    const size_t comma = encoding.find(',');
    std::string_view coding = encoding.substr(0, comma);
    encoding = comma == std::string_view::npos ? std::string_view() : encoding.substr(comma + 1);
    while (!coding.empty() && coding.front() == ' ') coding.remove_prefix(1);
    while (!coding.empty() && coding.back() == ' ') coding.remove_suffix(1);
    if (coding.empty() || AsciiLower(coding) == "aws-chunked") continue;
    if (!out.empty()) out += ",";
    out += coding;
  }
  return out;
}

}  // namespace

const std::string& S3Call::Query(const char* param) const {
  static const std::string kEmpty;
  auto it = request.query.find(param);
  return it == request.query.end() ? kEmpty : it->second;
}

std::string S3Resource(const std::string& bucket, const std::string& key) {
  if (bucket.empty()) return "/";
  return key.empty() ? "/" + bucket : "/" + bucket + "/" + key;
}

std::string S3Call::resource() const { return S3Resource(bucket, key); }

s3::Error NoSuchVersion(const std::string& key, const std::string& version_id) {
  return s3::MakeError("NoSuchVersion",
                       "The specified version does not exist: this server keeps one version of "
                       "each object, null")
      .With("Key", key)
      .With("VersionId", version_id.substr(0, 1024));
}

std::optional<s3::Error> CheckVersionId(const S3Call& call) {
  if (!call.Has("versionId") || call.Query("versionId") == kNullVersion) return std::nullopt;
  return NoSuchVersion(call.key, call.Query("versionId"));
}

std::string S3Call::location() const { return virtual_hosted ? "/" + key : resource(); }

http::Response XmlResponse(std::string document, int status) {
  http::Response r;
  r.status = status;
  r.content_type = "application/xml";
  r.body = std::move(document);
  return r;
}

http::Response S3ErrorResponse(const S3Call& call, const s3::Error& error) {
  http::Response r =
      XmlResponse(s3::ErrorBody(error, call.resource(), call.request_id), error.status);
  if (call.request.method == "HEAD") r.content_length = 0;
  return r;
}

s3::Error BucketError(const std::string& bucket, const Status& status) {
  if (status.code() == StatusCode::kNotFound) {
    return s3::MakeError("NoSuchBucket", "The specified bucket does not exist")
        .With("BucketName", bucket);
  }
  return s3::FromStatus(status);
}

s3::Error ObjectError(Services& services, const std::string& project_id, const std::string& bucket,
                      const std::string& key, const Status& status) {
  if (status.code() != StatusCode::kNotFound) return s3::FromStatus(status);
  auto found = services.objects.GetBucket(project_id, bucket);
  if (!found.ok()) return BucketError(bucket, found.status());
  return s3::MakeError("NoSuchKey", "The specified key does not exist.").With("Key", key);
}

s3::Error ObjectError(S3Call& call, const Status& status) {
  return ObjectError(call.services(), call.project(), call.bucket, call.key, status);
}

std::optional<s3::Error> CheckNames(const std::string& bucket, const std::string& key) {
  if (Status s = objects::ValidateBucketName(bucket); !s.ok()) {
    return s3::MakeError("InvalidBucketName", s.message()).With("BucketName", bucket);
  }
  if (key.empty()) return std::nullopt;
  if (key.size() > objects::kMaxKeyBytes) {
    return s3::MakeError("KeyTooLongError", "Your key is too long: " + std::to_string(key.size()) +
                                                " bytes, at most " +
                                                std::to_string(objects::kMaxKeyBytes) + " allowed")
        .With("Size", std::to_string(key.size()))
        .With("MaxSizeAllowed", std::to_string(objects::kMaxKeyBytes));
  }
  if (Status s = objects::ValidateKey(key); !s.ok()) {
    return s3::MakeError("InvalidArgument", s.message());
  }
  return std::nullopt;
}

s3::Outcome<objects::PutOptions> PutOptionsFor(const S3Call& call) {
  objects::PutOptions out;
  for (const auto& [name, value] : call.request.headers) {
    std::string lower = AsciiLower(name);
    if (lower == "content-type") {
      out.content_type = value;
    } else if (lower.rfind(kAmzMetaPrefix, 0) == 0) {
      out.metadata[lower.substr(kAmzMetaPrefix.size())] = value;
    } else if (std::string_view stored = objects::StoredHeaderNamed(lower); !stored.empty()) {
      out.headers[std::string(stored)] = value;
    }
  }
  // S3's type for content sent without one (the native API's is application/octet-stream).
  if (out.content_type.empty()) out.content_type = "binary/octet-stream";
  // "aws-chunked" says how this request's body is framed, not what the object holds.
  if (auto encoding = out.headers.find("Content-Encoding"); encoding != out.headers.end()) {
    encoding->second = WithoutAwsChunked(encoding->second);
    if (encoding->second.empty()) out.headers.erase(encoding);
  }
  s3::Outcome<std::string> md5 = ContentMd5(call.request);
  if (!md5.ok()) return md5.error();
  out.expected_md5 = std::move(*md5);
  for (const auto& [name, value] : call.request.headers) {
    const std::string lower = AsciiLower(name);
    if (lower.rfind(kAmzChecksumPrefix, 0) != 0) continue;
    std::optional<objects::ChecksumAlgorithm> algorithm =
        objects::ChecksumAlgorithmNamed(std::string_view(lower).substr(kAmzChecksumPrefix.size()));
    if (!algorithm) continue;  // x-amz-checksum-type, or an algorithm of another day
    if (out.checksum_algorithm != objects::ChecksumAlgorithm::kNone) {
      return s3::MakeError("InvalidRequest", "Expecting a single x-amz-checksum- header");
    }
    std::optional<std::string> raw = Base64Decode(value);
    if (!raw || raw->size() != objects::ChecksumBytes(*algorithm)) {
      return s3::MakeError("InvalidRequest", "Value for " + lower + " header is invalid.");
    }
    out.checksum_algorithm = *algorithm;
    out.expected_checksum = std::move(*raw);
  }
  // A checksum sent after the body: its algorithm now, its value once the body is read
  // (S3Body::trailing_checksum, then Upload::ExpectChecksum).
  const std::string& trailer = call.signer.trailer;
  if (trailer.rfind(kAmzChecksumPrefix, 0) == 0) {
    std::optional<objects::ChecksumAlgorithm> algorithm = objects::ChecksumAlgorithmNamed(
        std::string_view(trailer).substr(kAmzChecksumPrefix.size()));
    if (!algorithm)
      return s3::MakeError("InvalidRequest", "Unsupported trailing checksum " + trailer);
    if (out.checksum_algorithm != objects::ChecksumAlgorithm::kNone) {
      return s3::MakeError("InvalidRequest", "Expecting a single x-amz-checksum- header");
    }
    out.checksum_algorithm = *algorithm;
  }
  if (call.signer.payload == s3::Payload::kSha256) out.expected_sha256 = call.signer.payload_sha256;
  return out;
}

// Commits refuse content with kInvalidArgument only when an expected digest does not match
// (objects/object_service.h, objects/multipart.h), and say which.
s3::Error ContentError(const Status& s) {
  if (s.code() == StatusCode::kInvalidArgument) {
    if (s.message().find(" checksum is ") != std::string::npos) {
      return s3::MakeError(
          "BadDigest",
          "The checksum you specified did not match the calculated checksum: " + s.message());
    }
    if (s.message().find("SHA-256") != std::string::npos) {
      return s3::MakeError("XAmzContentSHA256Mismatch",
                           "The provided 'x-amz-content-sha256' header does not match what was "
                           "computed: " +
                               s.message());
    }
    if (s.message().find("MD5") != std::string::npos) {
      return s3::MakeError(
          "BadDigest",
          "The Content-MD5 you specified did not match what we received: " + s.message());
    }
  }
  return s3::FromStatus(s);
}

s3::Outcome<objects::ChecksumAlgorithm> ChecksumAlgorithmAskedFor(const S3Call& call) {
  const std::string& named = call.request.Header("x-amz-checksum-algorithm");
  if (named.empty()) return objects::ChecksumAlgorithm::kNone;
  std::optional<objects::ChecksumAlgorithm> algorithm =
      objects::ChecksumAlgorithmNamed(AsciiLower(named));
  if (!algorithm) {
    return s3::MakeError("InvalidRequest",
                         "Checksum algorithm '" + named.substr(0, 32) +
                             "' is not one of CRC32, CRC32C, CRC64NVME, SHA1, SHA256");
  }
  return *algorithm;
}

std::string ShownChecksum(const objects::ObjectInfo& info) {
  std::string shown = Base64Encode(info.checksum);
  if (info.checksum_parts > 0) shown += "-" + std::to_string(info.checksum_parts);
  return shown;
}

std::string S3ChecksumName(objects::ChecksumAlgorithm algorithm) {
  std::string name(objects::ChecksumName(algorithm));
  for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return name;
}

void EchoChecksum(const S3Call& call, http::Response& response) {
  for (const auto& [name, value] : call.request.headers) {
    const std::string lower = AsciiLower(name);
    if (lower.rfind(kAmzChecksumPrefix, 0) == 0 &&
        objects::ChecksumAlgorithmNamed(
            std::string_view(lower).substr(kAmzChecksumPrefix.size()))) {
      response.headers.emplace_back(lower, value);
    }
  }
}

namespace {

// The decoder of an aws-chunked body, or nullptr for a plain one.
std::unique_ptr<s3::AwsChunkedDecoder> DecoderFor(const s3::SignedRequest& signer) {
  if (signer.payload == s3::Payload::kStreaming ||
      signer.payload == s3::Payload::kStreamingSignedTrailer) {
    return std::make_unique<s3::AwsChunkedDecoder>(
        signer.signing_key, signer.amz_date, signer.scope, signer.seed_signature,
        /*signed_trailer=*/signer.payload == s3::Payload::kStreamingSignedTrailer);
  }
  if (signer.payload == s3::Payload::kStreamingUnsignedTrailer) {
    return std::make_unique<s3::AwsChunkedDecoder>(s3::AwsChunkedDecoder::UnsignedWithTrailer{});
  }
  return nullptr;
}

}  // namespace

s3::Outcome<TrailingChecksum> TrailingChecksumOf(const S3Call& call,
                                                 const s3::AwsChunkedDecoder& decoder) {
  const std::string& name = call.signer.trailer;
  TrailingChecksum out;
  if (name.rfind(kAmzChecksumPrefix, 0) != 0) return out;
  std::optional<objects::ChecksumAlgorithm> algorithm =
      objects::ChecksumAlgorithmNamed(std::string_view(name).substr(kAmzChecksumPrefix.size()));
  if (!algorithm) return s3::MakeError("InvalidRequest", "Unsupported trailing checksum " + name);
  auto sent = decoder.trailers().find(name);
  if (sent == decoder.trailers().end()) {
    return s3::MakeError("IncompleteBody",
                         "The trailing header " + name + " was announced but not sent");
  }
  std::optional<std::string> raw = Base64Decode(sent->second);
  if (!raw || raw->size() != objects::ChecksumBytes(*algorithm)) {
    return s3::MakeError("InvalidRequest", "Value for " + name + " trailing header is invalid.");
  }
  out.algorithm = *algorithm;
  out.name = name;
  out.value = sent->second;
  out.raw = std::move(*raw);
  return out;
}

std::optional<s3::Error> CheckBufferedBody(S3Call& call) {
  http::Request& r = call.request;
  if (r.body_reader != nullptr) return std::nullopt;  // S3Body checks it as it is read
  const s3::SignedRequest& signer = call.signer;
  if (std::unique_ptr<s3::AwsChunkedDecoder> decoder = DecoderFor(signer)) {
    std::string decoded;
    Status s = decoder->Feed(r.body, &decoded);
    if (s.ok() && !decoder->done()) s = InvalidArgument("the body ended before its final chunk");
    if (s.ok() && decoded.size() != signer.decoded_length) {
      s = InvalidArgument("the body holds " + std::to_string(decoded.size()) + " bytes, not the " +
                          std::to_string(signer.decoded_length) +
                          " of x-amz-decoded-content-length");
    }
    if (!s.ok()) return BodyError(s);
    s3::Outcome<TrailingChecksum> trailing = TrailingChecksumOf(call, *decoder);
    if (!trailing.ok()) return trailing.error();
    if (trailing->algorithm != objects::ChecksumAlgorithm::kNone) {
      objects::ContentChecksum sum(trailing->algorithm);
      sum.Update(decoded);
      if (sum.Finish() != trailing->raw) {
        return s3::MakeError("BadDigest", "The " + trailing->name +
                                              " you specified did not match the calculated "
                                              "checksum.");
      }
    }
    r.body = std::move(decoded);
  } else if (signer.payload == s3::Payload::kSha256) {
    std::string actual = Sha256Hex(r.body);
    if (actual != signer.payload_sha256) {
      return s3::MakeError("XAmzContentSHA256Mismatch",
                           "The provided 'x-amz-content-sha256' header does not match what was "
                           "computed.")
          .With("ClientComputedContentSHA256", signer.payload_sha256)
          .With("S3ComputedContentSHA256", actual);
    }
  }
  s3::Outcome<std::string> md5 = ContentMd5(r);
  if (!md5.ok()) return md5.error();
  if (!md5->empty() && *md5 != Md5Hex(r.body)) {
    return s3::MakeError("BadDigest",
                         "The Content-MD5 you specified did not match what we received.");
  }
  return std::nullopt;
}

struct S3Body::State {
  explicit State(S3Call& c) : call(c) {}
  S3Call& call;
  std::string raw;                                 // an aws-chunked body as it came
  std::unique_ptr<s3::AwsChunkedDecoder> decoder;  // for an aws-chunked body
  bool finished = false;
  uint64_t read_bytes = 0;    // of the body as it came
  TrailingChecksum trailing;  // once the body has ended
};

S3Body::S3Body(S3Call& call) : state_(std::make_unique<State>(call)) {
  state_->decoder = DecoderFor(call.signer);
}

const TrailingChecksum& S3Body::trailing_checksum() const { return state_->trailing; }

S3Body::~S3Body() = default;

awaitable<std::optional<s3::Error>> S3Body::Read(std::string& piece) {
  State& st = *state_;
  http::BodyReader* reader = st.call.request.body_reader;
  if (st.finished) {
    piece.clear();
    co_return std::nullopt;
  }
  if (reader == nullptr) {  // read whole, and checked (CheckBufferedBody): handed out at once
    piece = std::move(st.call.request.body);
    st.call.request.body.clear();
    st.finished = piece.empty();
    co_return std::nullopt;
  }
  // A plain body is read straight into `piece`. Resizing a string to the size it had costs
  // nothing, so only a short piece's tail is ever filled with zeros again.
  std::string& in = st.decoder == nullptr ? piece : st.raw;
  if (st.decoder != nullptr) piece.clear();
  for (;;) {
    in.resize(PieceBytesFor(reader->content_length(), st.read_bytes));
    Result<size_t> n = size_t{0};  // a body of known length is over once all of it is read
    if (!in.empty()) n = co_await reader->Read(std::span(in));
    if (!n.ok()) co_return BodyError(n.status());
    in.resize(*n);
    st.read_bytes += *n;
    if (st.decoder == nullptr) {
      if (*n == 0) st.finished = true;
      co_return std::nullopt;
    }
    if (*n == 0) {
      st.finished = true;
      const uint64_t announced = st.call.signer.decoded_length;
      if (!st.decoder->done()) {
        co_return BodyError(InvalidArgument("the aws-chunked body ended before its final chunk"));
      }
      if (st.decoder->decoded_bytes() != announced) {
        co_return BodyError(InvalidArgument(
            "the body holds " + std::to_string(st.decoder->decoded_bytes()) + " bytes, not the " +
            std::to_string(announced) + " of x-amz-decoded-content-length"));
      }
      s3::Outcome<TrailingChecksum> trailing = TrailingChecksumOf(st.call, *st.decoder);
      if (!trailing.ok()) co_return trailing.error();
      st.trailing = std::move(*trailing);
      co_return std::nullopt;
    }
    Status fed = st.decoder->Feed(in, &piece);
    if (!fed.ok()) co_return BodyError(fed);
    if (!piece.empty()) co_return std::nullopt;
  }
}

}  // namespace tf::api
