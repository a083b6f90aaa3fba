#include "sqs/errors.h"

#include <nlohmann/json.hpp>

#include "s3/xml.h"

namespace tf::sqs {

Error MakeError(std::string name, std::string message, int status) {
  Error e;
  e.status = status;
  e.type = name;
  e.query_code = std::move(name);
  e.message = std::move(message);
  e.sender_fault = status < 500;
  return e;
}

Error QueueDoesNotExist(std::string_view queue) {
  Error e = MakeError("QueueDoesNotExist",
                      "The specified queue does not exist: '" + std::string(queue) + "'");
  e.query_code = "AWS.SimpleQueueService.NonExistentQueue";
  return e;
}

Error InvalidParameterValue(std::string message) {
  return MakeError("InvalidParameterValue", std::move(message));
}

Error MissingParameter(std::string_view parameter) {
  return MakeError("MissingParameter",
                   "The request must contain the parameter " + std::string(parameter) + ".");
}

Error ReceiptHandleIsInvalid(std::string message) {
  return MakeError("ReceiptHandleIsInvalid", std::move(message));
}

Error FromStatus(const Status& status) {
  switch (status.code()) {
    case StatusCode::kNotFound: {
      Error e = QueueDoesNotExist("");
      e.message = "The specified queue does not exist: " + status.message();
      return e;
    }
    case StatusCode::kInvalidArgument:
      return InvalidParameterValue(status.message());
    case StatusCode::kAlreadyExists: {
      Error e = MakeError("QueueNameExists", status.message());
      e.query_code = "QueueAlreadyExists";
      return e;
    }
    case StatusCode::kFailedPrecondition:
    case StatusCode::kAborted:
      return MakeError("InvalidParameterValue", status.message());
    case StatusCode::kPermissionDenied:
      return MakeError("AccessDenied", status.message(), 403);
    case StatusCode::kUnauthenticated:
      return MakeError("InvalidClientTokenId", status.message(), 403);
    case StatusCode::kResourceExhausted:
      return MakeError("RequestThrottled", status.message(), 400);
    case StatusCode::kUnavailable:
    case StatusCode::kDeadlineExceeded:
      return MakeError("ServiceUnavailable", status.message(), 503);
    default:
      return MakeError("InternalError", status.message(), 500);
  }
}

std::string ErrorJson(const Error& error) {
  nlohmann::json j = {{"__type", "com.amazonaws.sqs#" + error.type}, {"message", error.message}};
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string QueryErrorHeader(const Error& error) {
  return error.query_code + (error.sender_fault ? ";Sender" : ";Receiver");
}

std::string ErrorXml(const Error& error, std::string_view request_id) {
  s3::XmlWriter w;
  w.Open("ErrorResponse", "http://queue.amazonaws.com/doc/2012-11-05/");
  w.Open("Error");
  w.Element("Type", error.sender_fault ? "Sender" : "Receiver");
  w.Element("Code", error.query_code);
  w.Element("Message", error.message);
  w.Element("Detail", "");
  w.Close();
  w.Element("RequestId", request_id);
  return w.Finish();
}

}  // namespace tf::sqs
