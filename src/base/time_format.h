#pragma once

#include <string>

#include "base/clock.h"

namespace tf {

// "2026-11-29T22:30:00.123Z"
std::string FormatTime(TimeMs t);
// Appends FormatTime(t) to `out`.
void AppendTime(std::string& out, TimeMs t);

}  // namespace tf
