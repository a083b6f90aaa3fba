// S3's multipart uploads: CreateMultipartUpload, UploadPart, CompleteMultipartUpload,
// AbortMultipartUpload, ListParts and ListMultipartUploads, over objects/multipart.h.
#include <algorithm>
#include <charconv>

#include "api/body_pump.h"
#include "api/s3/conditions.h"
#include "api/s3/multipart_rules.h"
#include "api/s3/s3_api.h"
#include "api/s3/upload_listing.h"
#include "base/crypto.h"
#include "base/time_format.h"
#include "s3/request_xml.h"
#include "s3/xml.h"

namespace tf::api {
namespace {

using objects::PartWriter;

s3::Error NoSuchUpload(const std::string& upload_id) {
  return s3::MakeError("NoSuchUpload",
                       "The specified upload does not exist. The upload ID may be invalid, or the "
                       "upload may have been aborted or completed.")
      .With("UploadId", upload_id.substr(0, 128));
}

// kNotFound from an upload call: the bucket, or else the upload, is missing. Blocking.
s3::Error UploadError(S3Call& call, const Status& s) {
  if (s.code() != StatusCode::kNotFound) return s3::FromStatus(s);
  auto bucket = call.services().objects.GetBucket(call.project(), call.bucket);
  if (!bucket.ok()) return BucketError(call.bucket, bucket.status());
  return NoSuchUpload(call.Query("uploadId"));
}

// A non-negative number from the query, or `fallback` when absent; nullopt if malformed.
std::optional<int64_t> QueryNumber(const S3Call& call, const char* name, int64_t fallback) {
  if (!call.Has(name)) return fallback;
  const std::string& text = call.Query(name);
  int64_t n = -1;
  auto [end, err] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (err != std::errc() || end != text.data() + text.size() || n < 0) return std::nullopt;
  return n;
}

// x-amz-copy-source-range: "bytes=FIRST-LAST", inside an object of `size` bytes.
std::optional<std::pair<uint64_t, uint64_t>> ParseCopyRange(std::string_view text, uint64_t size) {
  constexpr std::string_view kUnit = "bytes=";
  if (text.substr(0, kUnit.size()) != kUnit) return std::nullopt;
  text.remove_prefix(kUnit.size());
  const size_t dash = text.find('-');
  if (dash == std::string_view::npos) return std::nullopt;
  uint64_t first = 0, last = 0;
  auto a = std::from_chars(text.data(), text.data() + dash, first);
  auto b = std::from_chars(text.data() + dash + 1, text.data() + text.size(), last);
  if (a.ec != std::errc() || a.ptr != text.data() + dash || b.ec != std::errc() ||
      b.ptr != text.data() + text.size() || first > last || last >= size) {
    return std::nullopt;
  }
  return std::make_pair(first, last);
}

// The checksum type CreateMultipartUpload asks for with `algorithm`, as S3 decides it: named by
// x-amz-checksum-type, else FULL_OBJECT for CRC64NVME (it has no other) and COMPOSITE for the
// rest. A CRC may be either; SHA-1 and SHA-256 are COMPOSITE only, CRC64NVME FULL_OBJECT only.
s3::Outcome<objects::ChecksumType> ChecksumTypeAskedFor(const S3Call& call,
                                                        objects::ChecksumAlgorithm algorithm) {
  using objects::ChecksumAlgorithm;
  using objects::ChecksumType;
  const std::string& named = call.request.Header("x-amz-checksum-type");
  if (named.empty()) {
    return algorithm == ChecksumAlgorithm::kCrc64Nvme ? ChecksumType::kFullObject
                                                      : ChecksumType::kComposite;
  }
  std::optional<ChecksumType> type = objects::ChecksumTypeNamed(named);
  if (!type) {
    return s3::MakeError("InvalidRequest", "Value for x-amz-checksum-type header is invalid: '" +
                                               named.substr(0, 32) +
                                               "' is not COMPOSITE or FULL_OBJECT");
  }
  if (algorithm == ChecksumAlgorithm::kNone) {
    return s3::MakeError("InvalidRequest",
                         "x-amz-checksum-type needs x-amz-checksum-algorithm: the checksum type "
                         "says how the parts' checksums make the object's");
  }
  const bool allowed = *type == ChecksumType::kFullObject
                           ? objects::IsCrc(algorithm)
                           : algorithm != ChecksumAlgorithm::kCrc64Nvme;
  if (!allowed) {
    return s3::MakeError("InvalidRequest", "The " + std::string(objects::ChecksumTypeName(*type)) +
                                               " checksum type cannot be used with the " +
                                               S3ChecksumName(algorithm) + " checksum algorithm.");
  }
  return *type;
}

// The object checksum a CompleteMultipartUpload request claims (x-amz-checksum-<algorithm>),
// as sent: base64, with "-<parts>" after a composite one. Algorithm kNone if it claims none.
struct ClaimedChecksum {
  objects::ChecksumAlgorithm algorithm = objects::ChecksumAlgorithm::kNone;
  std::string header;
  std::string value;
};

s3::Outcome<ClaimedChecksum> ClaimedChecksumOf(const S3Call& call) {
  constexpr std::string_view kPrefix = "x-amz-checksum-";
  ClaimedChecksum claimed;
  for (const auto& [name, value] : call.request.headers) {
    std::string lower = name;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower.rfind(kPrefix, 0) != 0) continue;
    auto algorithm =
        objects::ChecksumAlgorithmNamed(std::string_view(lower).substr(kPrefix.size()));
    if (!algorithm) continue;  // x-amz-checksum-type
    if (claimed.algorithm != objects::ChecksumAlgorithm::kNone) {
      return s3::MakeError("InvalidRequest", "Expecting a single x-amz-checksum- header");
    }
    // Base64 of the algorithm's size, with "-<parts>" after it when composite.
    std::string_view digest = value;
    if (const size_t dash = digest.find('-'); dash != std::string_view::npos) {
      const std::string_view parts = digest.substr(dash + 1);
      const bool number = !parts.empty() && parts.size() <= 5 &&
                          parts.find_first_not_of("0123456789") == std::string_view::npos;
      digest = number ? digest.substr(0, dash) : std::string_view();
    }
    std::optional<std::string> raw = Base64Decode(digest);
    if (!raw || raw->size() != objects::ChecksumBytes(*algorithm)) {
      return s3::MakeError("InvalidRequest", "Value for " + lower + " header is invalid.");
    }
    claimed = {*algorithm, lower, value};
  }
  return claimed;
}

// The check of a claimed object checksum against the one the named parts make, before anything
// is committed: InvalidRequest if the upload keeps no checksum or one of another algorithm or
// type, BadDigest if the values differ.
std::optional<s3::Error> CheckClaimedChecksum(const S3Call& call, const ClaimedChecksum& claimed,
                                              const objects::MultipartUpload& upload,
                                              const std::vector<objects::PartInfo>& named) {
  const std::string& type = call.request.Header("x-amz-checksum-type");
  if (!type.empty() && upload.checksum_algorithm != objects::ChecksumAlgorithm::kNone &&
      type != objects::ChecksumTypeName(upload.checksum_type)) {
    return s3::MakeError("InvalidRequest",
                         "The upload was created using the " +
                             std::string(objects::ChecksumTypeName(upload.checksum_type)) +
                             " checksum type, not " + type.substr(0, 32));
  }
  if (claimed.algorithm == objects::ChecksumAlgorithm::kNone) return std::nullopt;
  if (upload.checksum_algorithm != claimed.algorithm) {
    return s3::MakeError(
        "InvalidRequest",
        upload.checksum_algorithm == objects::ChecksumAlgorithm::kNone
            ? "The upload was created without a checksum algorithm: its object's " +
                  S3ChecksumName(claimed.algorithm) + " cannot be checked"
            : "The upload was created using the " + S3ChecksumName(upload.checksum_algorithm) +
                  " checksum algorithm, not " + S3ChecksumName(claimed.algorithm));
  }
  auto made = objects::MultipartChecksum(upload.checksum_algorithm, upload.checksum_type, named);
  if (!made.ok()) return s3::FromStatus(made.status());
  const std::string value = Base64Encode(*made);
  const std::string composite = value + "-" + std::to_string(named.size());
  const bool same =
      claimed.value == value ||
      (upload.checksum_type == objects::ChecksumType::kComposite && claimed.value == composite);
  if (!same) {
    return s3::MakeError(
        "BadDigest",
        "The " + claimed.header + " you specified, '" + claimed.value.substr(0, 64) +
            "', did not match the calculated checksum of the "
            "named parts, '" +
            (upload.checksum_type == objects::ChecksumType::kComposite ? composite : value) + "'");
  }
  return std::nullopt;
}

awaitable<void> Release(asio::thread_pool& pool, std::unique_ptr<PartWriter>& writer) {
  co_await RunBlocking(pool, [&writer] {
    writer.reset();
    return 0;
  });
}

}  // namespace

awaitable<http::Response> CreateMultipartUpload(S3Call& call) {
  s3::Outcome<objects::PutOptions> options = PutOptionsFor(call);
  if (!options.ok()) co_return S3ErrorResponse(call, options.error());
  // The algorithm of the parts' checksums, and the object's composite checksum of them.
  s3::Outcome<objects::ChecksumAlgorithm> algorithm = ChecksumAlgorithmAskedFor(call);
  if (!algorithm.ok()) co_return S3ErrorResponse(call, algorithm.error());
  s3::Outcome<objects::ChecksumType> type = ChecksumTypeAskedFor(call, *algorithm);
  if (!type.ok()) co_return S3ErrorResponse(call, type.error());
  options->checksum_algorithm = *algorithm;
  options->checksum_type = *type;
  Services& s = call.services();
  auto created = co_await RunBlocking(s.pool, [&]() -> s3::Outcome<std::string> {
    auto id = call.api.multipart.Create(call.project(), call.bucket, call.key, std::move(*options));
    if (!id.ok())
      return id.status().code() == StatusCode::kNotFound ? BucketError(call.bucket, id.status())
                                                         : s3::FromStatus(id.status());
    return std::move(id).value();
  });
  if (!created.ok()) co_return S3ErrorResponse(call, created.error());
  s3::XmlWriter w;
  w.Open("InitiateMultipartUploadResult", s3::kS3Namespace);
  w.Element("Bucket", call.bucket);
  w.Element("Key", call.key);
  w.Element("UploadId", *created);
  http::Response r = XmlResponse(w.Finish());
  if (*algorithm != objects::ChecksumAlgorithm::kNone) {
    r.headers.emplace_back("x-amz-checksum-algorithm", S3ChecksumName(*algorithm));
    r.headers.emplace_back("x-amz-checksum-type", std::string(objects::ChecksumTypeName(*type)));
  }
  co_return r;
}

// UploadPartCopy: a part made of (a range of) an existing object.
awaitable<http::Response> UploadPartCopy(S3Call& call, int number) {
  s3::Outcome<CopySource> source = CopySourceOf(call);
  if (!source.ok()) co_return S3ErrorResponse(call, source.error());
  Services& s = call.services();
  auto copied = co_await RunBlocking(s.pool, [&]() -> s3::Outcome<objects::PartInfo> {
    auto reader = s.objects.Open(call.project(), source->bucket, source->key);
    if (!reader.ok()) {
      return ObjectError(s, call.project(), source->bucket, source->key, reader.status());
    }
    if (ConditionOutcome c =
            EvaluateConditions(ObjectConditions::OfCopySource(call.request), (*reader)->info());
        c.kind != ConditionOutcome::kHolds) {
      return CopySourcePreconditionFailed(c);
    }
    if (const std::string& range = call.request.Header("x-amz-copy-source-range"); !range.empty()) {
      auto r = ParseCopyRange(range, (*reader)->info().size);
      if (!r) {
        return s3::MakeError("InvalidArgument",
                             "Range specified is not valid for source object of size: " +
                                 std::to_string((*reader)->info().size));
      }
      (void)(*reader)->SetRange(r->first, r->second);
    }
    const uint64_t limit = std::min(s.objects.max_copy_bytes(), objects::kMaxPartBytes);
    if (auto too_large = CopyTooLarge((*reader)->remaining(), limit)) return *too_large;
    auto writer = call.api.multipart.BeginPart(call.project(), call.bucket, call.key,
                                               call.Query("uploadId"), number, {});
    if (!writer.ok()) return UploadError(call, writer.status());
    for (;;) {
      auto piece = (*reader)->Next();
      if (!piece.ok()) return s3::FromStatus(piece.status());
      if (piece->empty()) break;
      Status written = (*writer)->Write(*piece);
      if (written.code() == StatusCode::kInvalidArgument) {
        return s3::MakeError("EntityTooLarge", written.message());
      }
      if (!written.ok()) return s3::FromStatus(written);
    }
    auto part = (*writer)->Commit();
    if (part.ok()) return std::move(part).value();
    if (part.status().code() == StatusCode::kNotFound) return UploadError(call, part.status());
    return s3::FromStatus(part.status());
  });
  if (!copied.ok()) co_return S3ErrorResponse(call, copied.error());
  s3::XmlWriter w;
  w.Open("CopyPartResult", s3::kS3Namespace);
  w.Element("LastModified", FormatTime(copied->modified_at));
  w.Element("ETag", "\"" + copied->etag + "\"");
  co_return XmlResponse(w.Finish());
}

awaitable<http::Response> UploadPart(S3Call& call) {
  std::optional<int64_t> number = QueryNumber(call, "partNumber", -1);
  if (!number || *number < 1 || *number > objects::kMaxPartNumber || !call.Has("uploadId")) {
    co_return S3ErrorResponse(
        call, s3::MakeError("InvalidArgument", "Part number must be an integer between 1 and " +
                                                   std::to_string(objects::kMaxPartNumber) +
                                                   ", inclusive, and uploadId must be given")
                  .With("ArgumentName", "partNumber"));
  }
  if (!call.request.Header("x-amz-copy-source").empty()) {
    co_return co_await UploadPartCopy(call, static_cast<int>(*number));
  }
  s3::Outcome<objects::PutOptions> expected = PutOptionsFor(call);
  if (!expected.ok()) co_return S3ErrorResponse(call, expected.error());
  Services& s = call.services();
  auto begun = co_await RunBlocking(s.pool, [&] {
    return call.api.multipart.BeginPart(call.project(), call.bucket, call.key,
                                        call.Query("uploadId"), static_cast<int>(*number),
                                        *expected);
  });
  if (!begun.ok()) {
    s3::Error e = co_await RunBlocking(s.pool, [&] { return UploadError(call, begun.status()); });
    co_return S3ErrorResponse(call, e);
  }
  std::unique_ptr<PartWriter> writer = std::move(begun).value();

  S3Body body(call);
  auto read = [&body](std::string& piece) { return body.Read(piece); };
  auto write = [&writer](std::string_view piece) { return writer->Write(piece); };
  auto failed_write = [](const Status& written) {
    return written.code() == StatusCode::kInvalidArgument
               ? s3::MakeError("EntityTooLarge", written.message())
               : s3::FromStatus(written);
  };
  std::optional<s3::Error> failed = co_await PumpBody<s3::Error>(s.pool, read, write, failed_write);
  if (failed) {
    co_await Release(s.pool, writer);
    co_return S3ErrorResponse(call, *failed);
  }
  const TrailingChecksum& trailing = body.trailing_checksum();
  if (trailing.algorithm != objects::ChecksumAlgorithm::kNone) writer->ExpectChecksum(trailing.raw);
  auto part = co_await RunBlocking(s.pool, [&]() -> s3::Outcome<objects::PartInfo> {
    auto info = writer->Commit();
    if (info.ok()) return std::move(info).value();
    if (info.status().code() == StatusCode::kNotFound) return UploadError(call, info.status());
    return ContentError(info.status());
  });
  co_await Release(s.pool, writer);
  if (!part.ok()) co_return S3ErrorResponse(call, part.error());
  http::Response r;
  r.content_type.clear();
  r.headers.emplace_back("ETag", "\"" + part->etag + "\"");
  EchoChecksum(call, r);
  if (trailing.algorithm != objects::ChecksumAlgorithm::kNone) {
    r.headers.emplace_back(trailing.name, trailing.value);
  }
  co_return r;
}

namespace {

// A checksum that CompleteMultipartUpload names for a part must be the one the part was kept
// with: InvalidPart otherwise, as S3 answers.
std::optional<s3::Error> CheckPartChecksums(const std::vector<s3::CompletedPart>& requested,
                                            const std::vector<objects::PartInfo>& uploaded,
                                            const std::string& upload_id) {
  for (const s3::CompletedPart& p : requested) {
    const objects::PartInfo* kept = nullptr;
    for (const objects::PartInfo& u : uploaded) {
      if (u.number == p.part_number) kept = &u;
    }
    for (const auto& [element, value] : p.checksums) {
      const bool same = kept != nullptr && !kept->checksum.empty() &&
                        element == ChecksumElement(kept->checksum_algorithm) &&
                        value == Base64Encode(kept->checksum);
      if (!same) {
        return s3::MakeError("InvalidPart", "The " + element.substr(0, 32) + " of part " +
                                                std::to_string(p.part_number) +
                                                " is not the one it was uploaded with")
            .With("UploadId", upload_id)
            .With("PartNumber", std::to_string(p.part_number));
      }
    }
  }
  return std::nullopt;
}

}  // namespace

awaitable<http::Response> CompleteMultipartUpload(S3Call& call) {
  auto requested = s3::ParseCompleteMultipartUpload(call.request.body);
  if (!requested.ok()) {
    co_return S3ErrorResponse(call, s3::MakeError("MalformedXML", requested.status().message()));
  }
  const std::string& upload_id = call.Query("uploadId");
  // S3's conditional writes apply to the object a completion makes too.
  s3::Outcome<store::PutCondition> condition = PutConditionOf(call.request);
  if (!condition.ok()) co_return S3ErrorResponse(call, condition.error());
  s3::Outcome<ClaimedChecksum> claimed = ClaimedChecksumOf(call);
  if (!claimed.ok()) co_return S3ErrorResponse(call, claimed.error());
  Services& s = call.services();
  auto made = co_await RunBlocking(s.pool, [&]() -> s3::Outcome<objects::ObjectInfo> {
    auto upload = call.api.multipart.Get(call.project(), call.bucket, call.key, upload_id);
    if (!upload.ok()) return UploadError(call, upload.status());
    auto uploaded = call.api.multipart.ListParts(call.project(), call.bucket, call.key, upload_id);
    if (!uploaded.ok()) return UploadError(call, uploaded.status());
    if (auto bad = api::CheckCompletion(*requested, *uploaded, upload_id)) return *bad;
    if (auto bad = CheckPartChecksums(*requested, *uploaded, upload_id)) return *bad;
    std::vector<std::pair<int, std::string>> parts;
    std::vector<std::string> md5s;
    std::vector<objects::PartInfo> named;
    for (const auto& p : *requested) {
      for (const auto& u : *uploaded) {
        if (u.number == p.part_number) named.push_back(u);
      }
      md5s.push_back(named.back().etag);
      parts.emplace_back(p.part_number, md5s.back());
    }
    // Complete checks each named part's ETag again as it commits, so that a part uploaded anew
    // meanwhile is refused: the checksum checked here is the one the object gets.
    if (auto bad = CheckClaimedChecksum(call, *claimed, *upload, named)) return *bad;
    auto info = call.api.multipart.Complete(call.project(), call.bucket, call.key, upload_id, parts,
                                            api::MultipartEtag(md5s), *condition);
    if (info.ok()) return std::move(info).value();
    if (info.status().code() == StatusCode::kInvalidArgument) {
      // A part was uploaded again between the check above and the completion.
      return s3::MakeError("InvalidPart", info.status().message()).With("UploadId", upload_id);
    }
    if (info.status().code() == StatusCode::kFailedPrecondition) {
      return PutConditionError(info.status(), *condition);
    }
    return UploadError(call, info.status());
  });
  if (!made.ok()) co_return S3ErrorResponse(call, made.error());
  s3::XmlWriter w;
  w.Open("CompleteMultipartUploadResult", s3::kS3Namespace);
  w.Element("Location", call.location());
  w.Element("Bucket", call.bucket);
  w.Element("Key", call.key);
  w.Element("ETag", "\"" + made->etag + "\"");
  if (made->checksum_algorithm != objects::ChecksumAlgorithm::kNone) {
    w.Element(ChecksumElement(made->checksum_algorithm), ShownChecksum(*made));
    w.Element("ChecksumType", made->checksum_parts > 0 ? "COMPOSITE" : "FULL_OBJECT");
  }
  co_return XmlResponse(w.Finish());
}

awaitable<http::Response> AbortMultipartUpload(S3Call& call) {
  Services& s = call.services();
  auto aborted = co_await RunBlocking(s.pool, [&]() -> s3::Outcome<bool> {
    Status st =
        call.api.multipart.Abort(call.project(), call.bucket, call.key, call.Query("uploadId"));
    if (!st.ok()) return UploadError(call, st);
    return true;
  });
  if (!aborted.ok()) co_return S3ErrorResponse(call, aborted.error());
  http::Response r;
  r.status = 204;
  r.content_type.clear();
  co_return r;
}

awaitable<http::Response> ListParts(S3Call& call) {
  std::optional<int64_t> max_parts = QueryNumber(call, "max-parts", 1000);
  std::optional<int64_t> marker = QueryNumber(call, "part-number-marker", 0);
  if (!max_parts || !marker) {
    co_return S3ErrorResponse(call, s3::MakeError("InvalidArgument",
                                                  "max-parts and part-number-marker must be "
                                                  "numbers from 0 up"));
  }
  // At least one a page: with max-parts=0 a client following NextPartNumberMarker would never
  // get past the marker.
  const int64_t limit = std::clamp<int64_t>(*max_parts, 1, 1000);
  const std::string& upload_id = call.Query("uploadId");
  Services& s = call.services();
  objects::MultipartUpload upload;
  auto parts = co_await RunBlocking(s.pool, [&]() -> s3::Outcome<std::vector<objects::PartInfo>> {
    auto got = call.api.multipart.Get(call.project(), call.bucket, call.key, upload_id);
    if (!got.ok()) return UploadError(call, got.status());
    upload = std::move(got).value();
    auto list = call.api.multipart.ListParts(call.project(), call.bucket, call.key, upload_id);
    if (!list.ok()) return UploadError(call, list.status());
    return std::move(list).value();
  });
  if (!parts.ok()) co_return S3ErrorResponse(call, parts.error());
  s3::XmlWriter w;
  w.Open("ListPartsResult", s3::kS3Namespace);
  w.Element("Bucket", call.bucket);
  w.Element("Key", call.key);
  w.Element("UploadId", upload_id);
  w.Element("PartNumberMarker", std::to_string(*marker));
  w.Element("MaxParts", std::to_string(limit));
  w.Element("StorageClass", "STANDARD");
  if (upload.checksum_algorithm != objects::ChecksumAlgorithm::kNone) {
    w.Element("ChecksumAlgorithm", S3ChecksumName(upload.checksum_algorithm));
    w.Element("ChecksumType", objects::ChecksumTypeName(upload.checksum_type));
  }
  int64_t listed = 0, last = *marker;
  bool truncated = false;
  for (const auto& p : *parts) {
    if (p.number <= *marker) continue;
    if (listed == limit) {
      truncated = true;
      break;
    }
    w.Open("Part");
    w.Element("PartNumber", std::to_string(p.number));
    w.Element("LastModified", FormatTime(p.modified_at));
    w.Element("ETag", "\"" + p.etag + "\"");
    w.Element("Size", std::to_string(p.size));
    if (!p.checksum.empty()) {
      w.Element(ChecksumElement(p.checksum_algorithm), Base64Encode(p.checksum));
    }
    w.Close();
    ++listed;
    last = p.number;
  }
  w.Element("NextPartNumberMarker", std::to_string(last));
  w.Element("IsTruncated", truncated ? "true" : "false");
  co_return XmlResponse(w.Finish());
}

awaitable<http::Response> ListMultipartUploads(S3Call& call) {
  std::optional<int64_t> max_uploads = QueryNumber(call, "max-uploads", 1000);
  if (!max_uploads) {
    co_return S3ErrorResponse(
        call, s3::MakeError("InvalidArgument", "max-uploads must be a number from 0 up")
                  .With("ArgumentName", "max-uploads"));
  }
  const bool url_encoding = call.Has("encoding-type");
  if (url_encoding && call.Query("encoding-type") != "url") {
    co_return S3ErrorResponse(
        call, s3::MakeError("InvalidArgument", "Invalid Encoding Method specified in Request"));
  }
  // Keys as XML 1.0 cannot carry them (control characters), when the client asks.
  auto encode = [&](std::string_view text) {
    return url_encoding ? http::PercentEncode(text, http::Slash::kKeep) : std::string(text);
  };
  UploadListingRequest request;
  request.prefix = call.Query("prefix");
  request.delimiter = call.Query("delimiter");
  request.key_marker = call.Query("key-marker");
  request.upload_id_marker = call.Query("upload-id-marker");
  // At least one a page, as ListParts: a page of none would never move past its marker.
  request.max_uploads = std::clamp<int64_t>(*max_uploads, 1, 1000);
  Services& s = call.services();
  auto uploads =
      co_await RunBlocking(s.pool, [&]() -> s3::Outcome<std::vector<objects::MultipartUpload>> {
        auto list = call.api.multipart.ListUploads(call.project(), call.bucket);
        if (!list.ok()) return BucketError(call.bucket, list.status());
        return std::move(list).value();
      });
  if (!uploads.ok()) co_return S3ErrorResponse(call, uploads.error());
  const UploadListing page = ListUploadsPage(std::move(*uploads), request);
  s3::XmlWriter w;
  w.Open("ListMultipartUploadsResult", s3::kS3Namespace);
  w.Element("Bucket", call.bucket);
  w.Element("KeyMarker", encode(request.key_marker));
  w.Element("UploadIdMarker", request.upload_id_marker);
  if (page.truncated) {
    w.Element("NextKeyMarker", encode(page.next_key_marker));
    w.Element("NextUploadIdMarker", page.next_upload_id_marker);
  }
  w.Element("Prefix", encode(request.prefix));
  if (!request.delimiter.empty()) w.Element("Delimiter", encode(request.delimiter));
  if (url_encoding) w.Element("EncodingType", "url");
  w.Element("MaxUploads", std::to_string(request.max_uploads));
  w.Element("IsTruncated", page.truncated ? "true" : "false");
  for (const auto& u : page.uploads) {
    w.Open("Upload");
    w.Element("Key", encode(u.key));
    w.Element("UploadId", u.upload_id);
    w.Element("Initiated", FormatTime(u.initiated_at));
    w.Element("StorageClass", "STANDARD");
    if (u.checksum_algorithm != objects::ChecksumAlgorithm::kNone) {
      w.Element("ChecksumAlgorithm", S3ChecksumName(u.checksum_algorithm));
      w.Element("ChecksumType", objects::ChecksumTypeName(u.checksum_type));
    }
    w.Close();
  }
  for (const auto& p : page.common_prefixes) {
    w.Open("CommonPrefixes");
    w.Element("Prefix", encode(p));
    w.Close();
  }
  co_return XmlResponse(w.Finish());
}

}  // namespace tf::api
