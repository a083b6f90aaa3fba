#include "worker/job_user.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "base/crypto.h"

namespace tf::worker {
namespace {

Status ErrnoError(const std::string& what) {
  return Unavailable(what + ": " + std::strerror(errno));
}

Status Own(const std::filesystem::path& path, const JobUser& user) {
  if (::lchown(path.c_str(), user.uid, user.gid) != 0) {
    return ErrnoError("giving " + path.string() + " to the job's user");
  }
  return OkStatus();
}

}  // namespace

JobUser JobUserFor(std::string_view job_id) {
  const std::string digest = Sha256Hex(job_id);
  const uint64_t n = std::stoull(digest.substr(0, 15), nullptr, 16);
  const auto uid = static_cast<uid_t>(kFirstJobUid + n % kJobUidCount);
  return {uid, static_cast<gid_t>(uid)};
}

Status HandOver(const std::filesystem::path& path, const JobUser& user) {
  TF_RETURN_IF_ERROR(Own(path, user));
  std::error_code ec;
  if (!std::filesystem::is_directory(std::filesystem::symlink_status(path, ec))) return OkStatus();
  for (auto it = std::filesystem::recursive_directory_iterator(path, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    TF_RETURN_IF_ERROR(Own(it->path(), user));
  }
  if (ec) return Unavailable("giving " + path.string() + " to the job's user: " + ec.message());
  return OkStatus();
}

Status OpenPathToJobs(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::path at = std::filesystem::absolute(dir, ec).lexically_normal();
  for (;;) {
    struct stat st {};
    if (::stat(at.c_str(), &st) != 0) return ErrnoError("reading " + at.string());
    const bool others_pass = (st.st_mode & S_IXOTH) != 0;
    const bool jobs_pass = st.st_gid == kJobsGid && (st.st_mode & S_IXGRP) != 0;
    if (!others_pass && !jobs_pass) {
      if (st.st_uid != ::geteuid() || (st.st_mode & S_IRWXG) != 0) {
        return FailedPrecondition("jobs running as users of their own cannot pass through " +
                                  at.string() + " (let them: chmod o+x " + at.string() + ")");
      }
      if (::chown(at.c_str(), static_cast<uid_t>(-1), kJobsGid) != 0 ||
          ::chmod(at.c_str(), (st.st_mode & 07777) | S_IXGRP) != 0) {
        return ErrnoError("letting jobs pass through " + at.string());
      }
    }
    if (at == at.root_path() || !at.has_relative_path()) return OkStatus();
    at = at.parent_path();
  }
}

}  // namespace tf::worker
