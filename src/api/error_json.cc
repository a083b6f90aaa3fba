#include "api/error_json.h"

namespace tf::api {

int HttpStatusFor(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return 200;
    case StatusCode::kInvalidArgument:
      return 400;
    case StatusCode::kUnauthenticated:
      return 401;
    case StatusCode::kPermissionDenied:
      return 403;
    case StatusCode::kNotFound:
      return 404;
    case StatusCode::kAlreadyExists:
      return 409;
    case StatusCode::kAborted:
      return 409;
    case StatusCode::kFailedPrecondition:
      return 412;
    case StatusCode::kResourceExhausted:
      return 429;
    case StatusCode::kInternal:
      return 500;
    case StatusCode::kUnavailable:
      return 503;
    case StatusCode::kDeadlineExceeded:
      return 504;
  }
  return 500;
}

nlohmann::json ErrorJson(const Status& status) {
  return {{"code", StatusCodeName(status.code())}, {"message", status.message()}};
}

}  // namespace tf::api
