// A job's code as one file: a directory packed into a .tar.gz for upload, and unpacked into an
// attempt's working directory. GNU tar does the archive work, run as a child process with a
// clean environment (no TAR_OPTIONS or GZIP from ours).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "base/status.h"

namespace tf::worker {

struct PackOptions {
  // Paths relative to the directory left out with everything below them, e.g. the job's
  // checkpoint and output directories. ".git" and "__pycache__" are left out at every depth.
  std::vector<std::string> exclude;
  // The most the packed files may hold, before compression.
  uint64_t max_bytes = uint64_t{100} << 20;
};

struct PackStats {
  int files = 0;       // regular files and symbolic links packed
  uint64_t bytes = 0;  // their total size, before compression
};

// Packs `dir` into the gzip-compressed tar `out`, written to a temporary file first and renamed
// into place. Directories, regular files and symbolic links (as links) are kept; sockets, FIFOs
// and devices are left out. kResourceExhausted over max_bytes (the message names the largest
// files and how to leave them out); kInvalidArgument if `dir` is not a directory or tar fails
// (with tar's own words).
Result<PackStats> Pack(const std::filesystem::path& dir, const std::filesystem::path& out,
                       const PackOptions& options = {});

// Unpacks the bundle into `dir` (created if missing). Members with ".." in their names are
// refused and leading "/" is removed from absolute ones, so nothing is written outside `dir`;
// owners are not restored and permissions go through the umask. Any member refused fails the
// call with kInvalidArgument naming it (tar's words); `dir` may then hold part of the bundle and
// should be thrown away.
Status Unpack(const std::filesystem::path& bundle, const std::filesystem::path& dir);

}  // namespace tf::worker
