// SQS's errors as both of its wire protocols give them: the AWS JSON 1.0 protocol's
// {"__type": "com.amazonaws.sqs#QueueDoesNotExist", "message": ...} with the Query protocol's
// code in the x-amzn-query-error header (which the SDKs read for compatibility), and the Query
// protocol's <ErrorResponse> document.
#pragma once

#include <string>
#include <string_view>

#include "base/outcome.h"
#include "base/status.h"

namespace tf::sqs {

struct Error {
  int status = 400;
  std::string type;        // the JSON protocol's name: "QueueDoesNotExist"
  std::string query_code;  // the Query protocol's code: "AWS.SimpleQueueService.NonExistentQueue"
  std::string message;
  bool sender_fault = true;
};

// An error whose two names are the same ("InvalidParameterValue").
Error MakeError(std::string name, std::string message, int status = 400);

Error QueueDoesNotExist(std::string_view queue);
Error InvalidParameterValue(std::string message);
Error MissingParameter(std::string_view parameter);
Error ReceiptHandleIsInvalid(std::string message);
// What a store or service status means to an SQS client, where the caller has nothing more
// precise to say: kNotFound is a queue that does not exist, kInvalidArgument an invalid
// parameter value, an internal failure InternalError (500, which clients retry), ...
Error FromStatus(const Status& status);

// Either a value or an SQS error.
template <typename T>
using Outcome = ::tf::Outcome<T, Error>;

// The JSON protocol's body ({"__type": ..., "message": ...}) and its x-amzn-query-error header's
// value ("AWS.SimpleQueueService.NonExistentQueue;Sender").
std::string ErrorJson(const Error& error);
std::string QueryErrorHeader(const Error& error);
// The Query protocol's document.
std::string ErrorXml(const Error& error, std::string_view request_id);

}  // namespace tf::sqs
