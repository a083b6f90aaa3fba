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
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/mutex.h"
#include "client/fleet_client.h"
#include "client/object_client.h"
#include "worker/cgroups.h"
#include "worker/job_env.h"
#include "worker/process_group.h"

namespace tf::worker {

class CheckpointSync;
class CheckpointSyncer;
class RankTelemetry;
struct ExitStatus;

// Everything a rank needs from the worker that runs it.
struct RankContext {
  std::filesystem::path attempts_dir;  // the rank works in attempts_dir/<job>-<attempt>-<rank>
  // Keep that directory once the rank's outcome is reported (for debugging); by default it is
  // removed then, its output, checkpoint and logs being uploaded.
  bool keep_attempt_dirs = false;
  std::string server_url;
  // Run the job's processes as the job's own user (worker/job_user.h).
  bool job_users = false;
  // Where the rank's limits go (a cgroup per rank, worker/cgroups.h); null: no limits.
  const Cgroups* cgroups = nullptr;
  // Each rank talks to the server on connections of its own.
  std::function<Result<std::unique_ptr<client::FleetClient>>()> fleet;
  std::function<Result<std::unique_ptr<client::ObjectClient>>(const std::string& token)> objects;
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
  // An interrupt (as Stop) once `delay` has passed: a service on a draining node keeps serving
  // until its replacement has taken over. Safe to call repeatedly: the earliest time wins, and
  // a Stop meanwhile goes ahead of it.
  void StopAfter(std::chrono::milliseconds delay, std::chrono::milliseconds grace,
                 const std::string& reason);
  bool done() const { return done_; }
  void Join();
  const Assignment& assignment() const { return assignment_; }

 private:
  // Where one attempt of the rank works: attempts_dir/<job>-<attempt>-<rank>/.
  struct Workspace {
    std::filesystem::path dir;
    std::filesystem::path workdir;         // the unpacked code; the processes' working directory
    std::filesystem::path output;          // uploaded when the rank succeeds
    std::filesystem::path logs;            // rank-<local>.log, one per process
    std::filesystem::path log0;            // local rank 0's log, where the platform's notes go too
    std::filesystem::path checkpoint_dir;  // spec.checkpoint.dir inside workdir
  };

  void Run();
  // The rank from start to end, in the steps below; an error is a rank the worker could not
  // run (reported as failed, saying why).
  Result<client::RankOutcome> Execute();
  // attempts_dir/<job>-<attempt>-<rank>.
  std::filesystem::path WorkspaceDir() const;
  Result<Workspace> PrepareWorkspace() const;
  Status FetchCode(client::ObjectClient& objects, const Workspace& ws) const;
  // The last complete checkpoint into checkpoint_dir, when the spec keeps checkpoints.
  Status RestoreCheckpoint(CheckpointSync& sync, const Workspace& ws) const;
  // What every process of the rank (its setup's too) is started with.
  struct Launch {
    std::optional<RunAs> run_as;                      // job_users: the job's own user
    std::map<std::string, std::string> base;          // of the worker's environment, what jobs get
    std::vector<std::filesystem::path> cgroup_procs;  // the rank's cgroup (cgroups.h)
    std::vector<std::string> setup_commands;          // setup_step.h; empty: none
    std::filesystem::path setup_dir;                  // where the job's setup is kept
  };
  // Hands the workspace to the job's user and makes the rank's cgroup.
  Result<Launch> PrepareLaunch(const Workspace& ws);
  // Local rank `local`'s process, with the environment contract.
  ProcessSpec ProcessFor(const Workspace& ws, const Launch& launch, int local) const;
  // The job's setup on this node (setup_step.h), unless done before: nullopt once it is done,
  // or how the rank ended (a command failed, or the rank was stopped meanwhile).
  Result<std::optional<client::RankOutcome>> RunSetup(const Workspace& ws, const Launch& launch,
                                                      RankTelemetry& telemetry);
  // The node's processes, each a process group.
  Result<std::vector<std::unique_ptr<ProcessGroup>>> StartProcesses(const Workspace& ws,
                                                                    const Launch& launch);
  // Gives the job's user its part of the workspace (job_users); whom to run the processes as.
  Result<RunAs> HandOverWorkspace(const Workspace& ws, int processes) const;
  // Waits for the processes to end, shipping logs and metrics meanwhile; stops them all when
  // one fails or a stop is asked for. Returns whether it stopped them for a failure.
  bool Supervise(std::vector<std::unique_ptr<ProcessGroup>>& groups,
                 std::vector<std::optional<ExitStatus>>& exits, RankTelemetry& telemetry);
  // How it ended, after the last checkpoint sync, the output's upload and the last logs.
  client::RankOutcome Finish(const Workspace& ws, client::ObjectClient& objects,
                             CheckpointSyncer* syncer,
                             const std::vector<std::optional<ExitStatus>>& exits, bool failed_fast,
                             RankTelemetry& telemetry);
  bool WaitForStop(std::chrono::milliseconds timeout);

  Assignment assignment_;
  RankContext context_;
  std::thread thread_;
  std::atomic<bool> done_{false};

  Mutex mu_;
  std::condition_variable cv_;
  bool stop_requested_ GUARDED_BY(mu_) = false;
  StopKind stop_kind_ GUARDED_BY(mu_) = StopKind::kWithdraw;
  std::chrono::steady_clock::time_point kill_at_ GUARDED_BY(mu_);
  std::string stop_reason_ GUARDED_BY(mu_);
  struct DeferredStop {
    std::chrono::steady_clock::time_point at;
    std::chrono::milliseconds grace;
    std::string reason;
  };
  std::optional<DeferredStop> deferred_stop_ GUARDED_BY(mu_);
  // The rank's control group while it has one; only the rank's thread touches it.
  std::optional<RankCgroup> cgroup_;
};

}  // namespace tf::worker
