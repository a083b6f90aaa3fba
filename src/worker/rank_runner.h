// Runs one rank of one attempt on this node, on a thread of its own, from start to report:
//
//   download and unpack the code bundle -> restore the checkpoint directory -> start the
//   node's processes (each its own process group, with the environment contract) -> report
//   running -> while they run: ship logs, read metrics, sync checkpoints every interval ->
//   when they end or are stopped: sync checkpoints once more, upload the output on success,
//   ship the last logs -> report how it ended.
//
// The checkpoint directory of node rank 0 is the job's checkpoint; every node restores it.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "worker/fleet_client.h"
#include "worker/job_env.h"
#include "worker/object_client.h"

namespace tf::worker {

// Everything a rank needs from the worker that runs it.
struct RankContext {
  std::filesystem::path attempts_dir;  // the rank works in attempts_dir/<job>-<attempt>-<rank>
  std::string server_url;
  // Each rank talks to the server on connections of its own.
  std::function<Result<std::unique_ptr<FleetClient>>()> fleet;
  std::function<Result<std::unique_ptr<ObjectClient>>(const std::string& token)> objects;
  // Called with the process groups the rank started (pid, start time) and when they are gone,
  // so that a restarted worker can find what it left behind (local_state.h).
  std::function<void(const Assignment&, const std::vector<std::pair<int, uint64_t>>&)> started;
  std::function<void(const Assignment&)> finished;
  std::chrono::milliseconds poll_interval{500};
  std::chrono::milliseconds log_ship_interval{2000};
};

enum class StopKind {
  kInterrupt,  // a drain or a spot notice: reported as interrupted
  kWithdraw,   // the server no longer wants it (cancelled, or its attempt ended): "stopped"
};

class RankRunner {
 public:
  RankRunner(Assignment assignment, RankContext context);
  ~RankRunner();  // stops it (withdrawn, no grace beyond 10 s) and joins

  void Start();
  // Asks the rank to stop: SIGTERM to its processes, SIGKILL after `grace`. Safe to call
  // repeatedly: the earliest deadline wins, an interrupt is never downgraded to a withdrawal.
  void Stop(StopKind kind, std::chrono::milliseconds grace, const std::string& reason);
  bool done() const { return done_; }
  void Join();
  const Assignment& assignment() const { return assignment_; }

 private:
  void Run();
  Result<RankOutcome> Execute();
  bool WaitForStop(std::chrono::milliseconds timeout);

  Assignment assignment_;
  RankContext context_;
  std::thread thread_;
  std::atomic<bool> done_{false};

  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_requested_ = false;  // guarded by mu_
  StopKind stop_kind_ = StopKind::kWithdraw;
  std::chrono::steady_clock::time_point kill_at_;
  std::string stop_reason_;
};

}  // namespace tf::worker
