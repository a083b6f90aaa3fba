// S3's conditional requests: the If-* headers of GET and HEAD, the x-amz-copy-source-if-*
// headers of CopyObject and UploadPartCopy, and If-None-Match / If-Match on PutObject.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "api/s3/s3_api.h"
#include "objects/object_service.h"
#include "s3/errors.h"

namespace tf::api {

// Whether an If-Match / If-None-Match list ("*" or quoted ETags, comma-separated) names `etag`.
bool EtagListMatches(std::string_view list, const std::string& etag);

// The four conditions on an object as it is, from one family of headers.
struct ObjectConditions {
  std::string if_match, if_none_match, if_modified_since, if_unmodified_since;

  // GET and HEAD: If-Match, If-None-Match, If-Modified-Since, If-Unmodified-Since.
  static ObjectConditions OfRequest(const http::Request& request);
  // CopyObject and UploadPartCopy: the same, prefixed x-amz-copy-source-.
  static ObjectConditions OfCopySource(const http::Request& request);
};

// What the conditions say of `info`, in RFC 9110's order (which S3 follows): If-Match, else
// If-Unmodified-Since, may fail the request; then If-None-Match, else If-Modified-Since, may
// find the object not modified. A date that does not parse is ignored, as the RFC says.
struct ConditionOutcome {
  enum Kind { kHolds, kFailed, kNotModified } kind = kHolds;
  std::string condition;  // the header that decided, when not kHolds
};
ConditionOutcome EvaluateConditions(const ObjectConditions& c, const objects::ObjectInfo& info);

// S3's error for a condition that failed (412 PreconditionFailed, naming it).
s3::Error PreconditionFailed(const std::string& condition);
// The same for the x-amz-copy-source-if-* header that decided `outcome`: for a copy, an object
// found not modified is a failed condition too.
s3::Error CopySourcePreconditionFailed(const ConditionOutcome& outcome);

// The condition of a PutObject: If-None-Match: * (no object may have the key) and If-Match:
// "ETAG" (the object there must have that ETag). An error for forms S3 does not take on a
// write (If-None-Match other than *, several ETags).
s3::Outcome<store::PutCondition> PutConditionOf(const http::Request& request);

// The condition of a DeleteObject: If-Match: "ETAG", or * (the object must exist); "" when
// there is none. NotImplemented for several ETags, and for If-None-Match and the conditions of
// S3 Express's directory buckets (x-amz-if-match-last-modified-time, -size).
s3::Outcome<std::string> DeleteConditionOf(const http::Request& request);

// S3's error for a put whose condition did not hold at commit: NoSuchKey for If-Match on a
// missing object, PreconditionFailed otherwise.
s3::Error PutConditionError(const Status& failed, const store::PutCondition& condition);

}  // namespace tf::api
