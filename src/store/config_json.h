// QueueConfig <-> the JSON text kept in the queues table. Shared by both back ends.
#pragma once

#include <string>

#include "base/status.h"
#include "store/records.h"

namespace tf::store {

std::string QueueConfigToJson(const QueueConfig& config);
// kInternal if the text is not what QueueConfigToJson writes (the row was damaged).
Result<QueueConfig> QueueConfigFromJson(const std::string& json);

}  // namespace tf::store
