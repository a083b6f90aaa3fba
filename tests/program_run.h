// Running a program to its end in end-to-end tests: its exit code and its stdout and stderr
// together, for the tensorfleet binary on its own or against a server.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <chrono>
#include <string>
#include <vector>

#include "child_process.h"

namespace tf::testing {

struct ProgramRun {
  int exit_code = -1;  // -1 if it did not exit normally (a signal, or it never started)
  std::string output;  // stdout and stderr together
};

// The exit code in a wait status, or -1 if the program did not exit normally.
inline int ExitCode(int wait_status) {
  return WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : -1;
}

// Runs argv (argv[0] a path) to its end, with extra "NAME=value" environment entries. A program
// still running after `limit` is killed and fails the test.
inline ProgramRun RunProgram(const std::vector<std::string>& argv,
                             const std::vector<std::string>& env = {},
                             std::chrono::seconds limit = std::chrono::seconds(300)) {
  ChildProcess child;
  if (!child.Start(argv, env)) {
    ADD_FAILURE() << "could not start " << argv[0];
    return {};
  }
  int status = -1;
  if (!child.WaitFor(limit, &status)) {
    child.Kill(SIGKILL);
    status = child.Wait();
    ADD_FAILURE() << argv[0] << " ran past " << limit.count() << " s:\n" << child.output();
  }
  return {ExitCode(status), child.output()};
}

// The tensorfleet binary with `args`.
inline ProgramRun RunTensorfleet(std::vector<std::string> args,
                                 const std::vector<std::string>& env = {}) {
  args.insert(args.begin(), TENSORFLEET_BINARY);
  return RunProgram(args, env);
}

// The tensorfleet command against the server at `url` with `token`; TENSORFLEET_URL and
// TENSORFLEET_TOKEN are emptied, so that only the flags name the server.
inline ProgramRun RunTensorfleetOn(const std::string& url, const std::string& token,
                                   const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"--server", url, "--token", token};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunTensorfleet(argv, {"TENSORFLEET_URL=", "TENSORFLEET_TOKEN="});
}

// Whether /usr/bin/python3 imports torch and numpy (Debian's python3-torch and python3-numpy),
// which the example's training script needs; asked once.
inline bool PythonHasTorch() {
  static const bool has =
      RunProgram({"/usr/bin/python3", "-c", "import torch, numpy"}).exit_code == 0;
  return has;
}

}  // namespace tf::testing
