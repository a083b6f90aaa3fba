// Logging: spdlog, with one place that sets the level and format. Never log a secret.
#pragma once

#include <spdlog/spdlog.h>

#include <string_view>

namespace tf {

// level: "debug", "info", "warn", "error". Logs go to stderr.
void InitLogging(std::string_view level);

}  // namespace tf
