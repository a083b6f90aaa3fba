// Limits on a rank's processes through the kernel's control groups (docs/security.md, "Limits"):
// one group per rank, with the spec's resources as its cpu, memory and pids limits. The rank's
// processes join it between fork and exec (ProcessSpec::cgroup_procs), an out-of-memory kill in
// it is read back for the rank's report, and when the rank ends whatever is left in it is
// killed (a process that left the rank's session included) and the group removed.
//
// Which hierarchy: cgroup v2 where the unified hierarchy offers a limit's controller, else that
// controller's v1 hierarchy. A worker makes its groups under its own group (/proc/self/cgroup):
//   v1: <controller's mount>/<own>/tensorfleet/<node id>/<rank>
//   v2: <own>/tensorfleet-<node id>/<rank>; v2 lets a group that holds processes give no
//       controllers to its children, so the worker first moves itself into
//       <own>/tensorfleet-worker (where a restarted worker finds itself, and starts from <own>).
// `root` is "/" except in tests, which give a directory laid out as / would be.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "base/status.h"

namespace tf::worker {

struct CgroupLimits {
  double cpus = 0;           // cpu time, in CPUs (1.5: 150 ms per 100 ms); 0: no limit
  int64_t memory_bytes = 0;  // 0: no limit
  int64_t pids = 0;          // processes and threads; 0: no limit
};

// The pids limit of every rank: enough for any trainer's threads, not for a fork bomb.
inline constexpr int64_t kRankPidsMax = 8192;

// One rank's group (in every hierarchy that holds one of its limits).
class RankCgroup {
 public:
  RankCgroup() = default;
  RankCgroup(std::vector<std::filesystem::path> dirs, std::filesystem::path memory_dir)
      : dirs_(std::move(dirs)), memory_dir_(std::move(memory_dir)) {}

  // The files a process writes "0" to, to join the group (one per hierarchy).
  std::vector<std::filesystem::path> ProcsFiles() const;
  // How many of its processes the kernel killed for going over the memory limit.
  int64_t OomKills() const;
  // Kills every process left in the group and removes it. kUnavailable if some would not go.
  Status KillAndRemove() const;
  const std::vector<std::filesystem::path>& dirs() const { return dirs_; }

 private:
  std::vector<std::filesystem::path> dirs_;
  std::filesystem::path memory_dir_;  // "" without a memory limit
};

class Cgroups {
 public:
  // Finds where this worker (of node `node_id`) can make groups, and clears what an earlier
  // worker of the node left there. kUnavailable, saying why, where it cannot (no controller
  // found, a read-only hierarchy, not root).
  static Result<Cgroups> Setup(const std::filesystem::path& root, const std::string& node_id);

  // A group `name` (a rank's directory name) with `limits`. kUnavailable if it cannot be made.
  Result<RankCgroup> Create(const std::string& name, const CgroupLimits& limits) const;

  // Removes this node's directories, once its ranks' groups are gone (at the worker's end).
  void Release() const;

  // "cgroup v1 (cpu, memory, pids)", for the worker's start-up line.
  std::string Describe() const;

 private:
  // Per controller ("cpu", "memory", "pids"): the directory the ranks' groups go in, and
  // whether it is a v2 hierarchy.
  struct Place {
    std::filesystem::path dir;
    bool v2 = false;
  };
  std::map<std::string, Place> places_;
};

}  // namespace tf::worker
