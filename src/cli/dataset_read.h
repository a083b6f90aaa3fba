// `tensorfleet dataset read NAME`: streams a rank's share of an epoch through the reader
// library, to check a dataset, feed a shell pipeline, or measure streaming throughput.
#pragma once

#include <CLI/CLI.hpp>

#include "client/api_client.h"

namespace tf::cli {

// Adds `read` to the `dataset` command.
void AddDatasetReadCommand(CLI::App* dataset, client::Connection& conn, int& exit_code);

}  // namespace tf::cli
