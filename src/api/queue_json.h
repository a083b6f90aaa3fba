// The native API's JSON for queues and messages (described in docs/api.md).
#pragma once

#include <optional>

#include "api/json_body.h"
#include "queues/message.h"
#include "queues/settings.h"
#include "store/records.h"

namespace tf::api {

Json QueueToJson(const store::Queue& queue, const store::QueueCounts* counts);
Json MessageToJson(const queues::Message& message);

// Reads the settings fields of a create or update request.
queues::QueueSettings ReadSettings(FieldReader& reader);
// Reads one entry of "messages" in a send request.
Result<queues::SendEntry> ReadSendEntry(const Json& entry, const std::string& where);

}  // namespace tf::api
