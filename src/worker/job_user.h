// Who a job's processes run as. A worker that runs as root gives each job a user of its own: a
// uid, and a group of the same number, from a range no account uses, picked by the job's id,
// with no entry in /etc/passwd. The rank's working and output directories are handed over to
// it; the worker's directory, the server's data directory, other jobs' directories and the
// worker's /proc stay out of its reach. A worker that is not root runs jobs as itself
// (docs/security.md says what that leaves open).
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string_view>

#include "base/status.h"

namespace tf::worker {

inline constexpr uid_t kFirstJobUid = 1'500'000'000;
inline constexpr uid_t kJobUidCount = 500'000'000;
// Every job user's second group: directories on the way to the jobs' own (the worker's, its
// attempts') let this group through and nothing more.
inline constexpr gid_t kJobsGid = kFirstJobUid - 1;

struct JobUser {
  uid_t uid = 0;
  gid_t gid = 0;
};

// The job's user: the same on every node and for every attempt of the job.
JobUser JobUserFor(std::string_view job_id);

// Gives `path` and everything in it to `user` (without following links).
Status HandOver(const std::filesystem::path& path, const JobUser& user);

// Lets job users pass through to `dir`: each directory from `dir` up to / that others may not
// pass through and whose group has no permissions gets group kJobsGid and g+x (it loses
// nothing: its group had no rights). kFailedPrecondition naming a directory that keeps jobs out
// otherwise (one whose group has rights of its own, or another user's).
Status OpenPathToJobs(const std::filesystem::path& dir);

}  // namespace tf::worker
