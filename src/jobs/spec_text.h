// Small text helpers for the messages a spec's errors give.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "base/utf8.h"  // IsValidUtf8, for the spec readers

namespace tf::jobs {

// `text` in double quotes as a user would write it, safe to print on a terminal: quotes,
// backslashes and control bytes escaped ("\n", "\x01"), and cut after 80 bytes with "...".
std::string Quote(std::string_view text);

// The name in `names` closest to `wrong` (a typo: at most one edit, or a third of the name's
// length for long names, ignoring case; or `wrong` is the start of it), or nothing if none is.
std::optional<std::string_view> ClosestName(std::string_view wrong,
                                            std::span<const std::string_view> names);

}  // namespace tf::jobs
