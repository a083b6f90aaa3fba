// The CLI's verbs, one file per group. Each Add* registers its subcommands on `app`; a
// subcommand's callback stores its exit code in `exit_code`.
#pragma once

#include <CLI/CLI.hpp>
#include <filesystem>
#include <functional>
#include <string>

#include "base/status.h"
#include "client/api_client.h"
#include "jobs/job_spec.h"

namespace tf::cli {

using Json = nlohmann::json;

void AddServerCommands(CLI::App& app, client::Connection& conn, int& exit_code);  // up, server
void AddQueueCommands(CLI::App& app, client::Connection& conn, int& exit_code);   // queue ...
void AddS3Commands(CLI::App& app, client::Connection& conn, int& exit_code);      // s3 key ...
// token, project, status.
void AddAuthCommands(CLI::App& app, client::Connection& conn, int& exit_code);
// bucket, cp, ls, rm, cat.
void AddObjectCommands(CLI::App& app, client::Connection& conn, int& exit_code);
// dataset create|list|describe|delete|read: datasets packed into shards.
void AddDatasetCommands(CLI::App& app, client::Connection& conn, int& exit_code);
// run, ps, describe, logs, cancel: managed jobs.
void AddJobCommands(CLI::App& app, client::Connection& conn, int& exit_code);
// endpoint up|ls|describe|scale|down: inference endpoints.
void AddEndpointCommands(CLI::App& app, client::Connection& conn, int& exit_code);
// nodes, worker, worker drain: the fleet.
void AddFleetCommands(CLI::App& app, client::Connection& conn, int& exit_code);
// nodes join-token create|ls|revoke, under `nodes`.
void AddJoinTokenCommands(CLI::App& nodes, client::Connection& conn, int& exit_code);
// pool create|ls|describe|scale|delete
void AddPoolCommands(CLI::App& app, client::Connection& conn, int& exit_code);
void AddEngineCommands(CLI::App& app, client::Connection& conn, int& exit_code);  // engine ...
// cost catalog/compare/audit/generate-bill; offline, no server needed.
void AddCostCommands(CLI::App& app, client::Connection& conn, int& exit_code);
// plan train/serve: what a training run or a deployment needs and costs; offline.
void AddPlanCommands(CLI::App& app, client::Connection& conn, int& exit_code);
// sweep check|judge|suggest: hyperparameter search offline, as ask and tell.
void AddSweepCommands(CLI::App& app, client::Connection& conn, int& exit_code);
// The plan of a sweep spec (`sweep check`, `sweep start --dry-run`): its settings, early
// stopping's rungs and the jobs of its first `count` trials, without a server.
Result<Json> SweepPlan(const std::string& path, int count);
void PrintSweepPlan(const Json& plan);
// sweep start|ls|describe|stop|best, under `sweep`: sweeps whose trials are managed jobs.
void AddSweepServerCommands(CLI::App& sweep, client::Connection& conn, int& exit_code);

// Packs the code directory of the job spec at `spec_path` (its `code:`) and uploads it, once per
// content, to the project's jobs bucket. Returns the object key.
Result<std::string> UploadJobCode(client::ApiClient& api, const std::filesystem::path& spec_path,
                                  const jobs::JobSpec& spec);

// Prints "error: <message>" to stderr and returns 1.
int Fail(const Status& status);
// Sets `cmd`'s callback to run `verb`: a Status that is not OK is printed as by Fail and makes
// the exit code 1; an OK one leaves the exit code as it is.
void RunStatus(CLI::App* cmd, int& exit_code, std::function<Status()> verb);
// As RunStatus, for a verb that picks its exit code when it succeeds (1 when some entries of a
// batch failed, the outcome of a job it followed): that code becomes the exit code.
void RunExitCode(CLI::App* cmd, int& exit_code, std::function<Result<int>()> verb);
// The whole of a file the user named (a spec); kNotFound "cannot read PATH: why".
Result<std::string> ReadTextFile(const std::string& path);
// Prints j as indented JSON.
void PrintJson(const Json& j);
// Prints a job's log (attempt 0: the latest; node and rank as the job ran them); following it
// to the job's end (across attempts), the exit code is 0 only if it succeeded.
Result<int> PrintJobLogs(const client::Connection& conn, const std::string& job_id, bool follow,
                         int attempt, int node, int rank);
// A JSON value as a table cell: strings bare, null as "-".
std::string Cell(const Json& v);
// A time the API wrote, to the second: "2026-11-29T22:30:00.123Z" -> "2026-11-29 22:30:00";
// "-" for anything else.
std::string Moment(const Json& v);

}  // namespace tf::cli
