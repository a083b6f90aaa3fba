// A job's checkpoint directory kept as snapshots in the object service (the layout is in
// checkpoint_manifest.h), so that the next attempt, on any machine, starts from the last
// complete one.
//
// What it promises:
//  - A snapshot is complete or absent: content first, then the manifest, then `latest`. A sync
//    cut off at any point leaves the previous snapshot as latest.
//  - No torn file is ever a checkpoint: names ending in ".tmp" or starting with "." (files or
//    directories) are never synced (the contract asks jobs to write a temporary name and rename
//    it into place), and a file whose size, mtime or inode changed while it was read keeps the
//    version synced before (or stays out, if it had none).
//  - Content is stored once: blobs are named by their SHA-256 and the server refuses content
//    that does not match the name. A file with the same size, mtime and inode as when it was
//    last synced or restored is not read again.
//  - Restore gives the snapshot exactly, every file checked against its SHA-256, or an error
//    and an empty directory: never a silently partial one.
//  - The last two snapshots are kept (a restore reading the one before the newest still
//    finds it); older manifests, and blobs neither refers to, are deleted after each sync.
//
// One writer per prefix. Thread-safe: calls are serialized.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/mutex.h"
#include "base/status.h"
#include "client/object_client.h"
#include "worker/checkpoint_manifest.h"

namespace tf::worker {

struct SkippedFile {
  std::string path;    // relative to the directory
  std::string reason;  // "temporary name", "changed while being read (kept the version of #3)", ...
};

struct SyncStats {
  int64_t seq = 0;            // the snapshot `latest` names after this sync; 0: none
  bool new_snapshot = false;  // false: the directory matched the latest snapshot; nothing written
  int files = 0;              // in the snapshot
  uint64_t bytes = 0;         // their total size
  int files_uploaded = 0;
  uint64_t bytes_uploaded = 0;
  int files_unchanged = 0;       // same size, mtime and inode as last time: not read again
  int files_already_stored = 0;  // read, but their content was stored already
  std::vector<SkippedFile> skipped;
  int manifests_deleted = 0;
  int blobs_deleted = 0;
  std::string cleanup_error;  // deleting old snapshots failed; this one is complete all the same
};

struct RestoreStats {
  int64_t seq = 0;  // the snapshot restored; 0: there was none, nothing to restore
  int files = 0;
  uint64_t bytes = 0;
};

class CheckpointSync {
 public:
  // Snapshots live under `prefix` of `bucket`; the bucket must exist.
  CheckpointSync(client::ObjectClient& client, std::string bucket, std::string prefix);

  // Uploads a snapshot of `dir`. An error (the object service down, the directory unreadable)
  // leaves the previous snapshot as latest; the files skipped are not errors (see stats).
  Result<SyncStats> Sync(const std::filesystem::path& dir);

  // Restores the latest snapshot into `dir`, which must be empty or missing
  // (kFailedPrecondition otherwise: nothing is ever deleted from a directory in use). No
  // snapshot: OK, seq 0, `dir` left empty. A missing or damaged blob or manifest is an error
  // (kInternal for content that does not match its SHA-256, kNotFound for missing objects) and
  // `dir` is emptied again.
  Result<RestoreStats> Restore(const std::filesystem::path& dir);

 private:
  // What a file was when last synced or restored, to skip reading it again.
  struct Known {
    uint64_t size = 0;
    int64_t mtime_ns = 0;
    ino_t inode = 0;
    dev_t device = 0;
    std::string sha256;
  };
  enum class Outcome { kStored, kChanged, kGone };

  // The snapshot `latest` names, read through the cache. nullopt: none yet.
  Result<std::optional<Manifest>> ReadLatest();
  Status Walk(const std::filesystem::path& root, const std::string& rel,
              std::vector<std::string>& files, SyncStats& stats);
  // Stores one file's content (unless already there) and fills `entry`.
  Result<Outcome> SnapshotFile(const std::filesystem::path& dir, const std::string& rel,
                               std::set<std::string>& stored, ManifestEntry& entry,
                               SyncStats& stats, std::string& why);
  // Deletes manifests other than current's and kept's, and blobs neither refers to.
  void CollectGarbage(const Manifest& current, const std::optional<Manifest>& kept,
                      SyncStats& stats);
  Status RestoreInto(const std::filesystem::path& dir, const Manifest& manifest,
                     RestoreStats& stats);

  client::ObjectClient& client_;
  const std::string bucket_;
  const CheckpointKeys keys_;
  Mutex mu_;                            // serializes Sync and Restore; guards what follows
  std::map<std::string, Known> known_;  // by relative path
  std::optional<Manifest> latest_;      // the last snapshot read or written
};

}  // namespace tf::worker
