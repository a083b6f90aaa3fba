// When a join token may still register a node: one rule for both back ends.
#pragma once

#include <cstdint>
#include <string>

#include "base/clock.h"
#include "base/status.h"

namespace tf::store {

// OK, or kFailedPrecondition saying why join token `id` cannot register a node at `now`.
Status JoinTokenUsable(const std::string& id, bool revoked, TimeMs expires_at, int64_t max_uses,
                       int64_t uses, TimeMs now);

}  // namespace tf::store
