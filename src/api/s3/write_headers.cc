// Headers of a write that ask for what this server does not do: a public or shared ACL,
// server-side encryption, a storage class other than STANDARD, object tags, object lock, a
// website redirect, an append. Taking the write and dropping such a header would leave the client
// believing that its object is public, encrypted, tagged or locked; the write is refused and
// the answer says which header and why. Headers that ask for what the server does anyway
// (x-amz-acl: private, x-amz-storage-class: STANDARD, which s3cmd sends on every upload) pass.
//
// The refusals are 400s, as S3's own are for a bucket without the feature: a 5xx would have
// clients retry (s3cmd for 45 s a file), and InvalidArgument makes s3cmd sign again with
// Signature Version 2.
#include <algorithm>
#include <array>

#include "api/s3/s3_api.h"
#include "base/ascii.h"

namespace tf::api {
namespace {

// Canned ACLs that grant nothing beyond the owner: in a project the bucket's owner and the
// object's are the same.
constexpr std::array<std::string_view, 3> kOwnerOnlyAcls = {"private", "bucket-owner-full-control",
                                                            "bucket-owner-read"};
constexpr std::array<std::string_view, 5> kSharingAcls = {"public-read", "public-read-write",
                                                          "authenticated-read", "aws-exec-read",
                                                          "log-delivery-write"};

constexpr std::string_view kNoAcls =
    "this server has no ACLs; buckets and objects are reachable only with their project's "
    "access keys";

// What S3 answers for an ACL on a bucket whose ACLs are disabled (BucketOwnerEnforced).
s3::Error NoAcls(const S3Call& call, const std::string& header) {
  if (call.key.empty() && !call.Has("acl")) {  // CreateBucket
    return s3::MakeError("InvalidBucketAclWithObjectOwnership",
                         "Bucket cannot have ACLs set with ObjectOwnership's BucketOwnerEnforced "
                         "setting: " +
                             header + " is not supported: " + std::string(kNoAcls));
  }
  return s3::MakeError(
      "AccessControlListNotSupported",
      "The bucket does not allow ACLs: " + header + " is not supported: " + std::string(kNoAcls));
}

s3::Error NotDone(const std::string& header, const std::string& why) {
  return s3::MakeError("InvalidRequest", header + " is not supported: " + why);
}

std::optional<s3::Error> CheckAcl(const S3Call& call, std::string_view value) {
  const std::string shown = "x-amz-acl: " + std::string(value.substr(0, 64));
  if (std::find(kOwnerOnlyAcls.begin(), kOwnerOnlyAcls.end(), value) != kOwnerOnlyAcls.end()) {
    return std::nullopt;
  }
  if (std::find(kSharingAcls.begin(), kSharingAcls.end(), value) != kSharingAcls.end()) {
    s3::Error e = NoAcls(call, shown);
    e.message += " (send private, or leave the header out)";
    return e;
  }
  return s3::MakeError("InvalidArgument", "unknown canned ACL in " + shown);
}

}  // namespace

std::optional<s3::Error> RefuseUnsupportedWriteHeaders(const S3Call& call) {
  for (const auto& [raw_name, value] : call.request.headers) {
    const std::string name = AsciiLower(raw_name);
    if (!name.starts_with("x-amz-")) continue;
    if (name == "x-amz-acl") {
      if (auto bad = CheckAcl(call, value)) return bad;
    } else if (name.starts_with("x-amz-grant-")) {
      return NoAcls(call, name);
    } else if (name.starts_with("x-amz-server-side-encryption") ||
               name.starts_with("x-amz-copy-source-server-side-encryption")) {
      return NotDone(name, "this server does not encrypt content; it is stored as sent");
    } else if (name == "x-amz-storage-class" && value != "STANDARD") {
      return s3::MakeError("InvalidStorageClass",
                           "The storage class you specified is not valid: this server keeps "
                           "everything as STANDARD, not '" +
                               value.substr(0, 64) + "'");
    } else if (name == "x-amz-tagging" && !value.empty()) {
      return NotDone(name, "objects cannot have tags on this server");
    } else if (name.starts_with("x-amz-object-lock-")) {
      return s3::MakeError("InvalidRequest", "Bucket is missing Object Lock Configuration (" +
                                                 name + "): this server has no object lock");
    } else if (name == "x-amz-bucket-object-lock-enabled" && AsciiLower(value) == "true") {
      return NotDone(name, "this server has no object lock");
    } else if (name == "x-amz-website-redirect-location") {
      return NotDone(name, "this server does not host websites");
    } else if (name == "x-amz-write-offset-bytes") {
      return NotDone(name, "objects cannot be appended to; a PUT replaces the whole object");
    }
  }
  return std::nullopt;
}

}  // namespace tf::api
