// The S3-compatible API's handlers, shared by the files of api/s3/: one call's context, the
// operations, and the helpers that answer in S3's XML. Path-style addressing on the native API's
// port:
// "/" is the service, "/BUCKET" a bucket, "/BUCKET/KEY" an object; virtual-hosted too, to
// BUCKET.DOMAIN, with --s3-domain (docs/objects.md, "S3 API").
// Requests are signed with access keys (auth/access_keys.h, s3/request_auth.h), never with tokens.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "api/services.h"
#include "auth/access_keys.h"
#include "objects/multipart.h"
#include "s3/aws_chunked.h"
#include "s3/errors.h"
#include "s3/request_auth.h"

namespace tf::api {

// What every S3 handler stands on; made by AddS3Routes and owned by the routes that use it.
struct S3Api {
  explicit S3Api(Services& s)
      : services(s), keys(s.store.access_keys(), s.clock), multipart(s.objects) {}

  Services& services;
  auth::AccessKeys keys;
  objects::MultipartUploads multipart;
};

// One S3 request, once its signature has checked out.
struct S3Call {
  S3Api& api;
  http::Request& request;
  std::string bucket;  // "" for the service (ListBuckets)
  std::string key;     // "" for the bucket itself
  std::string request_id;
  s3::SignedRequest signer;
  bool virtual_hosted = false;  // the bucket was named in the Host, not the path

  Services& services() { return api.services; }
  const std::string& project() const { return signer.key.project_id; }
  bool Has(const char* param) const { return request.query.count(param) > 0; }
  // The value of a query parameter; "" when absent.
  const std::string& Query(const char* param) const;
  // "/bucket/key", as S3 names the resource in an error.
  std::string resource() const;
  // Where a client finds the resource again, for a Location: resource(), or "/key" (relative to
  // the bucket's host) for a virtual-hosted request.
  std::string location() const;
};

// "/", "/bucket" or "/bucket/key", as S3 names a resource in an error.
std::string S3Resource(const std::string& bucket, const std::string& key);

// An S3 error answer. HEAD answers carry the status and no body.
http::Response S3ErrorResponse(const S3Call& call, const s3::Error& error);
// 200 with an XML document.
http::Response XmlResponse(std::string document, int status = 200);

// A service's kNotFound for object `key` of `bucket`: NoSuchBucket if the bucket is missing,
// NoSuchKey otherwise. Other statuses as s3::FromStatus says. Blocking (it may look the bucket
// up). The short form is for the call's own object.
s3::Error ObjectError(Services& services, const std::string& project_id, const std::string& bucket,
                      const std::string& key, const Status& status);
s3::Error ObjectError(S3Call& call, const Status& status);
// kNotFound as NoSuchBucket, the rest as s3::FromStatus says.
s3::Error BucketError(const std::string& bucket, const Status& status);
// InvalidBucketName / KeyTooLongError / InvalidArgument for names the object service would
// refuse, so that those get S3's codes; nullopt when both are fine.
std::optional<s3::Error> CheckNames(const std::string& bucket, const std::string& key);

// Object versions: this server keeps one version of each object, S3's "null" version (that of a
// bucket whose versioning was never enabled). A version id names it if it is "null", and no
// version otherwise.
inline constexpr std::string_view kNullVersion = "null";
// NoSuchVersion (404) naming `key` and `version_id`.
s3::Error NoSuchVersion(const std::string& key, const std::string& version_id);
// NoSuchVersion for a call whose versionId query parameter is not "null"; nullopt otherwise.
std::optional<s3::Error> CheckVersionId(const S3Call& call);

// Deletes one object, if it has ETag `if_match` ("*" for any, "" for no condition): nullopt
// when it is gone (or was not there, without a condition), else S3's error (PreconditionFailed
// naming If-Match, NoSuchKey for a missing object with a condition, ...). Blocking.
std::optional<s3::Error> DeleteOneObject(Services& services, const std::string& project_id,
                                         const std::string& bucket, const std::string& key,
                                         const std::string& if_match);

// NoSuchBucket unless the call's bucket exists; nullopt if it does.
awaitable<std::optional<s3::Error>> MissingBucket(S3Call& call);
// NoSuchKey (or NoSuchBucket) unless the call's object exists; nullopt if it does.
awaitable<std::optional<s3::Error>> MissingObject(S3Call& call);

// A refused commit of content (an object's or a part's) as S3 names it: a digest that does not
// match is XAmzContentSHA256Mismatch or BadDigest, the rest as s3::FromStatus says.
s3::Error ContentError(const Status& status);

// An object to copy from, named by x-amz-copy-source (CopyObject, UploadPartCopy).
struct CopySource {
  std::string bucket;
  std::string key;
};
// InvalidArgument for a malformed header, the codes of CheckNames for bad names, NoSuchVersion
// for a ?versionId= but null.
s3::Outcome<CopySource> CopySourceOf(const S3Call& call);
// InvalidRequest, in S3's words, when `bytes` to copy are more than `limit` (what one copy on
// the server may copy: objects::ObjectServiceOptions::max_copy_bytes, and for a part no more
// than a part holds); nullopt if they are not.
std::optional<s3::Error> CopyTooLarge(uint64_t bytes, uint64_t limit);

// Checks a buffered body against what was signed (a payload hash, or aws-chunked chunk
// signatures, replacing the body with its decoded content) and against Content-MD5. Streamed
// bodies are checked by S3Body and the object service instead.
std::optional<s3::Error> CheckBufferedBody(S3Call& call);

// Content type, user metadata (x-amz-meta-*) and expected digests (Content-MD5, a signed
// payload hash, an x-amz-checksum-* header) for a PUT, POST ?uploads or UploadPart.
// InvalidDigest for a malformed Content-MD5, InvalidRequest for a malformed checksum or more
// than one.
s3::Outcome<objects::PutOptions> PutOptionsFor(const S3Call& call);
// Answers a PutObject or UploadPart whose x-amz-checksum-* header held with that header, as S3
// does.
void EchoChecksum(const S3Call& call, http::Response& response);
// The algorithm an x-amz-checksum-algorithm header names (CopyObject, CreateMultipartUpload);
// kNone without one, InvalidRequest for an unknown one.
s3::Outcome<objects::ChecksumAlgorithm> ChecksumAlgorithmAskedFor(const S3Call& call);
// An object's checksum as S3 shows it: base64, and "-<parts>" after a composite one.
std::string ShownChecksum(const objects::ObjectInfo& info);
// An algorithm as S3 names it in headers and answers: "CRC32C".
std::string S3ChecksumName(objects::ChecksumAlgorithm algorithm);
// The XML element that carries a checksum in S3's answers: "ChecksumCRC32C".
inline std::string ChecksumElement(objects::ChecksumAlgorithm algorithm) {
  return "Checksum" + S3ChecksumName(algorithm);
}

// The request's body, streamed (PutObject, UploadPart): decoded from aws-chunked when the
// request was signed so, with each chunk's signature checked. Read fills `piece` with the next
// piece (at most kPumpPieceBytes, api/body_pump.h, of a plain body; an empty piece at the end,
// after checking that the body had the length the client announced) and returns an error to
// stop, with S3's codes (SignatureDoesNotMatch for a bad chunk, IncompleteBody, EntityTooLarge,
// ...).
// A checksum sent in an aws-chunked body's trailer (STREAMING-UNSIGNED-PAYLOAD-TRAILER).
struct TrailingChecksum {
  objects::ChecksumAlgorithm algorithm = objects::ChecksumAlgorithm::kNone;  // kNone: none
  std::string name;   // "x-amz-checksum-crc32"
  std::string value;  // base64, as sent
  std::string raw;    // its bytes
};
// The checksum the request's x-amz-trailer announced, from the decoded body's trailers:
// IncompleteBody if it was not sent, InvalidRequest if malformed or of an unknown algorithm.
s3::Outcome<TrailingChecksum> TrailingChecksumOf(const S3Call& call,
                                                 const s3::AwsChunkedDecoder& decoder);

class S3Body {
 public:
  explicit S3Body(S3Call& call);
  ~S3Body();
  awaitable<std::optional<s3::Error>> Read(std::string& piece);
  // After the last Read: the checksum the body's trailer carried (algorithm kNone if none).
  const TrailingChecksum& trailing_checksum() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// A write (PUT, POST) whose x-amz-* headers ask for what this server does not do: a sharing ACL
// or grants (AccessControlListNotSupported; InvalidBucketAclWithObjectOwnership on
// CreateBucket), server-side encryption, tags, object lock, a website redirect, an append
// (InvalidRequest),
// a storage class but STANDARD (InvalidStorageClass): 400s naming the header; nullopt when there
// is none (s3_write_headers.cc).
std::optional<s3::Error> RefuseUnsupportedWriteHeaders(const S3Call& call);

// Whether the call reads (or deletes) a bucket configuration this server never has: ?versioning,
// ?acl, ?policy, ?cors, ?lifecycle, ?encryption, ?tagging and the like (s3_bucket_config.cc).
bool IsUnsetBucketConfiguration(const S3Call& call);
// Answers such a call as S3 answers for a bucket without that configuration: the error that
// names its absence (NoSuchBucketPolicy, 404, ...), or the empty document (versioning never
// enabled, no logging, ACLs disabled, public access blocked, ...), or the ACL that grants the
// owner (the project) alone; DELETE of one S3 can delete is 204.
awaitable<http::Response> AnswerUnsetBucketConfiguration(S3Call& call);

// The operations, one per S3 action, each answering one call.
awaitable<http::Response> ListBuckets(S3Call& call);
awaitable<http::Response> CreateBucket(S3Call& call);
awaitable<http::Response> DeleteBucket(S3Call& call);
awaitable<http::Response> HeadBucket(S3Call& call);
awaitable<http::Response> GetBucketLocation(S3Call& call);
awaitable<http::Response> ListObjects(S3Call& call);         // V1 and V2 (list-type=2)
awaitable<http::Response> ListObjectVersions(S3Call& call);  // each object's one version, null
awaitable<http::Response> DeleteObjects(S3Call& call);
awaitable<http::Response> PutObject(S3Call& call);
awaitable<http::Response> CopyObject(S3Call& call);
awaitable<http::Response> GetObject(S3Call& call, bool head);
awaitable<http::Response> DeleteObject(S3Call& call);
awaitable<http::Response> GetObjectTagging(S3Call& call);     // always an empty tag set
awaitable<http::Response> DeleteObjectTagging(S3Call& call);  // there are none: 204
awaitable<http::Response> GetObjectAcl(S3Call& call);         // the owner (the project) alone
// PutBucketAcl and PutObjectAcl: only the ACL there is, the owner's FULL_CONTROL, is taken (a
// canned private or bucket-owner-* ACL, or that one grant), changing nothing;
// AccessControlListNotSupported otherwise.
awaitable<http::Response> PutAcl(S3Call& call);
awaitable<http::Response> GetObjectAttributes(S3Call& call);
awaitable<http::Response> CreateMultipartUpload(S3Call& call);
awaitable<http::Response> UploadPart(S3Call& call);
awaitable<http::Response> CompleteMultipartUpload(S3Call& call);
awaitable<http::Response> AbortMultipartUpload(S3Call& call);
awaitable<http::Response> ListParts(S3Call& call);
awaitable<http::Response> ListMultipartUploads(S3Call& call);

// /v1/s3-keys: make, list and revoke access keys with an API token.
void AddS3KeyRoutes(Router& router, S3Api& api);

}  // namespace tf::api
