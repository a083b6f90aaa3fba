// Flags shared by the `engine` subcommands (generate, serve, bench).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace tf::cli {

// --quantize none|q8_0|q4_0 into *value (engine::ParseQuantize reads it).
void AddQuantizeOption(CLI::App* app, std::string* value);

}  // namespace tf::cli
