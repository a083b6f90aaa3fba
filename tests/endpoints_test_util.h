// What the end-to-end endpoint tests share: a real server on the test's store back end (the
// parameter: sqlite or postgresql), a real worker offering 4 CPUs, the CLI against them, and
// helpers to write specs, read `endpoint describe` and wait for replicas.
#pragma once

#include <dirent.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/crypto.h"
#include "child_process.h"
#include "eventually.h"
#include "http/http.h"
#include "program_run.h"
#include "server_process.h"
#include "store_test_env.h"

namespace tf::testing {

// The pid of a process whose command line has every one of `parts`, or 0.
inline pid_t FindProcess(const std::vector<std::string>& parts) {
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return 0;
  pid_t found = 0;
  while (dirent* entry = readdir(proc)) {
    pid_t pid = static_cast<pid_t>(std::atoi(entry->d_name));
    if (pid <= 0) continue;
    std::ifstream in("/proc/" + std::string(entry->d_name) + "/cmdline", std::ios::binary);
    std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
    bool all = true;
    for (const std::string& part : parts) all = all && cmdline.find(part) != std::string::npos;
    if (all) {
      found = pid;
      break;
    }
  }
  closedir(proc);
  return found;
}

// "127.0.0.1:30123" -> "30123".
inline std::string PortOf(const std::string& address) {
  return address.substr(address.find(':') + 1);
}

class EndpointsFixture : public ::testing::TestWithParam<std::string> {
 protected:
  using Json = nlohmann::json;

  void SetUp() override {
    TF_SKIP_UNLESS_STORE_REACHABLE(GetParam());
    server_ = std::make_unique<TensorfleetServer>(
        (dir_.path() / "server").string(), 0,
        std::vector<std::string>{"--store", StoreUrl(GetParam(), dir_)});
    ASSERT_TRUE(server_->Start());
    // The PostgreSQL database is shared by every test: a project of the test's own, and a
    // label that keeps its replicas on its own worker (not on one a previous test left).
    run_ = RandomHex(4);
    ASSERT_TRUE(StartTensorfleetWorker(worker_, server_->url(), server_->token(),
                                       (dir_.path() / "worker").string(), 0,
                                       {"--cpus", "4", "--label", "run=" + run_}));
    ProgramRun project =
        RunTensorfleetOn(server_->url(), server_->token(), {"project", "create", "p-" + run_});
    ASSERT_EQ(project.exit_code, 0) << project.output;
    ProgramRun token =
        RunTensorfleetOn(server_->url(), server_->token(),
                         {"--json", "token", "create", "t", "--project", "p-" + run_});
    ASSERT_EQ(token.exit_code, 0) << token.output;
    token_ = Json::parse(token.output)["secret"];
  }

  // The worker stops its replicas as it stops (a SIGKILL would leave them running).
  void TearDown() override {
    if (worker_.pid() > 0) {
      worker_.Kill(SIGTERM);
      worker_.Wait();
    }
  }

  // The CLI with the test project's token (or `token`).
  ProgramRun Run(std::vector<std::string> args, const std::string& token = "") {
    return RunTensorfleetOn(server_->url(), token.empty() ? token_ : token, args);
  }

  // Writes `yaml` as NAME.yaml in the test's directory, with the test's node selector; returns
  // its path.
  std::string WriteSpec(const std::string& name, const std::string& yaml) {
    std::string path = (dir_.path() / (name + ".yaml")).string();
    std::ofstream(path) << yaml << "node_selector: {run: '" << run_ << "'}\n";
    return path;
  }

  void Up(const std::string& name, const std::string& yaml) {
    ProgramRun up = Run({"endpoint", "up", WriteSpec(name, yaml)});
    ASSERT_EQ(up.exit_code, 0) << up.output;
  }

  Json Describe(const std::string& name) {
    ProgramRun r = Run({"--json", "endpoint", "describe", name});
    return r.exit_code == 0 ? Json::parse(r.output, nullptr, false) : Json();
  }

  // The endpoint's replicas in `state`.
  std::vector<Json> ReplicasIn(const std::string& name, const std::string& state) {
    std::vector<Json> out;
    Json e = Describe(name);
    if (!e.is_object()) return out;
    for (const Json& r : e["replicas"]) {
      if (r["state"] == state) out.push_back(r);
    }
    return out;
  }

  // Waits until `pred(describe)` holds; fails the test (with the endpoint and server output)
  // if it does not within `timeout`.
  template <typename Pred>
  Json WaitFor(const std::string& name, Pred pred, const std::string& what,
               std::chrono::seconds timeout = std::chrono::seconds(90)) {
    Json e;
    bool held = Eventually(
        [&] {
          e = Describe(name);
          return e.is_object() && pred(e);
        },
        timeout);
    EXPECT_TRUE(held) << "waiting for " << what << ": " << e.dump(2) << "\n" << server_->output();
    return e;
  }

  // A POST with the admin token (or `token`) to the server; {status, body}.
  std::pair<int, std::string> Post(const std::string& target, const Json& body,
                                   const std::string& token = "") {
    auto client = http::Client::Create(server_->url());
    if (!client.ok()) return {-1, client.status().ToString()};
    auto r = (*client)->Send("POST", target,
                             {{"Content-Type", "application/json"},
                              {"Authorization", "Bearer " + (token.empty() ? token_ : token)}},
                             body.dump(), std::chrono::seconds(120));
    if (!r.ok()) return {-1, r.status().ToString()};
    return {r->status, r->body};
  }

  TempDir dir_;
  std::unique_ptr<TensorfleetServer> server_;
  ChildProcess worker_;
  std::string run_;    // this test's label value and project suffix
  std::string token_;  // a token of the test's project "p-<run_>"
};

}  // namespace tf::testing
