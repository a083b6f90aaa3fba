// The CLI's verbs, one file per group. Each Add* registers its subcommands on `app`; a
// subcommand's callback stores its exit code in `exit_code`.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "base/status.h"
#include "cli/api_client.h"

namespace tf::cli {

void AddServerCommands(CLI::App& app, Connection& conn, int& exit_code);  // up, server
void AddQueueCommands(CLI::App& app, Connection& conn, int& exit_code);   // queue ...
void AddAuthCommands(CLI::App& app, Connection& conn, int& exit_code);    // token, project, status
void AddObjectCommands(CLI::App& app, Connection& conn, int& exit_code);  // bucket, cp, ls, rm, cat
void AddS3Commands(CLI::App& app, Connection& conn, int& exit_code);      // s3 key ...
// dataset create|list|describe|delete|read: datasets packed into shards.
void AddDatasetCommands(CLI::App& app, Connection& conn, int& exit_code);
// run, ps, describe, logs, cancel: managed jobs.
void AddJobCommands(CLI::App& app, Connection& conn, int& exit_code);
// nodes, worker, worker drain: the fleet.
void AddFleetCommands(CLI::App& app, Connection& conn, int& exit_code);
void AddEngineCommands(CLI::App& app, Connection& conn, int& exit_code);  // engine ...
// cost catalog/compare/audit/generate-bill; offline, no server needed.
void AddCostCommands(CLI::App& app, Connection& conn, int& exit_code);
// plan train/serve: what a training run or a deployment needs and costs; offline.
void AddPlanCommands(CLI::App& app, Connection& conn, int& exit_code);

// Prints "error: <message>" to stderr and returns 1.
int Fail(const Status& status);
// Prints j as indented JSON.
void PrintJson(const Json& j);
// A JSON value as a table cell: strings bare, null as "-".
std::string Cell(const Json& v);

}  // namespace tf::cli
