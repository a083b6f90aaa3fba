// The S3-compatible API on the native API's port. The native API keeps /v1/, /healthz and
// /metrics; every other path is S3's, path-style: "/" the service, "/BUCKET", "/BUCKET/KEY".
// Here: the routing of an S3 request to its operation (by method, path and sub-resource), after
// its signature has checked out.
#include "api/s3_api.h"
#include "base/crypto.h"

// g++ 12 warns wrongly that the frame of a coroutine inlined into Dispatch and Handle is freed
// by a mismatched operator delete (Asio's frames are allocated and freed by their own pair).
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"

namespace tf::api {
namespace {

// S3 sub-resources this server does not implement: a request naming one is answered
// NotImplemented rather than mistaken for a plain object or bucket request.
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
    "versionId",
    "versioning",
    "versions",
    "website",
};

// How a request names its bucket: in the path ("/bucket/some/key", path style, always), or in
// its Host ("bucket.DOMAIN", virtual-hosted style, the default of most AWS SDKs but Python's)
// when the server was given DOMAIN. The key is everything after the bucket, slashes and dots
// included: it is a name, never a path.
class Addressing {
 public:
  explicit Addressing(std::string domain) : domain_(std::move(domain)) {}

  // The bucket a virtual-hosted request's Host names ("" if it names none): the labels before
  // ".DOMAIN", any port left out.
  std::string HostBucket(const http::Request& head) const {
    if (domain_.empty()) return "";
    std::string host = head.Header("Host");
    if (const size_t colon = host.rfind(':');
        colon != std::string::npos && host.find(']') == std::string::npos) {
      host.resize(colon);
    }
    for (char& c : host) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (host.size() <= domain_.size() + 1 || host[host.size() - domain_.size() - 1] != '.' ||
        host.compare(host.size() - domain_.size(), domain_.size(), domain_) != 0) {
      return "";
    }
    return host.substr(0, host.size() - domain_.size() - 1);
  }

  void Split(const http::Request& head, std::string* bucket, std::string* key) const {
    std::string_view p = head.path;
    if (!p.empty() && p.front() == '/') p.remove_prefix(1);
    if (std::string host_bucket = HostBucket(head); !host_bucket.empty()) {
      *bucket = std::move(host_bucket);
      *key = std::string(p);
      return;
    }
    const size_t slash = p.find('/');
    *bucket = std::string(p.substr(0, slash));
    *key = slash == std::string_view::npos ? std::string() : std::string(p.substr(slash + 1));
  }

  // Everything but the native API's paths is S3's.
  static bool Claims(const http::Request& head) {
    const std::string& p = head.path;
    return !(p == "/healthz" || p == "/metrics" || p == "/v1" || p.rfind("/v1/", 0) == 0);
  }
  // A virtual-hosted request is S3's whatever its path, since a key may be "v1/...".
  bool ClaimsFirst(const http::Request& head) const { return !HostBucket(head).empty(); }

  // PutObject and UploadPart read their bodies as they arrive.
  bool StreamsBody(const http::Request& head) const {
    if (head.method != "PUT") return false;
    std::string bucket, key;
    Split(head, &bucket, &key);
    return !key.empty();
  }

 private:
  std::string domain_;  // lower-case; "" for path style only
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

awaitable<http::Response> Dispatch(S3Call& call) {
  // Objects have no tags, which the AWS CLI asks about before it copies one in parts.
  if (call.request.method == "GET" && !call.key.empty() && call.Has("tagging")) {
    if (auto bad = CheckNames(call.bucket, call.key)) co_return S3ErrorResponse(call, *bad);
    co_return co_await GetObjectTagging(call);
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
  for (std::string_view sub : kUnsupported) {
    if (call.Has(std::string(sub).c_str())) {
      co_return S3ErrorResponse(
          call, s3::MakeError("NotImplemented", "The '" + std::string(sub) +
                                                    "' sub-resource is not supported by "
                                                    "this server"));
    }
  }
  const std::string& m = call.request.method;
  if (call.bucket.empty()) {
    if (m == "GET") co_return co_await ListBuckets(call);
    co_return MethodNotAllowed(call);
  }
  if (auto bad = CheckNames(call.bucket, call.key)) co_return S3ErrorResponse(call, *bad);
  if (call.key.empty()) {
    if (m == "GET" && call.Has("location")) co_return co_await GetBucketLocation(call);
    if (m == "GET" && call.Has("uploads")) co_return co_await ListMultipartUploads(call);
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

awaitable<http::Response> Handle(S3Api& api, const Addressing& addressing,
                                 http::Request& request) {
  S3Call call{api, request, "", "", RandomHex(8), {}};
  addressing.Split(request, &call.bucket, &call.key);
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

}  // namespace

Result<std::string> ValidateVirtualHostDomain(std::string_view domain) {
  std::string lower(domain);
  bool ok = !lower.empty() && lower.size() <= 253 && lower.front() != '.' &&
            lower.back() != '.' && lower.find("..") == std::string::npos;
  for (char& c : lower) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    ok = ok && ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.');
  }
  if (!ok) {
    return InvalidArgument("the S3 domain '" + std::string(domain.substr(0, 64)) +
                           "' is not a host name: letters, digits, '-' and dots between them, "
                           "no scheme or port (e.g. s3.example.com)");
  }
  return lower;
}

void AddS3Routes(Router& router, Services& services, const std::string& virtual_host_domain) {
  auto api = std::make_shared<S3Api>(services);
  auto addressing = std::make_shared<Addressing>(virtual_host_domain);
  AddS3KeyRoutes(router, *api);
  router.SetFallback(Fallback{
      Addressing::Claims,
      [addressing](const http::Request& head) { return addressing->StreamsBody(head); },
      [api, addressing](http::Request& request) -> awaitable<http::Response> {
        co_return co_await Handle(*api, *addressing, request);
      },
      "s3",
      [addressing](const http::Request& head) { return addressing->ClaimsFirst(head); }});
}

}  // namespace tf::api
