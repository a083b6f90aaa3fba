#include "s3/errors.h"

#include <array>

#include "s3/xml.h"

namespace tf::s3 {
namespace {

struct Code {
  std::string_view code;
  int status;
};

// The codes these routes answer with, and S3's status for each.
constexpr std::array kCodes = {
    Code{"AccessControlListNotSupported", 400},
    Code{"AccessDenied", 403},
    Code{"AuthorizationHeaderMalformed", 400},
    Code{"AuthorizationQueryParametersError", 400},
    Code{"BadDigest", 400},
    Code{"BucketAlreadyOwnedByYou", 409},
    Code{"BucketNotEmpty", 409},
    Code{"EntityTooLarge", 400},
    Code{"EntityTooSmall", 400},
    Code{"IncompleteBody", 400},
    Code{"InsufficientStorage", 507},
    Code{"InternalError", 500},
    Code{"InvalidAccessKeyId", 403},
    Code{"InvalidArgument", 400},
    Code{"InvalidBucketAclWithObjectOwnership", 400},
    Code{"InvalidBucketName", 400},
    Code{"InvalidDigest", 400},
    Code{"InvalidPart", 400},
    Code{"InvalidPartNumber", 416},
    Code{"InvalidPartOrder", 400},
    Code{"InvalidRange", 416},
    Code{"InvalidRequest", 400},
    Code{"InvalidStorageClass", 400},
    Code{"KeyTooLongError", 400},
    Code{"MalformedACLError", 400},
    Code{"MalformedXML", 400},
    Code{"MaxMessageLengthExceeded", 400},
    Code{"MethodNotAllowed", 405},
    Code{"MissingContentLength", 411},
    Code{"NoSuchBucket", 404},
    Code{"NoSuchBucketPolicy", 404},
    Code{"NoSuchCORSConfiguration", 404},
    Code{"NoSuchKey", 404},
    Code{"NoSuchLifecycleConfiguration", 404},
    Code{"NoSuchPublicAccessBlockConfiguration", 404},
    Code{"NoSuchTagSet", 404},
    Code{"NoSuchUpload", 404},
    Code{"NoSuchVersion", 404},
    Code{"NoSuchWebsiteConfiguration", 404},
    Code{"NotImplemented", 501},
    Code{"ObjectLockConfigurationNotFoundError", 404},
    Code{"OperationAborted", 409},
    Code{"OwnershipControlsNotFoundError", 404},
    Code{"PreconditionFailed", 412},
    Code{"ReplicationConfigurationNotFoundError", 404},
    Code{"RequestTimeTooSkewed", 403},
    Code{"RequestTimeout", 400},
    Code{"ServerSideEncryptionConfigurationNotFoundError", 404},
    Code{"ServiceUnavailable", 503},
    Code{"SignatureDoesNotMatch", 403},
    Code{"XAmzContentSHA256Mismatch", 400},
};

}  // namespace

Error MakeError(std::string_view code, std::string message) {
  int status = 500;
  for (const Code& c : kCodes) {
    if (c.code == code) status = c.status;
  }
  return Error{status, std::string(code), std::move(message), {}};
}

Error FromStatus(const Status& s) {
  switch (s.code()) {
    case StatusCode::kOk:
    case StatusCode::kInternal:
      return MakeError("InternalError", s.message());
    case StatusCode::kInvalidArgument:
      return MakeError("InvalidArgument", s.message());
    case StatusCode::kNotFound:
      return MakeError("NoSuchKey", s.message());
    case StatusCode::kAlreadyExists:
      return MakeError("BucketAlreadyOwnedByYou", s.message());
    case StatusCode::kFailedPrecondition:
      return MakeError("InvalidRequest", s.message());
    case StatusCode::kAborted:
      return MakeError("OperationAborted", s.message());
    case StatusCode::kUnavailable:
      return MakeError("ServiceUnavailable", s.message());
    case StatusCode::kResourceExhausted:
      return MakeError("InsufficientStorage", s.message());
    case StatusCode::kUnauthenticated:
    case StatusCode::kPermissionDenied:
      return MakeError("AccessDenied", s.message());
    case StatusCode::kDeadlineExceeded:
      return MakeError("RequestTimeout", s.message());
  }
  return MakeError("InternalError", s.message());
}

std::string ErrorBody(const Error& e, std::string_view resource, std::string_view request_id) {
  XmlWriter w;
  w.Open("Error");
  w.Element("Code", e.code);
  w.Element("Message", e.message);
  for (const auto& [name, value] : e.details) w.Element(name, value);
  w.Element("Resource", resource);
  w.Element("RequestId", request_id);
  return w.Finish();
}

}  // namespace tf::s3
