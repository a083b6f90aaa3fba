// S3's bucket operations: ListBuckets, CreateBucket, DeleteBucket, HeadBucket,
// GetBucketLocation, ListObjects (V1 and V2), ListObjectVersions and DeleteObjects.
#include <charconv>

#include "api/s3/s3_api.h"
#include "base/crypto.h"
#include "base/time_format.h"
#include "objects/names.h"
#include "s3/request_xml.h"
#include "s3/sigv4.h"
#include "s3/xml.h"

namespace tf::api {
namespace {

constexpr int kMaxListKeys = 1000;

std::optional<std::string> HexDecode(std::string_view hex) {
  if (hex.size() % 2 != 0) return std::nullopt;
  std::string out;
  for (size_t i = 0; i < hex.size(); i += 2) {
    unsigned value = 0;
    auto [end, err] = std::from_chars(hex.data() + i, hex.data() + i + 2, value, 16);
    if (err != std::errc() || end != hex.data() + i + 2) return std::nullopt;
    out.push_back(static_cast<char>(value));
  }
  return out;
}

// A listing's parameters, from the query.
struct ListRequest {
  bool v2 = false;
  bool versions = false;  // ListObjectVersions
  bool url_encoding = false;
  int max_keys = kMaxListKeys;
  store::ListObjectsOptions options;
  std::string continuation_token, start_after, marker;  // as given
};

s3::Outcome<ListRequest> ParseListRequest(const S3Call& call, bool versions) {
  ListRequest out;
  out.versions = versions;
  out.v2 = !versions && call.Query("list-type") == "2";
  if (!versions && call.Has("list-type") && !out.v2) {
    return s3::MakeError("InvalidArgument", "list-type must be 2");
  }
  if (call.Has("encoding-type")) {
    if (call.Query("encoding-type") != "url") {
      return s3::MakeError("InvalidArgument", "Invalid Encoding Method specified in Request");
    }
    out.url_encoding = true;
  }
  if (call.Has("max-keys")) {
    const std::string& text = call.Query("max-keys");
    int64_t n = -1;
    auto [end, err] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (err != std::errc() || end != text.data() + text.size() || n < 0) {
      return s3::MakeError("InvalidArgument",
                           "max-keys must be a number from 0 up, not '" + text.substr(0, 32) + "'");
    }
    out.max_keys = static_cast<int>(std::min<int64_t>(n, kMaxListKeys));
  }
  out.options.prefix = call.Query("prefix");
  out.options.delimiter = call.Query("delimiter");
  if (out.v2) {
    out.start_after = call.Query("start-after");
    out.continuation_token = call.Query("continuation-token");
    out.options.start_after = out.start_after;
    if (call.Has("continuation-token")) {
      auto after = HexDecode(out.continuation_token);
      if (!after || after->empty()) {
        return s3::MakeError("InvalidArgument", "The continuation token provided is incorrect");
      }
      out.options.start_after = std::max(*after, out.start_after);
    }
  } else if (versions) {
    // Every object has one version, "null": the versions after (key, "null") are the keys after.
    out.marker = call.Query("key-marker");
    out.options.start_after = out.marker;
    if (call.Has("version-id-marker")) {
      if (out.marker.empty()) {
        return s3::MakeError("InvalidArgument",
                             "A version-id marker cannot be specified without a key marker.");
      }
      if (call.Query("version-id-marker") != kNullVersion) {
        return s3::MakeError("InvalidArgument",
                             "Invalid version id marker: this server's objects have only the "
                             "version null");
      }
    }
  } else {
    out.marker = call.Query("marker");
    out.options.start_after = out.marker;
  }
  out.options.limit = std::max(out.max_keys, 1);
  return out;
}

}  // namespace

awaitable<http::Response> ListBuckets(S3Call& call) {
  Services& s = call.services();
  auto buckets =
      co_await RunBlocking(s.pool, [&] { return s.objects.ListBuckets(call.project()); });
  if (!buckets.ok()) co_return S3ErrorResponse(call, s3::FromStatus(buckets.status()));
  s3::XmlWriter w;
  w.Open("ListAllMyBucketsResult", s3::kS3Namespace);
  w.Open("Owner");
  w.Element("ID", call.project());
  w.Element("DisplayName", call.project());
  w.Close();
  w.Open("Buckets");
  for (const auto& b : *buckets) {
    w.Open("Bucket");
    w.Element("Name", b.name);
    w.Element("CreationDate", FormatTime(b.created_at));
    w.Close();
  }
  w.Close();
  co_return XmlResponse(w.Finish());
}

awaitable<http::Response> CreateBucket(S3Call& call) {
  auto region = s3::ParseCreateBucketConfiguration(call.request.body);
  if (!region.ok()) {
    co_return S3ErrorResponse(call, s3::MakeError("MalformedXML", region.status().message()));
  }
  Services& s = call.services();
  auto created = co_await RunBlocking(
      s.pool, [&] { return s.objects.CreateBucket(call.project(), call.bucket); });
  if (!created.ok()) {
    s3::Error e = s3::FromStatus(created.status());
    if (created.status().code() == StatusCode::kAlreadyExists) {
      e = s3::MakeError("BucketAlreadyOwnedByYou",
                        "Your previous request to create the named bucket succeeded and you "
                        "already own it.")
              .With("BucketName", call.bucket);
    }
    co_return S3ErrorResponse(call, e);
  }
  http::Response r;
  r.content_type.clear();
  r.headers.emplace_back("Location", call.location());
  co_return r;
}

awaitable<http::Response> DeleteBucket(S3Call& call) {
  Services& s = call.services();
  auto deleted = co_await RunBlocking(s.pool, [&]() -> s3::Outcome<bool> {
    auto uploads = call.api.multipart.ListUploads(call.project(), call.bucket);
    if (!uploads.ok()) return BucketError(call.bucket, uploads.status());
    if (!uploads->empty()) {
      return s3::MakeError("BucketNotEmpty", "The bucket has " + std::to_string(uploads->size()) +
                                                 " multipart uploads in progress: abort them first")
          .With("BucketName", call.bucket);
    }
    Status st = s.objects.DeleteBucket(call.project(), call.bucket);
    if (st.code() == StatusCode::kFailedPrecondition) {
      return s3::MakeError("BucketNotEmpty", "The bucket you tried to delete is not empty")
          .With("BucketName", call.bucket);
    }
    if (!st.ok()) return BucketError(call.bucket, st);
    return true;
  });
  if (!deleted.ok()) co_return S3ErrorResponse(call, deleted.error());
  http::Response r;
  r.status = 204;
  r.content_type.clear();
  co_return r;
}

awaitable<http::Response> HeadBucket(S3Call& call) {
  if (auto missing = co_await MissingBucket(call)) co_return S3ErrorResponse(call, *missing);
  http::Response r;
  r.content_type.clear();
  r.headers.emplace_back("x-amz-bucket-region", "us-east-1");
  co_return r;
}

awaitable<http::Response> GetBucketLocation(S3Call& call) {
  if (auto missing = co_await MissingBucket(call)) co_return S3ErrorResponse(call, *missing);
  s3::XmlWriter w;
  w.Open("LocationConstraint", s3::kS3Namespace);  // empty: us-east-1, as S3 says it
  co_return XmlResponse(w.Finish());
}

namespace {

// ListObjects (V1, V2) and ListObjectVersions: the same listing, in each one's document.
awaitable<http::Response> List(S3Call& call, bool versions) {
  s3::Outcome<ListRequest> parsed = ParseListRequest(call, versions);
  if (!parsed.ok()) co_return S3ErrorResponse(call, parsed.error());
  ListRequest& req = *parsed;
  Services& s = call.services();
  auto listing = co_await RunBlocking(s.pool, [&]() -> Result<objects::Listing> {
    if (req.max_keys > 0) return s.objects.List(call.project(), call.bucket, req.options);
    TF_RETURN_IF_ERROR(s.objects.GetBucket(call.project(), call.bucket).status());
    return objects::Listing{};
  });
  if (!listing.ok()) {
    s3::Error e = listing.status().code() == StatusCode::kNotFound
                      ? BucketError(call.bucket, listing.status())
                      : s3::FromStatus(listing.status());
    co_return S3ErrorResponse(call, e);
  }
  auto encode = [&](std::string_view text) {
    return req.url_encoding ? http::PercentEncode(text, http::Slash::kKeep) : std::string(text);
  };
  const objects::Listing& l = *listing;
  s3::XmlWriter w;
  w.Open(versions ? "ListVersionsResult" : "ListBucketResult", s3::kS3Namespace);
  w.Element("Name", call.bucket);
  w.Element("Prefix", encode(req.options.prefix));
  if (versions) {
    w.Element("KeyMarker", encode(req.marker));
    w.Element("VersionIdMarker", call.Query("version-id-marker"));
  }
  if (!req.options.delimiter.empty()) w.Element("Delimiter", encode(req.options.delimiter));
  w.Element("MaxKeys", std::to_string(req.max_keys));
  if (req.url_encoding) w.Element("EncodingType", "url");
  w.Element("IsTruncated", l.truncated ? "true" : "false");
  if (req.v2) {
    w.Element("KeyCount", std::to_string(l.objects.size() + l.common_prefixes.size()));
    if (!req.start_after.empty()) w.Element("StartAfter", encode(req.start_after));
    if (!req.continuation_token.empty()) w.Element("ContinuationToken", req.continuation_token);
    if (l.truncated) w.Element("NextContinuationToken", HexEncode(l.next_start_after));
  } else if (versions) {
    if (l.truncated) {
      w.Element("NextKeyMarker", encode(l.next_start_after));
      w.Element("NextVersionIdMarker", kNullVersion);
    }
  } else {
    w.Element("Marker", encode(req.marker));
    if (l.truncated) w.Element("NextMarker", encode(l.next_start_after));
  }
  const bool owner = !req.v2 || call.Query("fetch-owner") == "true";
  for (const auto& o : l.objects) {
    w.Open(versions ? "Version" : "Contents");
    w.Element("Key", encode(o.key));
    if (versions) {
      w.Element("VersionId", kNullVersion);
      w.Element("IsLatest", "true");
    }
    w.Element("LastModified", FormatTime(o.modified_at));
    w.Element("ETag", "\"" + o.etag + "\"");
    w.Element("Size", std::to_string(o.size));
    w.Element("StorageClass", "STANDARD");
    if (o.checksum_algorithm != objects::ChecksumAlgorithm::kNone) {  // kept with the object
      w.Element("ChecksumAlgorithm", S3ChecksumName(o.checksum_algorithm));
      w.Element("ChecksumType", o.checksum_parts > 0 ? "COMPOSITE" : "FULL_OBJECT");
    }
    if (owner) {
      w.Open("Owner");
      w.Element("ID", call.project());
      w.Element("DisplayName", call.project());
      w.Close();
    }
    w.Close();
  }
  for (const auto& p : l.common_prefixes) {
    w.Open("CommonPrefixes");
    w.Element("Prefix", encode(p));
    w.Close();
  }
  co_return XmlResponse(w.Finish());
}

}  // namespace

awaitable<http::Response> ListObjects(S3Call& call) { co_return co_await List(call, false); }

awaitable<http::Response> ListObjectVersions(S3Call& call) { co_return co_await List(call, true); }

awaitable<http::Response> DeleteObjects(S3Call& call) {
  auto parsed = s3::ParseDeleteRequest(call.request.body);
  if (!parsed.ok()) {
    co_return S3ErrorResponse(call, s3::MakeError("MalformedXML", parsed.status().message()));
  }
  struct KeyResult {
    const s3::DeleteTarget* target;
    std::optional<s3::Error> error;
  };
  Services& s = call.services();
  auto results = co_await RunBlocking(s.pool, [&]() -> s3::Outcome<std::vector<KeyResult>> {
    auto bucket = s.objects.GetBucket(call.project(), call.bucket);
    if (!bucket.ok()) return BucketError(call.bucket, bucket.status());
    std::vector<KeyResult> out;
    for (const s3::DeleteTarget& target : parsed->objects) {
      std::optional<s3::Error> error = CheckNames(call.bucket, target.key);
      // A version but the one there is names nothing: the object stays.
      if (!error && target.version_id && *target.version_id != kNullVersion) {
        error = NoSuchVersion(target.key, *target.version_id);
      }
      if (!error) {
        error =
            DeleteOneObject(s, call.project(), call.bucket, target.key, target.etag.value_or(""));
      }
      out.push_back({&target, std::move(error)});
    }
    return out;
  });
  if (!results.ok()) co_return S3ErrorResponse(call, results.error());
  s3::XmlWriter w;
  w.Open("DeleteResult", s3::kS3Namespace);
  for (const KeyResult& o : *results) {
    if (o.error) {
      w.Open("Error");
      w.Element("Key", o.target->key);
      if (o.target->version_id) w.Element("VersionId", *o.target->version_id);
      w.Element("Code", o.error->code);
      w.Element("Message", o.error->message);
      w.Close();
    } else if (!parsed->quiet) {
      w.Open("Deleted");
      w.Element("Key", o.target->key);
      if (o.target->version_id) w.Element("VersionId", *o.target->version_id);
      w.Close();
    }
  }
  co_return XmlResponse(w.Finish());
}

}  // namespace tf::api
