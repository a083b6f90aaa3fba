// Flags and output shared by the offline cost and plan verbs: which catalog to load, and the
// catalog's rows as JSON.
#pragma once

#include <CLI/CLI.hpp>

#include "base/status.h"
#include "client/api_client.h"
#include "cost/catalog.h"
#include "cost/catalog_files.h"

namespace tf::cli {

using Json = nlohmann::json;

// cost audit and cost generate-bill, added to the `cost` command (bill_commands.cc).
void AddBillCommands(CLI::App* cost, client::Connection& conn, int& exit_code);

// Adds --catalog and --catalog-extra (both repeatable) to `cmd`.
void AddCatalogFlags(CLI::App* cmd, cost::CatalogOptions* options);
// Adds --json, bound to the connection's flag so that `tensorfleet cost catalog --json` and
// `tensorfleet --json cost catalog` both work.
void AddJsonFlag(CLI::App* cmd, client::Connection& conn);

Json OfferJson(const cost::Offer& o);
Json AcceleratorJson(const cost::Accelerator& a);

// Prints "label   value" lines with the values aligned.
void PrintFacts(const std::vector<std::pair<std::string, std::string>>& facts);

// "$55.04" for instance prices, "$6.880" for per-GPU ones; "-" when unknown.
std::string Price(const std::optional<double>& usd, int digits = 2);

}  // namespace tf::cli
