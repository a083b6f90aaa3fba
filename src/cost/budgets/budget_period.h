// Budget periods: which stretch of time a budget's spend is counted over, in UTC.
//
//   monthly  calendar months: from the 1st 00:00 to the 1st of the next month
//   weekly   from Monday 00:00 to the next Monday 00:00
//   daily    from 00:00 to the next 00:00
//   Nd       N days (1..366) at a time, counted from a start date: [start + k·N days,
//            start + (k+1)·N days) for the k that holds the time (times before the start fall
//            in the periods before it, so every time has a period)
//
// A period includes its start and excludes its end; a time on a boundary opens the new period.
#pragma once

#include <string>
#include <string_view>

#include "base/clock.h"
#include "base/status.h"

namespace tf::cost {

enum class PeriodKind { kMonthly, kWeekly, kDaily, kDays };

struct PeriodSpec {
  PeriodKind kind = PeriodKind::kMonthly;
  int days = 0;      // kDays only: the length in days
  TimeMs start = 0;  // kDays only: 00:00 UTC of the first period's day

  bool operator==(const PeriodSpec&) const = default;
};

struct PeriodBounds {
  TimeMs start = 0;
  TimeMs end = 0;  // exclusive

  TimeMs length() const { return end - start; }
  bool operator==(const PeriodBounds&) const = default;
};

inline constexpr int kMaxPeriodDays = 366;

// "monthly", "weekly", "daily" or "<N>d" (1 <= N <= kMaxPeriodDays); `start` stays 0.
// kInvalidArgument naming the choices otherwise.
Result<PeriodSpec> ParsePeriod(std::string_view text);
// The inverse of ParsePeriod: "monthly", "30d", ...
std::string PeriodName(const PeriodSpec& period);

// The period that holds `t`.
PeriodBounds PeriodAt(const PeriodSpec& period, TimeMs t);

// "2026-11-30" -> 00:00 UTC of that day. kInvalidArgument for anything else (an impossible
// date such as 2026-02-30 included).
Result<TimeMs> ParseUtcDate(std::string_view text);
// 00:00 UTC of the day of `t` as "2026-11-30".
std::string FormatUtcDate(TimeMs t);
// 00:00 UTC of the day that holds `t`.
TimeMs StartOfUtcDay(TimeMs t);

}  // namespace tf::cost
