// Runs one of an operator's scripts (the command provider's create, delete and list): JSON on
// its stdin, its stdout and the end of its stderr back, killed with its process group if it
// outlives its timeout. A script may leave a process running in the background (a machine's
// worker started with nohup): its end is when the script's own process exits.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/status.h"

namespace tf::pools {

struct ScriptCall {
  std::vector<std::string> argv;           // argv[0]: a path, or a name looked up in PATH
  std::map<std::string, std::string> env;  // the whole environment
  std::filesystem::path working_dir;
  std::string input;  // written to its stdin, which is then closed
  TimeMs timeout_ms = 5 * kMinuteMs;
};

struct ScriptOutcome {
  int exit_code = -1;  // -1 when a signal ended it
  int signal = 0;
  bool timed_out = false;  // killed (SIGKILL, to its process group) at its timeout
  std::string out;         // its stdout, at most kMaxScriptOutput bytes
  std::string err_tail;    // the last kErrTailBytes of its stderr

  bool success() const { return !timed_out && signal == 0 && exit_code == 0; }
  // "exit code 3: <the last line of stderr>", "timed out after 2m", "killed by signal 9".
  std::string Describe(TimeMs timeout_ms) const;
};

inline constexpr size_t kMaxScriptOutput = size_t{1} << 20;
inline constexpr size_t kErrTailBytes = 2048;

// kUnavailable if the script cannot be started (not found, not executable: the message says);
// kResourceExhausted if it writes more than kMaxScriptOutput to stdout (it is killed).
Result<ScriptOutcome> RunScript(const ScriptCall& call);

using ScriptRunner = std::function<Result<ScriptOutcome>(const ScriptCall& call)>;

// Runs `call` with `run` until it succeeds, up to `retries` more times (with the same input);
// returns its stdout, or kUnavailable "<what> failed: <the last reason>". A script that cannot
// be started is not tried again. Each failure is logged, naming `pool`.
Result<std::string> RunWithRetries(const ScriptRunner& run, const ScriptCall& call, int retries,
                                   const std::string& what, const std::string& pool);

// This process's environment, for the scripts it runs.
std::map<std::string, std::string> ServerEnvironment();

}  // namespace tf::pools
