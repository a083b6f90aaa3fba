#include "base/time_format.h"

#include <cstdio>
#include <ctime>

namespace tf {

std::string FormatTime(TimeMs t) {
  std::time_t secs = static_cast<std::time_t>(t / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];  // room for any int year, so that GCC sees no truncation
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<int>(t % 1000));
  return buf;
}

}  // namespace tf
