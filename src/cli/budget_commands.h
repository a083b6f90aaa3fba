// `tensorfleet cost budget set|list|show|delete|alerts`: a project's budgets on the server.
#pragma once

#include <CLI/CLI.hpp>

#include "client/api_client.h"

namespace tf::cli {

// Adds `budget` and its verbs to the `cost` command.
void AddBudgetCommands(CLI::App* cost, client::Connection& conn, int& exit_code);

}  // namespace tf::cli
