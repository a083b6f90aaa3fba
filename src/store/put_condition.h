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

// OK if a delete's `if_match` ("" for no condition, "*" for any ETag) holds of key `key`, whose
// object has ETag `current_etag`; kFailedPrecondition saying which ETag it has otherwise.
Status DeleteConditionHolds(const std::string& key, const std::string& if_match,
                            const std::string& current_etag);

}  // namespace tf::store
