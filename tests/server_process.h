// `tensorfleet server` and `tensorfleet worker` as child processes of an end-to-end test. A
// server has a data directory of its own: it is started and waited for on its "serving on"
// line (not a timer), crashed with SIGKILL or stopped as Ctrl-C would, and started again on the
// same data. A worker is waited for on its "is serving" line.
#pragma once

#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "child_process.h"

namespace tf::testing {

class TensorfleetServer {
 public:
  // `extra` follows `server` on the command line (--store URL, --heartbeat-timeout 3s, ...).
  // Port 0 lets the server choose; url() then reads the one it wrote into the data directory.
  TensorfleetServer(std::string data_dir, int port = 0, std::vector<std::string> extra = {})
      : data_dir_(std::move(data_dir)), port_(port), extra_(std::move(extra)) {}

  // Starts it and waits until it serves; false (and a test failure with its output) if it did
  // not within a minute.
  bool Start() {
    process_ = std::make_unique<ChildProcess>();
    std::vector<std::string> argv = {TENSORFLEET_BINARY, "--data-dir", data_dir_,
                                     "server",           "--port",     std::to_string(port_)};
    argv.insert(argv.end(), extra_.begin(), extra_.end());
    if (!process_->Start(argv) ||
        !process_->WaitForOutput("serving on", std::chrono::seconds(60))) {
      ADD_FAILURE() << "the server did not start: " << process_->output();
      return false;
    }
    return true;
  }

  // kill -9, then reaps it.
  void Crash() { End(SIGKILL); }
  // SIGTERM (a graceful shutdown), then reaps it.
  void Stop() { End(SIGTERM); }

  // Its base URL, "http://127.0.0.1:<port>".
  std::string url() const {
    if (port_ != 0) return "http://127.0.0.1:" + std::to_string(port_);
    return FirstLine(data_dir_ + "/url");
  }
  // The admin token it wrote at its first start.
  std::string token() const { return FirstLine(data_dir_ + "/admin-token"); }
  const std::string& data_dir() const { return data_dir_; }

  // The running (or last) process; null before Start.
  ChildProcess* process() { return process_.get(); }
  std::string output() { return process_ ? process_->output() : ""; }

 private:
  void End(int sig) {
    if (!process_ || process_->pid() <= 0) return;
    process_->Kill(sig);
    process_->Wait();
  }
  static std::string FirstLine(const std::string& path) {
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    return line;
  }

  std::string data_dir_;
  int port_;
  std::vector<std::string> extra_;
  std::unique_ptr<ChildProcess> process_;
};

// Starts `tensorfleet worker` in `worker` for the server at `url`, offering `gpus` (simulated)
// GPUs, on the worker directory `dir`, heartbeating every 300 ms with a 5 s grace for stopping
// ranks, and waits until it has registered and serves; `flags` are more of its flags (--cpus,
// --price). False (and a test failure with its output) if it did not within a minute.
inline bool StartTensorfleetWorker(ChildProcess& worker, const std::string& url,
                                   const std::string& token, const std::string& dir, int gpus,
                                   const std::vector<std::string>& flags = {}) {
  std::vector<std::string> argv = {TENSORFLEET_BINARY,
                                   "--server",
                                   url,
                                   "--token",
                                   token,
                                   "worker",
                                   "--gpus",
                                   std::to_string(gpus),
                                   "--worker-dir",
                                   dir,
                                   "--heartbeat",
                                   "300ms",
                                   "--address",
                                   "127.0.0.1",
                                   "--grace",
                                   "5s"};
  argv.insert(argv.end(), flags.begin(), flags.end());
  if (!worker.Start(argv) || !worker.WaitForOutput("is serving", std::chrono::seconds(60))) {
    ADD_FAILURE() << "the worker did not start: " << worker.output();
    return false;
  }
  return true;
}

}  // namespace tf::testing
