// The worker's record on disk of the process groups it started, so that a worker restarted on
// the same machine can find what its predecessor left running.
//
// The file (JSON, docs/worker.md) is rewritten whole on every change: to a temporary file,
// fsynced, renamed over the old one, and the directory fsynced. A crash at any point leaves the
// old record or the new one, never a mix.
//
// Thread-safe. One worker per data directory.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "base/mutex.h"
#include "base/status.h"

namespace tf::worker {

class LocalState {
 public:
  // One process group: one local rank of one node rank of one attempt.
  struct Entry {
    std::string job_id;
    int attempt = 0;
    int node_rank = 0;
    std::string token;        // the attempt's fencing token, as the server wrote it
    pid_t pgid = 0;           // the group's leader: pid == pgid == session id
    uint64_t start_time = 0;  // the leader's /proc/<pid>/stat field 22
    int local_rank = 0;
    friend bool operator==(const Entry&, const Entry&) = default;
  };

  explicit LocalState(std::filesystem::path path) : path_(std::move(path)) {}

  // Reads the record; none yet is an empty one. kFailedPrecondition if the file is damaged
  // (the message names it: a person decides whether to remove it).
  Status Load();

  std::vector<Entry> entries() const;

  // Records a group (replacing one of the same job, attempt, node rank and local rank) and
  // writes the file. On an error nothing is recorded, in memory or on disk.
  Status Add(const Entry& entry);
  // Forgets every group of one rank, and writes the file.
  Status RemoveRank(const std::string& job_id, int attempt, int node_rank);

  // KillOrphans(*this).
  std::vector<Entry> KillOrphans();

  const std::filesystem::path& path() const { return path_; }

 private:
  // Writes `entries` atomically, then makes them the record.
  Status Replace(std::vector<Entry> entries) REQUIRES(mu_);

  const std::filesystem::path path_;
  mutable Mutex mu_;
  std::vector<Entry> entries_ GUARDED_BY(mu_);
};

// At worker start: a worker that restarted cannot vouch for any rank its predecessor ran (nobody
// watched them meanwhile), so every recorded group is killed (SIGKILL to the group) if it still
// runs, and forgotten. A group is killed only if its leader has the recorded start time (a pid
// given since to another program is left alone) or, with its leader gone, if processes remain
// in it (a group id is never reused while any member lives). Waits up to 10 s for each killed
// leader to end. Returns one entry per rank, to report lost; what could not be done (a kill
// refused, the file not rewritten) is logged.
std::vector<LocalState::Entry> KillOrphans(LocalState& state);

}  // namespace tf::worker
