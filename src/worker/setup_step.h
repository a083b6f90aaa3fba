// The spec's `setup:` and `python:` on a node (docs/jobs-spec.md): commands run before the job's
// first rank there, in a directory of the job's own that is kept between its attempts on the
// node (TENSORFLEET_SETUP_DIR), and not run again while the code and the commands stay the same.
// The rank runner (rank_runner.cc) runs them as it runs the job's processes: as the job's user,
// in the rank's cgroup, with their output in the rank's log.
//
// Each job has its own: jobs run as users of their own, and one job must not be able to change
// what another runs.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "base/status.h"
#include "jobs/job_spec.h"

namespace tf::worker {

// The commands of a spec's setup, in order: the venv's (python:) first, then setup:. Empty:
// the job has no setup.
std::vector<std::string> SetupCommands(const jobs::JobSpec& spec);

// What a setup is, to know whether it was done: the code bundle's key and the commands.
std::string SetupKey(const std::string& code_key, const std::vector<std::string>& commands);

// Where a job's setup is kept on a node: attempts_dir/<job id>-setup.
std::filesystem::path SetupDir(const std::filesystem::path& attempts_dir,
                               const std::string& job_id);

// What the setup gives each process of the job: TENSORFLEET_SETUP_DIR, and with a venv,
// VIRTUAL_ENV and the venv's bin first on PATH.
void AddSetupEnvironment(const jobs::JobSpec& spec, const std::filesystem::path& dir,
                         std::map<std::string, std::string>& env);

// Whether `dir` holds a finished setup of `key`; MarkSetupDone records that it does.
bool SetupDone(const std::filesystem::path& dir, const std::string& key);
Status MarkSetupDone(const std::filesystem::path& dir, const std::string& key);

// An exclusive lock on a job's setup (flock on <dir>.lock), held while it lives: ranks of one
// job on one node set it up once, the others wait and find it done.
class SetupLock {
 public:
  static Result<SetupLock> Take(const std::filesystem::path& dir);
  SetupLock(SetupLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  SetupLock& operator=(SetupLock&&) = delete;
  ~SetupLock();

 private:
  explicit SetupLock(int fd) : fd_(fd) {}
  int fd_;
};

}  // namespace tf::worker
