// How an S3 request names its bucket and key: in the path ("/bucket/some/key", path style,
// always), or in its Host ("bucket.DOMAIN", virtual-hosted style, the default of most AWS SDKs
// but Python's) when the server was given DOMAIN (--s3-domain). The key is everything after the
// bucket, slashes and dots included: it is a name, never a path.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"
#include "http/http.h"

namespace tf::api {

class Addressing {
 public:
  // `domain`: lower-case, as ValidateVirtualHostDomain gives it; "" for path style only.
  explicit Addressing(std::string domain) : domain_(std::move(domain)) {}

  // The bucket a virtual-hosted request's Host names ("" if it names none): the labels before
  // ".DOMAIN", in lower case, any port and a final dot left out.
  std::string HostBucket(const http::Request& head) const;
  // The request's bucket ("" for the service) and key ("" for the bucket itself).
  void Split(const http::Request& head, std::string* bucket, std::string* key) const;

  // Everything but the native API's paths (/v1/, /healthz, /metrics) is S3's.
  static bool Claims(const http::Request& head);
  // A virtual-hosted request is S3's whatever its path, since a key may be "v1/...".
  bool ClaimsFirst(const http::Request& head) const { return !HostBucket(head).empty(); }
  // PutObject and UploadPart read their bodies as they arrive; a PUT of an object's ACL, tags,
  // retention or legal hold (?acl, ?tagging, ?retention, ?legal-hold) is read whole.
  bool StreamsBody(const http::Request& head) const;

 private:
  std::string domain_;
};

// A domain for S3's virtual-hosted requests ("s3.example.com"), made lower-case:
// kInvalidArgument unless it is a host name (labels of letters, digits and inner '-', joined by
// dots; no scheme, port or IP address).
Result<std::string> ValidateVirtualHostDomain(std::string_view domain);

}  // namespace tf::api
