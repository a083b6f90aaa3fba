// How a checkpoint snapshot is kept as objects under a prefix (docs/worker.md):
//
//   <prefix>/blobs/<sha256>                   a file's content, named by its SHA-256
//   <prefix>/manifests/<seq, 10 digits>.json  one snapshot: every file's path, size, SHA-256, mode
//   <prefix>/latest                           names the newest complete snapshot; written last
//
//   manifest: {"version": 1, "seq": 3, "files": [{"path": "step-300/model.pt", "size": 123,
//              "sha256": "9f86...", "mode": 420}, ...]}
//   latest:   {"version": 1, "seq": 3, "manifest": "manifests/0000000003.json"}
//
// Both are read as outside input: anything malformed is kInvalidArgument, never a crash, and a
// path that could leave the directory it is restored into is refused.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace tf::worker {

struct ManifestEntry {
  std::string path;  // relative, '/'-separated, no "", "." or ".." segments
  uint64_t size = 0;
  std::string sha256;    // hex
  uint32_t mode = 0644;  // permission bits
  friend bool operator==(const ManifestEntry&, const ManifestEntry&) = default;
};

struct Manifest {
  int64_t seq = 0;                   // 1, 2, ...
  std::vector<ManifestEntry> files;  // sorted by path
};

// The object keys of one checkpoint prefix ("" or "jobs/job_1/checkpoints", no trailing '/').
class CheckpointKeys {
 public:
  explicit CheckpointKeys(std::string prefix);
  std::string Blob(std::string_view sha256) const;
  std::string BlobsPrefix() const;
  std::string Manifest(int64_t seq) const;
  std::string ManifestsPrefix() const;
  std::string Latest() const;
  // The seq of a key under ManifestsPrefix(); -1 if it is not a manifest's key.
  int64_t ManifestSeq(std::string_view key) const;

 private:
  std::string base_;  // prefix + "/", or ""
};

std::string ManifestToJson(const Manifest& manifest);
Result<Manifest> ParseManifest(std::string_view json);

std::string LatestToJson(int64_t seq);
// The seq that `latest` names.
Result<int64_t> ParseLatest(std::string_view json);

// Whether `path` is safe as a relative path in a manifest (see ManifestEntry::path).
bool IsSafeRelativePath(std::string_view path);

}  // namespace tf::worker
