// `tensorfleet cost report`: what the fleet's work cost, from the server (GET /v1/cost/report).
#pragma once

#include <CLI/CLI.hpp>

#include "client/api_client.h"

namespace tf::cli {

// Adds `report` to the `cost` command.
void AddCostReportCommand(CLI::App* cost, client::Connection& conn, int& exit_code);

}  // namespace tf::cli
