// The quantities a job spec writes with units: durations ("250ms", "30s", "90m", "1h30m") and
// memory sizes ("512Mi", "16Gi", "1.5G").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/clock.h"
#include "base/status.h"

namespace tf::jobs {

// One or more <number><unit> parts, units ms, s, m, h, d ("1h30m", "2.5s"), or a bare number
// of seconds ("3600", "0.5"). Numbers are decimal, with at most 18 digits, and not negative; a
// fraction of a millisecond is rounded up. kInvalidArgument (the message says what is
// expected) for anything else or a total past 10^15 ms.
Result<TimeMs> ParseDuration(std::string_view text);

// A decimal number of bytes ("1000", "1.5G"; no exponents) with an optional suffix: decimal
// k, M, G, T, P (10^3..10^15) or binary Ki, Mi, Gi, Ti, Pi (2^10..2^50), as Kubernetes
// writes them. A fraction of a byte is rounded up. kInvalidArgument for anything else or a
// size past 2^62 bytes.
Result<int64_t> ParseMemory(std::string_view text);

// The shortest exact form in one unit: 5400000 -> "90m", 1500 -> "1500ms", 0 -> "0s".
std::string FormatDuration(TimeMs ms);

// The largest binary unit that divides `bytes` exactly: 17179869184 -> "16Gi", 1000 -> "1000".
std::string FormatMemory(int64_t bytes);

}  // namespace tf::jobs
