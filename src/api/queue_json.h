// The native API's JSON for queues and messages (described in docs/api.md).
#pragma once

#include <optional>

#include "api/json_body.h"
#include "queues/message.h"
#include "queues/queue_service.h"
#include "queues/settings.h"
#include "store/records.h"

namespace tf::api {

Json QueueToJson(const store::Queue& queue, const store::QueueCounts* counts);
Json MessageToJson(const queues::Message& message);

// The bodies of the hot answers, written straight as text (api/json_out.h); each is what
// JsonResponse would print for the same Json, newline included.
// {"messages": [MessageToJson(m), ...]}
std::string ReceivedJson(const std::vector<queues::Message>& messages);
// {"results": [{"duplicate", "md5_of_body", "message_id", "ok": true, "sequence"} |
//              {"error": {...}, "ok": false}, ...]}
std::string SentJson(const std::vector<queues::SendOutcome>& outcomes);
// {"results": [{"ok": true} | {"error": {...}, "ok": false}, ...]}
std::string BatchResultsJson(const std::vector<Status>& statuses);

// Reads the settings fields of a create or update request.
queues::QueueSettings ReadSettings(FieldReader& reader);
// Reads one entry of "messages" in a send request.
Result<queues::SendEntry> ReadSendEntry(const Json& entry, const std::string& where);

}  // namespace tf::api
