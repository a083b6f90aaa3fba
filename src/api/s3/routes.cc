// The S3-compatible API on the native API's port. The native API keeps /v1/, /healthz and
// /metrics; every other path is S3's, path-style: "/" the service, "/BUCKET", "/BUCKET/KEY";
// and with --s3-domain, every request to BUCKET.DOMAIN, whose whole path is the key.
// Here: the routing of an S3 request to its operation (by method, path and sub-resource), after
// its signature has checked out.
#include "api/s3/addressing.h"
#include "api/s3/s3_api.h"
#include "base/crypto.h"

namespace tf::api {
namespace {

// S3 sub-resources this server does not implement: a request naming one is answered
// NotImplemented rather than mistaken for a plain object or bucket request. (Reading a bucket's
// configuration, or its ACL, is answered as S3 answers where none is set: bucket_config.cc.)
constexpr std::string_view kUnsupported[] = {
    "accelerate",
    "acl",
    "analytics",
    "cors",
    "encryption",
    "inventory",
    "intelligent-tiering",
    "legal-hold",
    "lifecycle",
    "logging",
    "metrics",
    "notification",
    "object-lock",
    "ownershipControls",
    "policy",
    "policyStatus",
    "publicAccessBlock",
    "replication",
    "requestPayment",
    "restore",
    "retention",
    "select",
    "tagging",
    "torrent",
    "versioning",
    "website",
};

http::Response MethodNotAllowed(const S3Call& call) {
  return S3ErrorResponse(call, s3::MakeError("MethodNotAllowed",
                                             "The specified method is not allowed against this "
                                             "resource.")
                                   .With("Method", call.request.method)
                                   .With("ResourceType", call.bucket.empty() ? "SERVICE"
                                                         : call.key.empty()  ? "BUCKET"
                                                                             : "OBJECT"));
}

http::Response NotImplemented(const S3Call& call, std::string_view sub) {
  return S3ErrorResponse(
      call, s3::MakeError("NotImplemented", "The '" + std::string(sub) +
                                                "' sub-resource is not supported by this "
                                                "server"));
}

awaitable<http::Response> Dispatch(S3Call& call) {
  // Each object has one version, null; a request may name it, and no other.
  if (auto bad = CheckVersionId(call)) co_return S3ErrorResponse(call, *bad);
  // Objects have no tags, which the AWS CLI asks about before it copies one in parts.
  if (!call.key.empty() && call.Has("tagging") &&
      (call.request.method == "GET" || call.request.method == "DELETE")) {
    if (auto bad = CheckNames(call.bucket, call.key)) co_return S3ErrorResponse(call, *bad);
    // Two statements, not ?: (g++ 12 mishandles a co_await of a conditional's result; the
    // server crashed so).
    if (call.request.method == "GET") co_return co_await GetObjectTagging(call);
    co_return co_await DeleteObjectTagging(call);
  }
  if (call.Has("attributes")) {
    if (call.request.method != "GET" || call.key.empty()) {  // never a plain put or delete
      co_return S3ErrorResponse(
          call, s3::MakeError("NotImplemented",
                              "The 'attributes' sub-resource is supported only by a GET of an "
                              "object (GetObjectAttributes)"));
    }
    if (auto bad = CheckNames(call.bucket, call.key)) co_return S3ErrorResponse(call, *bad);
    co_return co_await GetObjectAttributes(call);
  }
  if (!call.bucket.empty() && IsUnsetBucketConfiguration(call)) {
    if (auto bad = CheckNames(call.bucket, call.key)) co_return S3ErrorResponse(call, *bad);
    co_return co_await AnswerUnsetBucketConfiguration(call);
  }
  if (call.Has("acl") && !call.bucket.empty() &&
      ((call.request.method == "GET" && !call.key.empty()) || call.request.method == "PUT")) {
    if (auto bad = CheckNames(call.bucket, call.key)) co_return S3ErrorResponse(call, *bad);
    if (call.request.method == "GET") co_return co_await GetObjectAcl(call);
    co_return co_await PutAcl(call);
  }
  for (std::string_view sub : kUnsupported) {
    if (call.Has(std::string(sub).c_str())) co_return NotImplemented(call, sub);
  }
  // Versions are listed (GET of a bucket), and nothing else.
  if (call.Has("versions") && !(call.request.method == "GET" && call.key.empty())) {
    co_return NotImplemented(call, "versions");
  }
  const std::string& m = call.request.method;
  if (m == "PUT" || m == "POST") {
    if (auto refused = RefuseUnsupportedWriteHeaders(call)) {
      co_return S3ErrorResponse(call, *refused);
    }
  }
  if (call.bucket.empty()) {
    if (m == "GET") co_return co_await ListBuckets(call);
    co_return MethodNotAllowed(call);
  }
  if (auto bad = CheckNames(call.bucket, call.key)) co_return S3ErrorResponse(call, *bad);
  if (call.key.empty()) {
    if (m == "GET" && call.Has("location")) co_return co_await GetBucketLocation(call);
    if (m == "GET" && call.Has("uploads")) co_return co_await ListMultipartUploads(call);
    if (m == "GET" && call.Has("versions")) co_return co_await ListObjectVersions(call);
    if (m == "GET") co_return co_await ListObjects(call);
    if (m == "PUT") co_return co_await CreateBucket(call);
    if (m == "DELETE") co_return co_await DeleteBucket(call);
    if (m == "HEAD") co_return co_await HeadBucket(call);
    if (m == "POST" && call.Has("delete")) co_return co_await DeleteObjects(call);
    co_return MethodNotAllowed(call);
  }
  const bool upload = call.Has("uploadId");
  if (m == "PUT" && (upload || call.Has("partNumber"))) co_return co_await UploadPart(call);
  if (m == "PUT" && !call.request.Header("x-amz-copy-source").empty()) {
    co_return co_await CopyObject(call);
  }
  if (m == "PUT") co_return co_await PutObject(call);
  if (m == "GET" && upload) co_return co_await ListParts(call);
  if (m == "GET") co_return co_await GetObject(call, /*head=*/false);
  if (m == "HEAD") co_return co_await GetObject(call, /*head=*/true);
  if (m == "DELETE" && upload) co_return co_await AbortMultipartUpload(call);
  if (m == "DELETE") co_return co_await DeleteObject(call);
  if (m == "POST" && call.Has("uploads")) co_return co_await CreateMultipartUpload(call);
  if (m == "POST" && upload) co_return co_await CompleteMultipartUpload(call);
  co_return MethodNotAllowed(call);
}

awaitable<http::Response> Handle(S3Api& api, const Addressing& addressing, http::Request& request) {
  S3Call call{api, request, "", "", RandomHex(8), {}};
  addressing.Split(request, &call.bucket, &call.key);
  call.virtual_hosted = !addressing.HostBucket(request).empty();
  Services& s = api.services;
  auto verified = co_await RunBlocking(s.pool, [&] {
    return s3::VerifyRequest(request, s.clock.Now(),
                             [&](const std::string& id) { return api.keys.FindActive(id); });
  });
  http::Response response;
  if (!verified.ok()) {
    response = S3ErrorResponse(call, verified.error());
  } else {
    call.signer = std::move(*verified);
    if (auto bad = CheckBufferedBody(call)) {
      response = S3ErrorResponse(call, *bad);
    } else {
      response = co_await Dispatch(call);
    }
  }
  response.headers.emplace_back("x-amz-request-id", call.request_id);
  co_return response;
}

// The server's own refusals in S3's form: a body over the limit is S3's
// MaxMessageLengthExceeded (400), a handler past its deadline or a server shutting down
// ServiceUnavailable (503, which clients retry), a handler that failed InternalError (500).
http::Response RefusalInXml(const Addressing& addressing, const http::Request& head, int status,
                            std::string_view message) {
  std::string bucket, key;
  addressing.Split(head, &bucket, &key);
  const std::string request_id = RandomHex(8);
  s3::Error error =
      status == 413   ? s3::MakeError("MaxMessageLengthExceeded",
                                      "Your request was too big: " + std::string(message))
      : status == 503 ? s3::MakeError("ServiceUnavailable",
                                      "Please reduce your request rate: " + std::string(message))
                      : s3::MakeError("InternalError",
                                      "We encountered an internal error. Please "
                                      "try again: " +
                                          std::string(message));
  http::Response response =
      XmlResponse(s3::ErrorBody(error, S3Resource(bucket, key), request_id), error.status);
  if (head.method == "HEAD") response.content_length = 0;
  response.headers.emplace_back("x-amz-request-id", request_id);
  return response;
}

}  // namespace

void AddS3Routes(Router& router, Services& services, const std::string& virtual_host_domain) {
  auto api = std::make_shared<S3Api>(services);
  auto addressing = std::make_shared<Addressing>(virtual_host_domain);
  AddS3KeyRoutes(router, *api);
  router.AddFallback(Fallback{
      Addressing::Claims,
      [addressing](const http::Request& head) { return addressing->StreamsBody(head); },
      [api, addressing](http::Request& request) -> awaitable<http::Response> {
        co_return co_await Handle(*api, *addressing, request);
      },
      "s3", [addressing](const http::Request& head) { return addressing->ClaimsFirst(head); },
      [addressing](const http::Request& head, int status, std::string_view message) {
        return RefusalInXml(*addressing, head, status, message);
      }});
}

}  // namespace tf::api
