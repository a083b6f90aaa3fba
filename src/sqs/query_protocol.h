// SQS's Query protocol (form-encoded "Action=SendMessage&QueueUrl=...", XML answers: what older
// SDKs and the AWS CLI v1/v2 of before 2024 send) as the JSON protocol's shapes, so that one set
// of actions serves both (api/sqs/).
//
// Requests: "Attribute.1.Name=X&Attribute.1.Value=Y" becomes {"Attributes": {"X": "Y"}}, and
// likewise MessageAttribute.N (whose Value has StringValue, BinaryValue and DataType),
// MessageSystemAttribute.N and Tag.N (Key, Value); the flattened lists AttributeName.N,
// MessageAttributeName.N, MessageSystemAttributeName.N and TagKey.N become arrays named in the
// plural; *BatchRequestEntry.N becomes "Entries". Every value stays a string: the actions read
// numbers from strings too.
// Results: the JSON protocol's result object written back as XML under <ActionResult>, with the
// same renamings the other way.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "base/status.h"

namespace tf::sqs {

struct QueryRequest {
  std::string action;     // "SendMessage"
  std::string version;    // "2012-11-05" (or "" when not given)
  nlohmann::json params;  // the JSON protocol's request object
};

// `params`: the form's (or query string's) names and values, decoded. kInvalidArgument names a
// parameter that cannot be placed ("Attribute.x.Name").
Result<QueryRequest> FromQueryParams(const std::map<std::string, std::string>& params);

// The <ActionResponse> document for `result`: under <ActionResult>, which actions that answer
// nothing (DeleteQueue, ...) leave out.
std::string ToQueryXml(std::string_view action, const nlohmann::json& result,
                       std::string_view request_id);

}  // namespace tf::sqs
