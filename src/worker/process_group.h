// A workload process run supervised: in a session (and process group) of its own, with exactly
// the environment it is given, in its working directory, with stdout and stderr appended to a
// log file and stdin from /dev/null.
//
// The group's leader is not the workload but a watcher: a fork of this process that never execs,
// starts the workload as its own child, ignores the group's signals (they are for the workload)
// and, when the workload ends, ends as it did (its exit code, or killed by the same signal). It
// is there so that the group dies with this process: PR_SET_PDEATHSIG tells it when this process
// (strictly: the thread that called Start, which must outlive the group) dies, however it
// died, and it then kills the whole group with SIGKILL. No process of a job outlives a worker
// killed with kill -9.
//
// Lifetime. The group's leader is this process's child, and it is reaped only here, so its pid
// (and with it the group id) cannot be given to another program while a ProcessGroup could
// still signal it. When the leader exits, whatever is left of its group is sent SIGKILL before
// the leader is reaped: nothing of a finished workload keeps running or holds its GPUs. The
// destructor does the same for a group still running, so no zombie is ever left behind.
//
// Thread-safe: one thread may Wait() while another signals.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/mutex.h"
#include "base/status.h"

namespace tf::worker {

// A user for the workload to run as (the worker must be root): its uid, its group, and the
// groups it also belongs to.
struct RunAs {
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;
};

struct ProcessSpec {
  // argv[0] is run as a shell would: with a '/', as a path (relative to working_dir); without,
  // looked up in the PATH of `env` (or /usr/local/bin:/usr/bin:/bin when env has none).
  std::vector<std::string> argv;
  std::map<std::string, std::string> env;  // the whole environment; nothing is inherited
  std::filesystem::path working_dir;       // must exist
  std::filesystem::path log_file;          // created (0644) if missing, appended to
  // Whom the workload runs as (not the watcher, which stays the worker's); unset: the worker's
  // user. The working directory is entered as that user.
  std::optional<RunAs> run_as;
  // Control groups to join (their cgroup.procs files, worker/cgroups.h): the workload writes
  // "0" to each before it becomes run_as, so that it and every process it starts are counted
  // and limited there. One it cannot join fails the start (exit code kExitNotExecutable).
  std::vector<std::filesystem::path> cgroup_procs;
};

// How a process ended: an exit code, or the signal that killed it.
struct ExitStatus {
  int exit_code = -1;  // -1 when killed by a signal
  int signal = 0;      // 0 when it exited

  bool success() const { return signal == 0 && exit_code == 0; }
  // "exit code 3", "killed by SIGKILL"
  std::string ToString() const;
  friend bool operator==(const ExitStatus&, const ExitStatus&) = default;
};

// Exit codes of a command that could not be run, as a shell gives them; the reason is written
// to the log as "tensorfleet: cannot run ...".
inline constexpr int kExitNotFound = 127;       // no such command, or no working directory
inline constexpr int kExitNotExecutable = 126;  // found, but not runnable

class ProcessGroup {
 public:
  // Starts the process and returns once it has entered its own session (and is about to exec
  // or has failed to). kInvalidArgument for an empty argv, a bad environment name, a working
  // directory that is not one, or a log file that cannot be opened; kUnavailable if the system
  // cannot create a process. A command that is not found still starts: it exits with
  // kExitNotFound and says why in the log.
  static Result<std::unique_ptr<ProcessGroup>> Start(const ProcessSpec& spec);

  // Kills what is left of the group and reaps the leader.
  ~ProcessGroup();
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  pid_t pid() const { return pid_; }  // also the group and session id
  // Field 22 of /proc/<pid>/stat when it started: the pid plus this names exactly this
  // process, for a later worker deciding whether a recorded pid is still its workload.
  uint64_t start_time() const { return start_time_; }

  // Sends `sig` to every process of the group. OK (and nothing sent) once the leader has been
  // reaped; the group is then gone.
  Status Signal(int sig);
  // How the leader ended, or nullopt while it runs. Does not block.
  Result<std::optional<ExitStatus>> TryWait();
  // Waits up to `timeout` for the leader to end.
  Result<std::optional<ExitStatus>> WaitFor(std::chrono::milliseconds timeout);
  // Waits for the leader to end.
  Result<ExitStatus> Wait();
  // SIGTERM to the group, up to `grace` for the leader to end, then SIGKILL to the group, and
  // reaps. Returns how the leader ended (at once if it already had).
  Result<ExitStatus> Terminate(std::chrono::milliseconds grace);

 private:
  ProcessGroup(pid_t pid, int pidfd, uint64_t start_time)
      : pid_(pid), pidfd_(pidfd), start_time_(start_time) {}
  // Reaps the leader if it has ended: kills the rest of its group first.
  Result<std::optional<ExitStatus>> ReapIfEnded() REQUIRES(mu_);

  const pid_t pid_;
  const int pidfd_;  // readable once the leader has ended
  const uint64_t start_time_;
  Mutex mu_;
  std::optional<ExitStatus> exit_ GUARDED_BY(mu_);  // set once reaped
};

}  // namespace tf::worker
