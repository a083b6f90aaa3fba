#include "cost/budgets/budget_period.h"

#include <charconv>
#include <cstdio>

#include "cost/numbers.h"

namespace tf::cost {
namespace {

struct CivilDate {
  int64_t year;
  unsigned month;  // 1-12
  unsigned day;    // 1-31
};

// The proleptic Gregorian date of a day count since 1970-01-01 (the inverse of DaysFromCivil),
// by the usual era arithmetic: 400-year eras of 146097 days, years starting in March.
CivilDate CivilFromDays(int64_t days) {
  days += 719468;
  const int64_t era = (days >= 0 ? days : days - 146096) / 146097;
  const int64_t day_of_era = days - era * 146097;
  const int64_t year_of_era =
      (day_of_era - day_of_era / 1460 + day_of_era / 36524 - day_of_era / 146096) / 365;
  const int64_t day_of_year =
      day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
  const int64_t shifted_month = (5 * day_of_year + 2) / 153;  // 0 = March
  const auto day = static_cast<unsigned>(day_of_year - (153 * shifted_month + 2) / 5 + 1);
  const auto month =
      static_cast<unsigned>(shifted_month < 10 ? shifted_month + 3 : shifted_month - 9);
  return {year_of_era + era * 400 + (month <= 2 ? 1 : 0), month, day};
}

int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

}  // namespace

Result<PeriodSpec> ParsePeriod(std::string_view text) {
  PeriodSpec out;
  if (text == "monthly") return out;
  if (text == "weekly") {
    out.kind = PeriodKind::kWeekly;
    return out;
  }
  if (text == "daily") {
    out.kind = PeriodKind::kDaily;
    return out;
  }
  if (text.size() >= 2 && text.back() == 'd') {
    std::string_view digits = text.substr(0, text.size() - 1);
    int days = 0;
    auto [end, err] = std::from_chars(digits.data(), digits.data() + digits.size(), days);
    if (err == std::errc() && end == digits.data() + digits.size() && days >= 1 &&
        days <= kMaxPeriodDays) {
      out.kind = PeriodKind::kDays;
      out.days = days;
      return out;
    }
  }
  return InvalidArgument("period must be monthly, weekly, daily or a number of days from 1 to " +
                         std::to_string(kMaxPeriodDays) + " such as 30d, got '" +
                         std::string(text) + "'");
}

std::string PeriodName(const PeriodSpec& period) {
  switch (period.kind) {
    case PeriodKind::kMonthly:
      return "monthly";
    case PeriodKind::kWeekly:
      return "weekly";
    case PeriodKind::kDaily:
      return "daily";
    case PeriodKind::kDays:
      return std::to_string(period.days) + "d";
  }
  return "monthly";
}

TimeMs StartOfUtcDay(TimeMs t) { return FloorDiv(t, kDayMs) * kDayMs; }

PeriodBounds PeriodAt(const PeriodSpec& period, TimeMs t) {
  const int64_t day = FloorDiv(t, kDayMs);
  switch (period.kind) {
    case PeriodKind::kMonthly: {
      CivilDate d = CivilFromDays(day);
      int64_t next_year = d.month == 12 ? d.year + 1 : d.year;
      unsigned next_month = d.month == 12 ? 1 : d.month + 1;
      return {DaysFromCivil(d.year, d.month, 1) * kDayMs,
              DaysFromCivil(next_year, next_month, 1) * kDayMs};
    }
    case PeriodKind::kWeekly: {
      // 1970-01-01 was a Thursday: (day + 3) mod 7 counts days since Monday.
      int64_t monday = day - (((day + 3) % 7) + 7) % 7;
      return {monday * kDayMs, (monday + 7) * kDayMs};
    }
    case PeriodKind::kDaily:
      return {day * kDayMs, (day + 1) * kDayMs};
    case PeriodKind::kDays: {
      const TimeMs length = static_cast<TimeMs>(period.days > 0 ? period.days : 1) * kDayMs;
      const TimeMs start = period.start + FloorDiv(t - period.start, length) * length;
      return {start, start + length};
    }
  }
  return {day * kDayMs, (day + 1) * kDayMs};
}

Result<TimeMs> ParseUtcDate(std::string_view text) {
  auto bad = [&] {
    return InvalidArgument("a date must be YYYY-MM-DD (UTC), got '" + std::string(text) + "'");
  };
  if (text.size() != 10 || text[4] != '-' || text[7] != '-') return bad();
  auto number = [&](size_t from, size_t len, int& out) {
    auto [end, err] = std::from_chars(text.data() + from, text.data() + from + len, out);
    return err == std::errc() && end == text.data() + from + len;
  };
  int year = 0, month = 0, day = 0;
  if (!number(0, 4, year) || !number(5, 2, month) || !number(8, 2, day)) return bad();
  if (year < 1970 || month < 1 || month > 12 || day < 1 || day > 31) return bad();
  const int64_t days =
      DaysFromCivil(year, static_cast<unsigned>(month), static_cast<unsigned>(day));
  CivilDate back = CivilFromDays(days);
  if (back.month != static_cast<unsigned>(month) || back.day != static_cast<unsigned>(day)) {
    return InvalidArgument("there is no such day as " + std::string(text));
  }
  return days * kDayMs;
}

std::string FormatUtcDate(TimeMs t) {
  CivilDate d = CivilFromDays(FloorDiv(t, kDayMs));
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04lld-%02u-%02u", static_cast<long long>(d.year), d.month,
                d.day);
  return buf;
}

}  // namespace tf::cost
