// Time as tensorfleet sees it: milliseconds since the Unix epoch, read through a Clock so that
// tests can hold time still and move it by hand.
#pragma once

#include <atomic>
#include <cstdint>

namespace tf {

using TimeMs = int64_t;  // milliseconds since 1970-01-01T00:00:00Z

constexpr TimeMs kSecondMs = 1000;
constexpr TimeMs kMinuteMs = 60 * kSecondMs;
constexpr TimeMs kHourMs = 60 * kMinuteMs;
constexpr TimeMs kDayMs = 24 * kHourMs;

// Thread-safe.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual TimeMs Now() const = 0;
};

// The wall clock.
class SystemClock final : public Clock {
 public:
  TimeMs Now() const override;
  static SystemClock& Get();
};

// A clock that only moves when Advance() or Set() is called.
class FakeClock final : public Clock {
 public:
  explicit FakeClock(TimeMs start = 1'700'000'000'000) : now_(start) {}
  TimeMs Now() const override { return now_.load(); }
  void Advance(TimeMs delta) { now_ += delta; }
  void Set(TimeMs t) { now_ = t; }

 private:
  std::atomic<TimeMs> now_;
};

}  // namespace tf
