// Times in cost reports: what `--since` / `--until` and the report's query accept.
#pragma once

#include <string_view>

#include "base/clock.h"
#include "base/status.h"

namespace tf::cost {

// An RFC 3339 date ("2026-11-30", midnight UTC) or date-time ("2026-11-30T12:00:00Z",
// "2026-11-30T12:00:00.5+01:00"), or milliseconds since 1970 ("1764460800000").
// kInvalidArgument naming `field` and the accepted forms otherwise.
Result<TimeMs> ParseReportTime(std::string_view text, std::string_view field);

// The first instant of the UTC month holding `now`: where a report starts by default.
TimeMs MonthStart(TimeMs now);

}  // namespace tf::cost
