// /v1/sweeps: start a sweep from its YAML spec, list, describe (a leaderboard), stop.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "api/router.h"
#include "api/services.h"
#include "sweeps/sweep_service.h"

namespace tf::api {

// `changed` is called after a sweep starts or is asked to stop (to run its controller soon).
void AddSweepRoutes(Router& router, Services& services, sweeps::SweepService& sweeps,
                    const std::function<void()>& changed);

// The sweep as the API shows it: its state, settings, spend, the trials sorted by the
// objective (best first; trials without a value after them, by number) and the latest
// decisions. `trials`: false for a listing (counts only).
nlohmann::json SweepToJson(const sweeps::SweepView& view, const std::string& project_name,
                           bool trials);

}  // namespace tf::api
