#include "jobs/quantities.h"

#include <array>

#include "jobs/spec_text.h"

namespace tf::jobs {
namespace {

constexpr int kMaxDigits = 18;  // so that every product below fits in __int128 comfortably
constexpr TimeMs kMaxDurationMs = 1'000'000'000'000'000;  // about 31,700 years
constexpr int64_t kMaxScaledBytes = int64_t{1} << 62;

// A non-negative decimal number as digits / 10^scale, read from the front of `text`.
struct Decimal {
  int64_t digits = 0;
  int64_t scale = 1;  // 10^(digits after the point)
};

// Reads "12", "1.5", ".5" or "2." from the front of `text`, advancing it. False when there is
// no digit at all or too many digits.
bool ReadDecimal(std::string_view& text, Decimal* out) {
  size_t i = 0;
  int count = 0;
  bool point = false;
  Decimal d;
  for (; i < text.size(); ++i) {
    char c = text[i];
    if (c == '.' && !point) {
      point = true;
      continue;
    }
    if (c < '0' || c > '9') break;
    if (++count > kMaxDigits) return false;
    d.digits = d.digits * 10 + (c - '0');
    if (point) d.scale *= 10;
  }
  if (count == 0) return false;
  text.remove_prefix(i);
  *out = d;
  return true;
}

// ceil(d * unit), or -1 past `max`.
int64_t Scale(const Decimal& d, int64_t unit, int64_t max) {
  __int128 whole = static_cast<__int128>(d.digits) * unit;
  __int128 value = (whole + d.scale - 1) / d.scale;
  return value > max ? -1 : static_cast<int64_t>(value);
}

struct Unit {
  std::string_view suffix;
  int64_t size;
};

// Longest suffixes first where one is a prefix of another ("ms" before "m").
constexpr std::array<Unit, 5> kDurationUnits = {
    {{"ms", 1}, {"s", kSecondMs}, {"m", kMinuteMs}, {"h", kHourMs}, {"d", kDayMs}}};

constexpr std::array<Unit, 10> kMemoryUnits = {{{"Ki", int64_t{1} << 10},
                                                {"Mi", int64_t{1} << 20},
                                                {"Gi", int64_t{1} << 30},
                                                {"Ti", int64_t{1} << 40},
                                                {"Pi", int64_t{1} << 50},
                                                {"k", 1'000},
                                                {"M", 1'000'000},
                                                {"G", 1'000'000'000},
                                                {"T", 1'000'000'000'000},
                                                {"P", 1'000'000'000'000'000}}};

template <size_t N>
const Unit* ReadUnit(std::string_view& text, const std::array<Unit, N>& units) {
  for (const Unit& unit : units) {
    if (text.starts_with(unit.suffix)) {
      text.remove_prefix(unit.suffix.size());
      return &unit;
    }
  }
  return nullptr;
}

}  // namespace

Result<TimeMs> ParseDuration(std::string_view text) {
  const std::string expected =
      "must be a duration such as 30s, 90m, 2h or 1h30m (units ms, s, m, h, d), got " + Quote(text);
  std::string_view rest = text;
  Decimal d;
  if (!ReadDecimal(rest, &d)) return InvalidArgument(expected);
  if (rest.empty()) {  // a bare number of seconds
    int64_t ms = Scale(d, kSecondMs, kMaxDurationMs);
    if (ms < 0) return InvalidArgument("is too long: " + Quote(text));
    return ms;
  }
  TimeMs total = 0;
  while (true) {
    const Unit* unit = ReadUnit(rest, kDurationUnits);
    if (unit == nullptr) return InvalidArgument(expected);
    int64_t part = Scale(d, unit->size, kMaxDurationMs);
    if (part < 0 || total > kMaxDurationMs - part) {
      return InvalidArgument("is too long: " + Quote(text));
    }
    total += part;
    if (rest.empty()) return total;
    if (!ReadDecimal(rest, &d)) return InvalidArgument(expected);
  }
}

Result<int64_t> ParseMemory(std::string_view text) {
  std::string_view rest = text;
  Decimal d;
  const Unit* unit = nullptr;
  bool ok = ReadDecimal(rest, &d);
  if (ok && !rest.empty()) {
    unit = ReadUnit(rest, kMemoryUnits);
    ok = unit != nullptr && rest.empty();
  }
  if (!ok) {
    return InvalidArgument(
        "must be a size such as 512Mi, 16Gi or 2G (binary units Ki, Mi, Gi, Ti, Pi; decimal "
        "k, M, G, T, P), got " +
        Quote(text));
  }
  int64_t bytes = Scale(d, unit == nullptr ? 1 : unit->size, kMaxScaledBytes);
  if (bytes < 0) return InvalidArgument("is too large: " + Quote(text));
  return bytes;
}

std::string FormatDuration(TimeMs ms) {
  if (ms == 0) return "0s";
  for (auto it = kDurationUnits.rbegin(); it != kDurationUnits.rend(); ++it) {
    if (ms % it->size == 0) return std::to_string(ms / it->size) + std::string(it->suffix);
  }
  return std::to_string(ms) + "ms";
}

std::string FormatMemory(int64_t bytes) {
  if (bytes == 0) return "0";
  for (int i = 4; i >= 0; --i) {
    const Unit& unit = kMemoryUnits[i];
    if (bytes % unit.size == 0) return std::to_string(bytes / unit.size) + std::string(unit.suffix);
  }
  return std::to_string(bytes);
}

}  // namespace tf::jobs
