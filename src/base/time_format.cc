#include "base/time_format.h"

#include <cstdio>
#include <ctime>

namespace tf {

namespace {

// The snprintf form, for what AppendTime does not format itself (times before 1970 and after
// 9999).
std::string FormatTimeSlowly(TimeMs t) {
  std::time_t secs = static_cast<std::time_t>(t / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];  // room for any int year, so that GCC sees no truncation
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<int>(t % 1000));
  return buf;
}

// Two digits of `v` (0-99) at `p`.
void Put2(char* p, int v) {
  p[0] = static_cast<char>('0' + v / 10);
  p[1] = static_cast<char>('0' + v % 10);
}

}  // namespace

void AppendTime(std::string& out, TimeMs t) {
  constexpr TimeMs kYear10000 = 253402300800000;  // 10000-01-01T00:00:00Z
  if (t < 0 || t >= kYear10000) {
    out += FormatTimeSlowly(t);
    return;
  }
  // Days since 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's civil_from_days).
  const int64_t ms_of_day = t % 86'400'000;
  const int64_t z = t / 86'400'000 + 719'468;
  const int64_t era = z / 146'097;
  const int64_t doe = z - era * 146'097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36'524 - doe / 146'096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  const int day = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  const int month = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  const int year = static_cast<int>(yoe + era * 400 + (month <= 2 ? 1 : 0));
  const int secs = static_cast<int>(ms_of_day / 1000);
  char buf[24];  // "YYYY-MM-DDTHH:MM:SS.mmmZ"
  Put2(buf, year / 100);
  Put2(buf + 2, year % 100);
  buf[4] = '-';
  Put2(buf + 5, month);
  buf[7] = '-';
  Put2(buf + 8, day);
  buf[10] = 'T';
  Put2(buf + 11, secs / 3600);
  buf[13] = ':';
  Put2(buf + 14, secs / 60 % 60);
  buf[16] = ':';
  Put2(buf + 17, secs % 60);
  buf[19] = '.';
  const int ms = static_cast<int>(ms_of_day % 1000);
  buf[20] = static_cast<char>('0' + ms / 100);
  Put2(buf + 21, ms % 100);
  buf[23] = 'Z';
  out.append(buf, sizeof buf);
}

std::string FormatTime(TimeMs t) {
  std::string out;
  AppendTime(out, t);
  return out;
}

}  // namespace tf
