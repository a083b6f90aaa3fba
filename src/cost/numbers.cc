#include "cost/numbers.h"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace tf::cost {
namespace {

// Reads exactly `n` digits at s[*pos]; false if any is not a digit.
bool Digits(std::string_view s, size_t* pos, size_t n, int64_t* out) {
  if (*pos + n > s.size()) return false;
  int64_t v = 0;
  for (size_t i = 0; i < n; ++i) {
    char c = s[*pos + i];
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  *pos += n;
  *out = v;
  return true;
}

bool Expect(std::string_view s, size_t* pos, char c) {
  if (*pos >= s.size() || s[*pos] != c) return false;
  ++*pos;
  return true;
}

std::string Group(std::string digits) {
  std::string out;
  int n = static_cast<int>(digits.size());
  for (int i = 0; i < n; ++i) {
    out += digits[i];
    int left = n - 1 - i;
    if (left > 0 && left % 3 == 0) out += ',';
  }
  return out;
}

}  // namespace

std::optional<double> ParseNumber(std::string_view s) {
  if (s.empty()) return std::nullopt;
  const char* begin = s.data();
  if (*begin == '+') ++begin;  // from_chars refuses a leading plus
  double v = 0;
  auto [end, ec] = std::from_chars(begin, s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

Result<double> ParseCount(std::string_view s) {
  if (s.empty()) return InvalidArgument("empty count");
  double scale = 1;
  switch (s.back()) {
    case 'k':
    case 'K':
      scale = 1e3;
      break;
    case 'M':
      scale = 1e6;
      break;
    case 'B':
    case 'G':
      scale = 1e9;
      break;
    case 'T':
      scale = 1e12;
      break;
    default:
      break;
  }
  std::string_view digits = scale == 1 ? s : s.substr(0, s.size() - 1);
  auto v = ParseNumber(digits);
  if (!v || *v <= 0) {
    return InvalidArgument("'" + std::string(s) +
                           "' is not a positive count (examples: 70B, 1.5T, 300M, 7e9)");
  }
  return *v * scale;
}

int64_t DaysFromCivil(int64_t year, unsigned month, unsigned day) {
  // Count from 0000-03-01 so that the leap day is the last day of a year; 146097 days make
  // 400 years.
  int64_t m = month;
  year -= m <= 2 ? 1 : 0;
  int64_t era = (year >= 0 ? year : year - 399) / 400;
  int64_t year_of_era = year - era * 400;                                   // [0, 399]
  int64_t day_of_year = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + day - 1;  // [0, 365]
  int64_t day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
  return era * 146097 + day_of_era - 719468;
}

std::optional<int64_t> ParseUtcTime(std::string_view s) {
  size_t pos = 0;
  int64_t year, month, day, hour = 0, minute = 0, second = 0;
  if (!Digits(s, &pos, 4, &year) || !Expect(s, &pos, '-') || !Digits(s, &pos, 2, &month) ||
      !Expect(s, &pos, '-') || !Digits(s, &pos, 2, &day)) {
    return std::nullopt;
  }
  if (month < 1 || month > 12 || day < 1 || day > 31) return std::nullopt;
  int64_t offset = 0;
  if (pos < s.size()) {
    if (s[pos] != 'T' && s[pos] != ' ') return std::nullopt;
    ++pos;
    if (!Digits(s, &pos, 2, &hour) || !Expect(s, &pos, ':') || !Digits(s, &pos, 2, &minute)) {
      return std::nullopt;
    }
    if (pos < s.size() && s[pos] == ':') {
      ++pos;
      if (!Digits(s, &pos, 2, &second)) return std::nullopt;
      if (pos < s.size() && s[pos] == '.') {  // fractions of a second are dropped
        ++pos;
        size_t start = pos;
        while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') ++pos;
        if (pos == start) return std::nullopt;
      }
    }
    if (hour > 23 || minute > 59 || second > 60) return std::nullopt;
    if (pos < s.size() && s[pos] == 'Z') {
      ++pos;
    } else if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) {
      int sign = s[pos] == '+' ? 1 : -1;
      ++pos;
      int64_t oh, om = 0;
      if (!Digits(s, &pos, 2, &oh)) return std::nullopt;
      if (pos < s.size() && s[pos] == ':') ++pos;
      if (pos < s.size() && !Digits(s, &pos, 2, &om)) return std::nullopt;
      if (oh > 23 || om > 59) return std::nullopt;
      offset = sign * (oh * 3600 + om * 60);
    }
  }
  if (pos != s.size()) return std::nullopt;
  int64_t days = DaysFromCivil(year, static_cast<unsigned>(month), static_cast<unsigned>(day));
  return days * 86400 + hour * 3600 + minute * 60 + second - offset;
}

std::string FormatUtcTime(int64_t seconds) {
  int64_t days = seconds >= 0 ? seconds / 86400 : (seconds - 86399) / 86400;
  int64_t rest = seconds - days * 86400;
  // The inverse of DaysFromCivil.
  int64_t z = days + 719468;
  int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  int64_t doe = z - era * 146097;
  int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  int64_t mp = (5 * doy + 2) / 153;
  int64_t day = doy - (153 * mp + 2) / 5 + 1;
  int64_t month = mp < 10 ? mp + 3 : mp - 9;
  int64_t year = yoe + era * 400 + (month <= 2 ? 1 : 0);
  char buf[160];
  std::snprintf(buf, sizeof buf, "%04lld-%02lld-%02lldT%02lld:%02lld:%02lldZ",
                static_cast<long long>(year), static_cast<long long>(month),
                static_cast<long long>(day), static_cast<long long>(rest / 3600),
                static_cast<long long>(rest / 60 % 60), static_cast<long long>(rest % 60));
  return buf;
}

std::string FormatFixed(double value, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, value);
  return buf;
}

std::string FormatUsd(double usd) {
  std::string sign = usd < 0 ? "-" : "";
  std::string fixed = FormatFixed(std::fabs(usd), 2);
  size_t dot = fixed.find('.');
  return sign + "$" + Group(fixed.substr(0, dot)) + fixed.substr(dot);
}

std::string FormatGrouped(double value) {
  std::string sign = value < 0 ? "-" : "";
  return sign + Group(FormatFixed(std::fabs(std::round(value)), 0));
}

std::string FormatShort(double value) {
  double a = std::fabs(value);
  if (a >= 1e15) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2e", value);
    return buf;
  }
  if (a >= 1e12) return FormatFixed(value / 1e12, 2) + "T";
  if (a >= 1e9) return FormatFixed(value / 1e9, 2) + "B";
  if (a >= 1e6) return FormatFixed(value / 1e6, 2) + "M";
  if (a >= 1e4) return FormatFixed(value / 1e3, 1) + "k";
  return FormatFixed(value, a >= 100 ? 0 : 2);
}

}  // namespace tf::cost
