#include "cost/metering/metering_time.h"

#include <cctype>
#include <ctime>
#include <string>

namespace tf::cost {
namespace {

// Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar (Howard Hinnant's
// days_from_civil).
int64_t DaysFromCivil(int64_t y, int m, int d) {
  y -= m <= 2;
  int64_t era = (y >= 0 ? y : y - 399) / 400;
  int64_t yoe = y - era * 400;
  int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

int DaysInMonth(int y, int m) {
  static const int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return m == 2 && leap ? 29 : kDays[m - 1];
}

// Reads `n` digits at `pos` into *out; false if they are not all digits.
bool Digits(std::string_view s, size_t pos, size_t n, int* out) {
  if (pos + n > s.size()) return false;
  int v = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
    v = v * 10 + (s[i] - '0');
  }
  *out = v;
  return true;
}

bool ParseRfc3339(std::string_view s, TimeMs* out) {
  int y, mo, d;
  if (!Digits(s, 0, 4, &y) || s.size() < 10 || s[4] != '-' || !Digits(s, 5, 2, &mo) ||
      s[7] != '-' || !Digits(s, 8, 2, &d)) {
    return false;
  }
  if (mo < 1 || mo > 12 || d < 1 || d > DaysInMonth(y, mo)) return false;
  TimeMs t = DaysFromCivil(y, mo, d) * kDayMs;
  if (s.size() == 10) {
    *out = t;
    return true;
  }
  int h, mi, sec;
  if (s.size() < 20 || (s[10] != 'T' && s[10] != 't') || !Digits(s, 11, 2, &h) || s[13] != ':' ||
      !Digits(s, 14, 2, &mi) || s[16] != ':' || !Digits(s, 17, 2, &sec)) {
    return false;
  }
  if (h > 23 || mi > 59 || sec > 60) return false;  // 60: a leap second, read as the next one
  t += h * kHourMs + mi * kMinuteMs + sec * kSecondMs;
  size_t pos = 19;
  if (s[pos] == '.') {
    ++pos;
    size_t start = pos;
    int64_t ms = 0, scale = 100;
    while (pos < s.size() && std::isdigit(static_cast<unsigned char>(s[pos]))) {
      ms += (s[pos] - '0') * scale;
      scale /= 10;
      ++pos;
    }
    if (pos == start) return false;
    t += ms;
  }
  if (pos == s.size()) return false;  // RFC 3339 needs the offset
  if ((s[pos] == 'Z' || s[pos] == 'z') && pos + 1 == s.size()) {
    *out = t;
    return true;
  }
  int oh, om;
  if ((s[pos] != '+' && s[pos] != '-') || pos + 6 != s.size() || !Digits(s, pos + 1, 2, &oh) ||
      s[pos + 3] != ':' || !Digits(s, pos + 4, 2, &om) || oh > 23 || om > 59) {
    return false;
  }
  TimeMs offset = oh * kHourMs + om * kMinuteMs;
  *out = s[pos] == '+' ? t - offset : t + offset;
  return true;
}

}  // namespace

Result<TimeMs> ParseReportTime(std::string_view text, std::string_view field) {
  bool all_digits = !text.empty() && text.size() <= 15;
  for (char c : text) all_digits = all_digits && std::isdigit(static_cast<unsigned char>(c));
  if (all_digits) return static_cast<TimeMs>(std::stoll(std::string(text)));
  TimeMs t = 0;
  if (ParseRfc3339(text, &t)) return t;
  return InvalidArgument(std::string(field) + ": \"" + std::string(text) +
                         "\" is not a time: give an RFC 3339 date or date-time (2026-11-30, "
                         "2026-11-30T12:00:00Z) or milliseconds since 1970");
}

TimeMs MonthStart(TimeMs now) {
  std::time_t secs = static_cast<std::time_t>(now / kSecondMs - (now % kSecondMs < 0 ? 1 : 0));
  std::tm tm{};
  gmtime_r(&secs, &tm);
  return DaysFromCivil(tm.tm_year + 1900, tm.tm_mon + 1, 1) * kDayMs;
}

}  // namespace tf::cost
