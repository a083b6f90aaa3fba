// The check of a PutCondition (store/records.h), shared by the SQLite and PostgreSQL stores,
// which each run it in the put's transaction.
#pragma once

#include <optional>
#include <string>

#include "base/status.h"
#include "store/records.h"

namespace tf::store {

// OK if `condition` holds of key `key`, whose object now has ETag `current_etag` (nullopt when
// there is none); kFailedPrecondition saying what did not hold otherwise.
Status PutConditionHolds(const std::string& key, const PutCondition& condition,
                         const std::optional<std::string>& current_etag);

}  // namespace tf::store
