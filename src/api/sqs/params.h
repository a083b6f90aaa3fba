// Reading an SQS action's parameters from the JSON protocol's request object, where the Query
// protocol's values (all strings) arrive in the same shapes: numbers and booleans are taken from
// JSON numbers and booleans or from their text. Errors name the parameter as SQS does.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "queues/message.h"
#include "sqs/errors.h"

namespace tf::api::sqs_params {

using Json = nlohmann::json;

// Returns the member, or null when absent (or JSON null).
const Json* Member(const Json& params, const char* name);

sqs::Outcome<std::optional<std::string>> String(const Json& params, const char* name);
sqs::Outcome<std::string> RequiredString(const Json& params, const char* name);
sqs::Outcome<std::optional<int64_t>> Integer(const Json& params, const char* name);
sqs::Outcome<std::vector<std::string>> Strings(const Json& params, const char* name);
sqs::Outcome<std::map<std::string, std::string>> StringMap(const Json& params, const char* name);

// MessageAttributes: {NAME: {DataType, StringValue | BinaryValue}}; checked by the queue service.
sqs::Outcome<queues::MessageAttributes> MessageAttributes(const Json& params, const char* name);

// A batch's Entries: 1 to 10 objects with distinct Ids of 1-80 [A-Za-z0-9_-] (SQS's errors
// EmptyBatchRequest, TooManyEntriesInBatchRequest, InvalidBatchEntryId,
// BatchEntryIdsNotDistinct).
sqs::Outcome<std::vector<const Json*>> BatchEntries(const Json& params);

}  // namespace tf::api::sqs_params
