#include "base/log.h"

#include <spdlog/sinks/stdout_color_sinks.h>

#include <string>

namespace tf {

void InitLogging(std::string_view level) {
  auto logger = spdlog::stderr_color_mt("tensorfleet");
  logger->set_pattern("%Y-%m-%dT%H:%M:%S.%eZ %^%l%$ %v", spdlog::pattern_time_type::utc);
  spdlog::set_default_logger(logger);
  spdlog::set_level(spdlog::level::from_str(std::string(level)));
}

}  // namespace tf
