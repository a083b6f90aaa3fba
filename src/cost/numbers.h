// Numbers, counts, times and money as the cost service reads and prints them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace tf::cost {

// A plain decimal number ("55.04", "-1.5e-3"), nothing around it. nullopt if `s` is anything
// else, including empty, "nan" and "inf".
std::optional<double> ParseNumber(std::string_view s);

// A count with an optional SI suffix, as people write model and data sizes: "70B" = 7e10,
// "1.5T" = 1.5e12, "300M", "8k", "175e9". Must be positive.
Result<double> ParseCount(std::string_view s);

// A UTC time as bills write it, to seconds since 1970: "2026-08-01T00:00:00Z",
// "2026-08-01T00:00:00.000Z", "2026-08-01 00:00:00", "2026-08-01T00:00Z", "2026-08-01".
// A numeric offset ("+02:00") is applied. nullopt if malformed or out of range.
std::optional<int64_t> ParseUtcTime(std::string_view s);

// "2026-08-01T00:00:00Z"
std::string FormatUtcTime(int64_t seconds);

// Days since 1970-01-01 of a proleptic Gregorian date (month 1-12).
int64_t DaysFromCivil(int64_t year, unsigned month, unsigned day);

// "$1,234.56"; negative amounts as "-$1.00".
std::string FormatUsd(double usd);
// "1,234,567" (rounded).
std::string FormatGrouped(double value);
// A number with `digits` decimals and no grouping: "3.14".
std::string FormatFixed(double value, int digits);
// "1.72M", "840.0k", "8.40e+23" style short forms for large counts.
std::string FormatShort(double value);

}  // namespace tf::cost
