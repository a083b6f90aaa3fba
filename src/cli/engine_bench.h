// `tensorfleet engine bench`: how fast the engine runs a model on this machine (prefill, and
// decode with one and several streams), for sizing machines and for comparing with other
// engines (bench/run_engine_bench.sh runs it beside llama.cpp).
#pragma once

#include <CLI/CLI.hpp>

#include "client/api_client.h"

namespace tf::cli {

// Registers `bench` under the `engine` command.
void AddEngineBenchCommand(CLI::App& engine, client::Connection& conn, int& exit_code);

}  // namespace tf::cli
