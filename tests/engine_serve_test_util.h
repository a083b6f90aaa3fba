// Helpers for the tests of `tensorfleet engine serve` as a real process: starting it on a free
// port and waiting (on its output, not a timer) until it serves, stopping it, and asking it with
// curl, the real client.
#pragma once

#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "child_process.h"
#include "program_run.h"

namespace tf::testing {

// Starts `tensorfleet engine serve --port 0` with `args` in `server` and waits until it has
// printed its address and then `ready_text` (the model loaded). Returns its base URL
// ("http://127.0.0.1:<port>"), or "" after failing the test with the server's output.
inline std::string StartEngineServer(ChildProcess& server, const std::vector<std::string>& args,
                                     const std::string& ready_text = "ready:") {
  std::vector<std::string> argv = {TENSORFLEET_BINARY, "engine", "serve", "--port", "0"};
  argv.insert(argv.end(), args.begin(), args.end());
  if (!server.Start(argv)) {
    ADD_FAILURE() << "could not start " << TENSORFLEET_BINARY;
    return "";
  }
  size_t at = 0;
  // The address ends the "listening on" line's first word; the rest may come in a later read.
  if (!server.WaitForOutput("listening on http://", std::chrono::seconds(30), 0, &at) ||
      !server.WaitForOutput(" (loading", std::chrono::seconds(30), at)) {
    ADD_FAILURE() << "engine serve printed no address:\n" << server.output();
    return "";
  }
  std::string out = server.output();
  std::string base = "http://" + out.substr(at, out.find(' ', at) - at);
  if (!server.WaitForOutput(ready_text, std::chrono::seconds(60))) {
    ADD_FAILURE() << "engine serve never printed '" << ready_text << "':\n" << server.output();
    return "";
  }
  return base;
}

// Stops the server as Ctrl-C would and expects it to exit 0.
inline void StopEngineServer(ChildProcess& server) {
  server.Kill(SIGTERM);
  int status = server.Wait();
  EXPECT_EQ(ExitCode(status), 0) << server.output();
}

struct HttpAnswer {
  int status = 0;
  std::string body;
  nlohmann::json json() const { return nlohmann::json::parse(body, nullptr, false); }
};

// The curl command line that prints the body and then the status on a line of its own.
inline std::vector<std::string> CurlArgv(const std::string& method, const std::string& url,
                                         const std::string& body) {
  std::vector<std::string> argv = {"/usr/bin/curl", "-sS", "-N", "-X",
                                   method,          url,   "-w", "\n%{http_code}"};
  if (!body.empty()) {
    argv.insert(argv.end(), {"-H", "Content-Type: application/json", "--data-binary", body});
  }
  return argv;
}

// Splits what CurlArgv's command printed; a curl that failed fails the test (status 0).
inline HttpAnswer ParseCurlOutput(const ProgramRun& r) {
  HttpAnswer a;
  size_t nl = r.output.rfind('\n');
  if (r.exit_code != 0 || nl == std::string::npos) {
    ADD_FAILURE() << "curl failed: " << r.output;
    return a;
  }
  a.status = std::atoi(r.output.c_str() + nl + 1);
  a.body = r.output.substr(0, nl);
  return a;
}

// One request with curl, to its end.
inline HttpAnswer Curl(const std::string& base, const std::string& method, const std::string& path,
                       const std::string& body = "") {
  return ParseCurlOutput(RunProgram(CurlArgv(method, base + path, body)));
}

// One request with curl, running while the test starts others; the answer comes on Finish.
class CurlCall {
 public:
  CurlCall(const std::string& method, const std::string& url, const std::string& body) {
    EXPECT_TRUE(child_.Start(CurlArgv(method, url, body)));
  }
  HttpAnswer Finish() {
    int status = child_.Wait();
    return ParseCurlOutput({ExitCode(status), child_.output()});
  }

 private:
  ChildProcess child_;
};

}  // namespace tf::testing
