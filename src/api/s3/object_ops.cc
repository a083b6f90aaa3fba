// S3's object operations: PutObject, CopyObject, GetObject and HeadObject (with Range or
// partNumber), and DeleteObject. Uploads stream into the object service and downloads out of it,
// piece by piece.
#include <charconv>

#include "api/body_pump.h"
#include "api/object_http.h"
#include "api/object_stream.h"
#include "api/s3/conditions.h"
#include "api/s3/s3_api.h"
#include "base/crypto.h"
#include "base/log.h"
#include "base/time_format.h"
#include "http/url.h"
#include "objects/blob_format.h"
#include "s3/xml.h"

namespace tf::api {
namespace {

using objects::ObjectReader;
using objects::Upload;

// Drops an upload (aborting it unless committed) on the pool: that touches the disk.
awaitable<void> Release(asio::thread_pool& pool, std::unique_ptr<Upload>& upload) {
  co_await RunBlocking(pool, [&upload] {
    upload.reset();
    return 0;
  });
}

// A failed commit as S3 names it: a bucket deleted meanwhile, or content refused.
s3::Error CommitError(S3Call& call, const Status& s) {
  if (s.code() == StatusCode::kNotFound) return BucketError(call.bucket, s);
  return ContentError(s);
}

// GetObject's response-* query parameters and the headers they set.
constexpr std::pair<const char*, std::string_view> kResponseOverrides[] = {
    {"response-content-type", "Content-Type"},
    {"response-content-language", "Content-Language"},
    {"response-expires", "Expires"},
    {"response-cache-control", "Cache-Control"},
    {"response-content-disposition", "Content-Disposition"},
    {"response-content-encoding", "Content-Encoding"}};

void SetS3ObjectHeaders(const objects::ObjectInfo& info, http::Response& r) {
  r.content_type = info.content_type;
  r.headers.emplace_back("ETag", "\"" + info.etag + "\"");
  r.headers.emplace_back("Last-Modified", HttpDate(info.modified_at));
  r.headers.emplace_back("Accept-Ranges", "bytes");
  for (const auto& [name, value] : info.headers) r.headers.emplace_back(name, value);
  for (const auto& [name, value] : info.metadata)
    r.headers.emplace_back("x-amz-meta-" + name, value);
}

// The checksum the object was stored with, when the client asks for it (x-amz-checksum-mode:
// ENABLED) and reads the whole object: S3 sends none with a part.
void SetChecksumHeaders(const S3Call& call, const objects::ObjectInfo& info, http::Response& r) {
  if (info.checksum_algorithm == objects::ChecksumAlgorithm::kNone) return;
  if (call.request.Header("x-amz-checksum-mode") != "ENABLED") return;
  const std::string_view name = objects::ChecksumName(info.checksum_algorithm);
  r.headers.emplace_back("x-amz-checksum-" + std::string(name), ShownChecksum(info));
  r.headers.emplace_back("x-amz-checksum-type",
                         info.checksum_parts > 0 ? "COMPOSITE" : "FULL_OBJECT");
}

// The bytes of part `number` (from 1) of an object: a multipart upload's object has its parts,
// in content order; an object of one piece is its only part. Offset and size; nullopt past the
// last part.
std::optional<std::pair<uint64_t, uint64_t>> PartBytes(const objects::ObjectInfo& info,
                                                       int64_t number) {
  if (info.parts.empty()) {
    if (number != 1) return std::nullopt;
    return std::make_pair(uint64_t{0}, info.size);
  }
  if (number > static_cast<int64_t>(info.parts.size())) return std::nullopt;
  uint64_t offset = 0;
  for (int64_t i = 0; i + 1 < number; ++i) offset += info.parts[i].size;
  return std::make_pair(offset, info.parts[number - 1].size);
}

// partNumber, when a GET or HEAD names one: 1-10000, and never with a Range. 0 when none.
s3::Outcome<int64_t> PartNumberOf(const S3Call& call) {
  if (!call.Has("partNumber")) return int64_t{0};
  const std::string& text = call.Query("partNumber");
  int64_t n = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (error != std::errc() || end != text.data() + text.size() || n < 1 ||
      n > objects::kMaxPartNumber) {
    return s3::MakeError("InvalidArgument", "Part number must be an integer between 1 and " +
                                                std::to_string(objects::kMaxPartNumber) +
                                                ", inclusive")
        .With("ArgumentName", "partNumber")
        .With("ArgumentValue", text.substr(0, 32));
  }
  if (!call.request.Header("Range").empty()) {
    return s3::MakeError("InvalidRequest",
                         "Cannot specify both Range header and partNumber query parameter");
  }
  return n;
}

// Readies a GET or HEAD of part `number` (PartBytes) of the reader's object, a ranged GET that
// S3's multipart downloads make one part at a time: the reader's range, and in `response` 206
// with the part's Content-Range, the object's part count, and with checksum mode the part's own
// kept checksum (the whole object's, for an object of one piece). Returns the part's length;
// InvalidPartNumber past the last part.
s3::Outcome<uint64_t> SelectPart(const S3Call& call, ObjectReader& reader, int64_t number,
                                 http::Response& response) {
  const objects::ObjectInfo& info = reader.info();
  auto part = PartBytes(info, number);
  if (!part) {
    return s3::MakeError("InvalidPartNumber", "The requested partnumber is not satisfiable")
        .With("PartNumberRequested", std::to_string(number))
        .With("ActualPartCount", std::to_string(std::max<size_t>(info.parts.size(), 1)));
  }
  const auto [offset, size] = *part;
  if (!info.parts.empty()) {
    response.headers.emplace_back("x-amz-mp-parts-count", std::to_string(info.parts.size()));
  }
  if (size > 0) {  // an empty part has no range: the caller sends nothing
    (void)reader.SetRange(offset, offset + size - 1);  // inside the object: its own part
    response.status = 206;
    response.headers.emplace_back("Content-Range", "bytes " + std::to_string(offset) + "-" +
                                                       std::to_string(offset + size - 1) + "/" +
                                                       std::to_string(info.size));
  }
  if (info.parts.empty()) {
    SetChecksumHeaders(call, info, response);
  } else if (const std::string& kept = info.parts[number - 1].checksum;
             !kept.empty() && info.checksum_algorithm != objects::ChecksumAlgorithm::kNone &&
             call.request.Header("x-amz-checksum-mode") == "ENABLED") {
    response.headers.emplace_back(
        "x-amz-checksum-" + std::string(objects::ChecksumName(info.checksum_algorithm)),
        Base64Encode(kept));
  }
  return size;
}

// The answer to a GET with `length` bytes of the reader's range: content up to one block is
// read (and checked) before answering, so damage there is a clean 500; larger content streams
// with a Content-Length, and damage found on the way cuts the connection before any bad block
// is sent.
awaitable<http::Response> SendContent(S3Call& call, std::shared_ptr<ObjectReader> reader,
                                      http::Response response, uint64_t length) {
  Services& s = call.services();
  if (length <= objects::kBlockBytes) {
    auto content = co_await RunBlocking(s.pool, [&] { return reader->ReadRest(); });
    if (!content.ok()) {
      spdlog::error("s3: {}", content.status().ToString());
      co_return S3ErrorResponse(call, s3::FromStatus(content.status()));
    }
    response.body = std::move(*content);
    response.content_length.reset();
    co_return response;
  }
  response.stream = StreamContent(s.pool, std::move(reader), "s3");
  co_return response;
}

}  // namespace

awaitable<http::Response> PutObject(S3Call& call) {
  s3::Outcome<objects::PutOptions> options = PutOptionsFor(call);
  if (!options.ok()) co_return S3ErrorResponse(call, options.error());
  s3::Outcome<store::PutCondition> condition = PutConditionOf(call.request);
  if (!condition.ok()) co_return S3ErrorResponse(call, condition.error());
  options->condition = *condition;
  Services& s = call.services();
  auto begun = co_await RunBlocking(s.pool, [&] {
    return s.objects.BeginPut(call.project(), call.bucket, call.key, std::move(*options));
  });
  if (!begun.ok()) co_return S3ErrorResponse(call, BucketError(call.bucket, begun.status()));
  std::unique_ptr<Upload> upload = std::move(begun).value();

  S3Body body(call);
  auto read = [&body](std::string& piece) { return body.Read(piece); };
  auto write = [&upload](std::string_view piece) { return upload->Write(piece); };
  std::optional<s3::Error> failed =
      co_await PumpBody<s3::Error>(s.pool, read, write, s3::FromStatus);
  if (failed) {
    co_await Release(s.pool, upload);
    co_return S3ErrorResponse(call, *failed);
  }
  const TrailingChecksum& trailing = body.trailing_checksum();
  if (trailing.algorithm != objects::ChecksumAlgorithm::kNone) upload->ExpectChecksum(trailing.raw);
  auto info = co_await RunBlocking(s.pool, [&] { return upload->Commit(); });
  co_await Release(s.pool, upload);
  if (!info.ok() && info.status().code() == StatusCode::kFailedPrecondition) {
    co_return S3ErrorResponse(call, PutConditionError(info.status(), *condition));
  }
  if (!info.ok()) co_return S3ErrorResponse(call, CommitError(call, info.status()));
  http::Response r;
  r.content_type.clear();
  r.headers.emplace_back("ETag", "\"" + info->etag + "\"");
  EchoChecksum(call, r);
  if (trailing.algorithm != objects::ChecksumAlgorithm::kNone) {
    r.headers.emplace_back(trailing.name, trailing.value);
  }
  co_return r;
}

s3::Outcome<CopySource> CopySourceOf(const S3Call& call) {
  // "/bucket/key" or "bucket/key", percent-encoded, and "?versionId=ID" after it.
  std::string_view raw = call.request.Header("x-amz-copy-source");
  std::optional<std::string> version;
  if (const size_t q = raw.find('?'); q != std::string_view::npos) {
    const std::string_view query = raw.substr(q + 1);
    if (query.rfind("versionId=", 0) != 0) {
      return s3::MakeError("InvalidArgument",
                           "x-amz-copy-source may only be followed by ?versionId=, not '?" +
                               std::string(query.substr(0, 32)) + "'");
    }
    version = http::PercentDecode(query.substr(10), false);
    raw = raw.substr(0, q);
  }
  std::string source = http::PercentDecode(raw, false);
  if (!source.empty() && source.front() == '/') source.erase(0, 1);
  const size_t slash = source.find('/');
  if (slash == std::string::npos || slash + 1 == source.size()) {
    return s3::MakeError("InvalidArgument", "x-amz-copy-source must be BUCKET/KEY");
  }
  CopySource out{source.substr(0, slash), source.substr(slash + 1)};
  if (auto bad = CheckNames(out.bucket, out.key)) return *bad;
  if (version && *version != kNullVersion) return NoSuchVersion(out.key, *version);
  return out;
}

std::optional<s3::Error> CopyTooLarge(uint64_t bytes, uint64_t limit) {
  if (bytes <= limit) return std::nullopt;
  return s3::MakeError("InvalidRequest",
                       "The specified copy source is larger than the maximum allowable size for "
                       "a copy source: " +
                           std::to_string(limit) +
                           " (copy it as a multipart upload of part copies)");
}

awaitable<http::Response> CopyObject(S3Call& call) {
  s3::Outcome<CopySource> source = CopySourceOf(call);
  if (!source.ok()) co_return S3ErrorResponse(call, source.error());
  const std::string& from_bucket = source->bucket;
  const std::string& from_key = source->key;

  const std::string& directive = call.request.Header("x-amz-metadata-directive");
  if (!directive.empty() && directive != "COPY" && directive != "REPLACE") {
    co_return S3ErrorResponse(
        call, s3::MakeError("InvalidArgument",
                            "Unknown metadata directive '" + directive.substr(0, 32) + "'"));
  }
  const bool replace = directive == "REPLACE";
  if (!replace && from_bucket == call.bucket && from_key == call.key) {
    co_return S3ErrorResponse(
        call, s3::MakeError("InvalidRequest",
                            "This copy request is illegal because it is trying to copy an object "
                            "to itself without changing the object's metadata."));
  }
  s3::Outcome<objects::PutOptions> options = PutOptionsFor(call);
  if (!options.ok()) co_return S3ErrorResponse(call, options.error());
  options->expected_md5.clear();  // the digests are of the (empty) request body
  options->expected_sha256.clear();
  options->checksum_algorithm = objects::ChecksumAlgorithm::kNone;
  options->expected_checksum.clear();
  // A checksum to compute for the copy; without one, the source's is kept (and checked).
  s3::Outcome<objects::ChecksumAlgorithm> new_checksum = ChecksumAlgorithmAskedFor(call);
  if (!new_checksum.ok()) co_return S3ErrorResponse(call, new_checksum.error());
  // If-None-Match: * and If-Match name the destination, as on a PUT.
  s3::Outcome<store::PutCondition> condition = PutConditionOf(call.request);
  if (!condition.ok()) co_return S3ErrorResponse(call, condition.error());
  options->condition = *condition;

  Services& s = call.services();
  auto copied = co_await RunBlocking(s.pool, [&]() -> s3::Outcome<objects::ObjectInfo> {
    auto reader = s.objects.Open(call.project(), from_bucket, from_key);
    if (!reader.ok()) return ObjectError(s, call.project(), from_bucket, from_key, reader.status());
    if (ConditionOutcome c =
            EvaluateConditions(ObjectConditions::OfCopySource(call.request), (*reader)->info());
        c.kind != ConditionOutcome::kHolds) {
      return CopySourcePreconditionFailed(c);
    }
    const objects::ObjectInfo& from = (*reader)->info();
    if (auto too_large = CopyTooLarge(from.size, s.objects.max_copy_bytes())) {
      return *too_large;
    }
    // Content that passes its block checks yet does not hash as recorded is damaged.
    options->expected_sha256 = from.sha256;
    if (!replace) {
      options->content_type = from.content_type;
      options->metadata = from.metadata;
      options->headers = from.headers;
    }
    if (*new_checksum != objects::ChecksumAlgorithm::kNone) {
      options->checksum_algorithm = *new_checksum;
    } else {
      // A composite checksum (of a multipart upload's parts) cannot be checked against one
      // piece of content: the copy's own checksum of that algorithm is computed instead.
      options->checksum_algorithm = from.checksum_algorithm;
      if (from.checksum_parts == 0) options->expected_checksum = from.checksum;
    }
    auto upload = s.objects.BeginPut(call.project(), call.bucket, call.key, std::move(*options));
    if (!upload.ok()) return ObjectError(call, upload.status());
    for (;;) {
      auto piece = (*reader)->Next();
      if (!piece.ok()) return s3::FromStatus(piece.status());
      if (piece->empty()) break;
      if (Status w = (*upload)->Write(*piece); !w.ok()) return s3::FromStatus(w);
    }
    auto info = (*upload)->Commit();
    if (info.ok()) return std::move(info).value();
    if (info.status().code() == StatusCode::kFailedPrecondition) {
      return PutConditionError(info.status(), *condition);
    }
    if (info.status().code() == StatusCode::kInvalidArgument) {
      // The request's own digests were cleared: only the source's SHA-256 or kept checksum can
      // disagree, and then the source is damaged, not the request wrong.
      return s3::FromStatus(
          Internal(from_bucket + "/" + from_key + " is damaged: " + info.status().message()));
    }
    return CommitError(call, info.status());
  });
  if (!copied.ok()) co_return S3ErrorResponse(call, copied.error());
  s3::XmlWriter w;
  w.Open("CopyObjectResult", s3::kS3Namespace);
  w.Element("LastModified", FormatTime(copied->modified_at));
  w.Element("ETag", "\"" + copied->etag + "\"");
  if (copied->checksum_algorithm != objects::ChecksumAlgorithm::kNone) {
    w.Element(ChecksumElement(copied->checksum_algorithm), Base64Encode(copied->checksum));
  }
  co_return XmlResponse(w.Finish());
}

// GET and HEAD, of the whole object, a Range or a partNumber.
awaitable<http::Response> GetObject(S3Call& call, bool head) {
  s3::Outcome<int64_t> part_number = PartNumberOf(call);
  if (!part_number.ok()) co_return S3ErrorResponse(call, part_number.error());
  Services& s = call.services();
  auto opened = co_await RunBlocking(s.pool, [&]() -> s3::Outcome<std::shared_ptr<ObjectReader>> {
    auto reader = s.objects.Open(call.project(), call.bucket, call.key);
    if (!reader.ok()) return ObjectError(call, reader.status());
    return std::shared_ptr<ObjectReader>(std::move(reader).value());
  });
  if (!opened.ok()) co_return S3ErrorResponse(call, opened.error());
  std::shared_ptr<ObjectReader> reader = std::move(*opened);
  const objects::ObjectInfo& info = reader->info();

  const ConditionOutcome condition =
      EvaluateConditions(ObjectConditions::OfRequest(call.request), info);
  if (condition.kind == ConditionOutcome::kFailed) {
    co_return S3ErrorResponse(call, PreconditionFailed(condition.condition));
  }
  http::Response response;
  SetS3ObjectHeaders(info, response);
  // What a (presigned) GET asks the answer to say instead: a download link's file name, say.
  for (const auto& [parameter, header] : kResponseOverrides) {
    if (!call.Has(parameter)) continue;
    for (unsigned char c : call.Query(parameter)) {
      if ((c < 0x20 && c != '\t') || c == 0x7f) {  // a CR or LF would split the answer
        co_return S3ErrorResponse(
            call,
            s3::MakeError("InvalidArgument", std::string(parameter) + " holds a control character")
                .With("ArgumentName", parameter));
      }
    }
    if (header == "Content-Type") {
      response.content_type = call.Query(parameter);
    } else {
      http::ReplaceHeader(response.headers, header, call.Query(parameter));
    }
  }
  if (condition.kind == ConditionOutcome::kNotModified) {
    response.status = 304;
    response.content_type.clear();
    co_return response;
  }
  uint64_t length = info.size;
  if (*part_number > 0) {
    s3::Outcome<uint64_t> part = SelectPart(call, *reader, *part_number, response);
    if (!part.ok()) co_return S3ErrorResponse(call, part.error());
    response.content_length = *part;
    // An empty part (a last part may be) has no range to give the reader: nothing to send.
    if (head || *part == 0) co_return response;
    co_return co_await SendContent(call, std::move(reader), std::move(response), *part);
  }
  const std::string& range_header = call.request.Header("Range");
  ByteRange range = ParseRange(range_header, info.size);
  if (range.kind == ByteRange::kUnsatisfiable) {
    http::Response r = S3ErrorResponse(
        call, s3::MakeError("InvalidRange", "The requested range is not satisfiable")
                  .With("RangeRequested", range_header)
                  .With("ActualObjectSize", std::to_string(info.size)));
    r.headers.emplace_back("Content-Range", "bytes */" + std::to_string(info.size));
    co_return r;
  }
  if (range.kind == ByteRange::kPart) {
    (void)reader->SetRange(range.first, range.last);  // ParseRange keeps it inside the object
    length = range.last - range.first + 1;
    response.status = 206;
    response.headers.emplace_back("Content-Range", "bytes " + std::to_string(range.first) + "-" +
                                                       std::to_string(range.last) + "/" +
                                                       std::to_string(info.size));
  }
  if (range.kind != ByteRange::kPart) SetChecksumHeaders(call, info, response);
  response.content_length = length;
  if (head) co_return response;
  co_return co_await SendContent(call, std::move(reader), std::move(response), length);
}

awaitable<std::optional<s3::Error>> MissingBucket(S3Call& call) {
  Services& s = call.services();
  co_return co_await RunBlocking(s.pool, [&]() -> std::optional<s3::Error> {
    auto bucket = s.objects.GetBucket(call.project(), call.bucket);
    if (!bucket.ok()) return BucketError(call.bucket, bucket.status());
    return std::nullopt;
  });
}

awaitable<std::optional<s3::Error>> MissingObject(S3Call& call) {
  Services& s = call.services();
  co_return co_await RunBlocking(s.pool, [&]() -> std::optional<s3::Error> {
    auto info = s.objects.Head(call.project(), call.bucket, call.key);
    if (!info.ok()) return ObjectError(call, info.status());
    return std::nullopt;
  });
}

awaitable<http::Response> GetObjectTagging(S3Call& call) {
  if (auto missing = co_await MissingObject(call)) co_return S3ErrorResponse(call, *missing);
  s3::XmlWriter w;
  w.Open("Tagging", s3::kS3Namespace);
  w.Open("TagSet");
  co_return XmlResponse(w.Finish());
}

awaitable<http::Response> DeleteObjectTagging(S3Call& call) {
  if (auto missing = co_await MissingObject(call)) co_return S3ErrorResponse(call, *missing);
  http::Response r;
  r.status = 204;
  r.content_type.clear();
  co_return r;
}

std::optional<s3::Error> DeleteOneObject(Services& services, const std::string& project_id,
                                         const std::string& bucket, const std::string& key,
                                         const std::string& if_match) {
  Status st = services.objects.Delete(project_id, bucket, key, if_match);
  if (st.ok()) return std::nullopt;
  if (st.code() == StatusCode::kFailedPrecondition) return PreconditionFailed("If-Match");
  s3::Error e = ObjectError(services, project_id, bucket, key, st);
  // Deleting what is not there succeeds, as in S3, unless a condition asked for an object.
  if (e.code == "NoSuchKey" && if_match.empty()) return std::nullopt;
  return e;
}

awaitable<http::Response> DeleteObject(S3Call& call) {
  s3::Outcome<std::string> if_match = DeleteConditionOf(call.request);
  if (!if_match.ok()) co_return S3ErrorResponse(call, if_match.error());
  Services& s = call.services();
  auto refused = co_await RunBlocking(
      s.pool, [&] { return DeleteOneObject(s, call.project(), call.bucket, call.key, *if_match); });
  if (refused) co_return S3ErrorResponse(call, *refused);
  http::Response r;
  r.status = 204;
  r.content_type.clear();
  co_return r;
}

}  // namespace tf::api
