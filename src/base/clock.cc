#include "base/clock.h"

#include <chrono>

namespace tf {

TimeMs SystemClock::Now() const {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

SystemClock& SystemClock::Get() {
  static SystemClock clock;
  return clock;
}

}  // namespace tf
