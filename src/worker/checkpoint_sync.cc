#include "worker/checkpoint_sync.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>

#include "base/log.h"
#include "base/sha256_stream.h"
#include "base/utf8.h"

namespace tf::worker {
namespace {

namespace fs = std::filesystem;

constexpr size_t kReadBytes = 1 << 20;

// Names a job writes before renaming into place, and hidden files: never a checkpoint.
bool IsTemporaryName(const std::string& name) {
  return name.empty() || name[0] == '.' || (name.size() >= 4 && name.ends_with(".tmp"));
}

int64_t MtimeNs(const struct stat& st) {
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
}

// The same file, unchanged: one inode with the same size and modification time.
bool SameVersion(const struct stat& a, const struct stat& b) {
  return a.st_ino == b.st_ino && a.st_dev == b.st_dev && a.st_size == b.st_size &&
         MtimeNs(a) == MtimeNs(b);
}

std::string ErrnoText() { return std::strerror(errno); }

// Reads the open file `fd` to its end and hashes it. Empty on a read error (in `why`).
std::string HashOpenFile(int fd, std::string& why) {
  Sha256Stream sha;
  std::string buffer(kReadBytes, '\0');
  for (;;) {
    ssize_t n = ::read(fd, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      why = "cannot read: " + ErrnoText();
      return "";
    }
    if (n == 0) return sha.FinishHex();
    sha.Update(std::string_view(buffer.data(), static_cast<size_t>(n)));
  }
}

// Removes everything inside `dir`, leaving it empty.
void EmptyDirectory(const fs::path& dir) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) fs::remove_all(e.path(), ec);
}

}  // namespace

CheckpointSync::CheckpointSync(client::ObjectClient& client, std::string bucket, std::string prefix)
    : client_(client), bucket_(std::move(bucket)), keys_(std::move(prefix)) {}

Result<std::optional<Manifest>> CheckpointSync::ReadLatest() {
  const std::string where = "tf://" + bucket_ + "/" + keys_.Latest();
  TF_ASSIGN_OR_RETURN(std::optional<std::string> pointer,
                      client_.GetBytes(bucket_, keys_.Latest()));
  if (!pointer) return std::optional<Manifest>();
  auto seq = ParseLatest(*pointer);
  if (!seq.ok()) return Internal("checkpoint pointer " + where + ": " + seq.status().message());
  if (latest_ && latest_->seq == *seq) return latest_;
  const std::string manifest_key = keys_.Manifest(*seq);
  TF_ASSIGN_OR_RETURN(std::optional<std::string> text, client_.GetBytes(bucket_, manifest_key));
  if (!text) return Internal(where + " names " + manifest_key + ", which is missing");
  auto manifest = ParseManifest(*text);
  if (!manifest.ok()) {
    return Internal("checkpoint manifest " + manifest_key + ": " + manifest.status().message());
  }
  if (manifest->seq != *seq)
    return Internal("checkpoint manifest " + manifest_key + " has another seq");
  latest_ = std::move(*manifest);
  return latest_;
}

Status CheckpointSync::Walk(const fs::path& root, const std::string& rel,
                            std::vector<std::string>& files, SyncStats& stats) {
  std::error_code ec;
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(rel.empty() ? root : root / rel, ec)) {
    names.push_back(e.path().filename().string());
  }
  if (ec) {
    if (rel.empty()) {
      return InvalidArgument("cannot read checkpoint directory " + root.string() + ": " +
                             ec.message());
    }
    stats.skipped.push_back({rel, "cannot read directory: " + ec.message()});
    return OkStatus();
  }
  std::sort(names.begin(), names.end());
  for (const auto& name : names) {
    const std::string path = rel.empty() ? name : rel + "/" + name;
    if (IsTemporaryName(name)) {
      stats.skipped.push_back({path, "temporary name"});
      continue;
    }
    if (!IsValidUtf8(path)) {  // manifests are JSON, which holds UTF-8 only
      stats.skipped.push_back({path, "name is not UTF-8"});
      continue;
    }
    struct stat st {};
    if (::lstat((root / path).c_str(), &st) != 0) continue;  // removed meanwhile
    if (S_ISDIR(st.st_mode)) {
      TF_RETURN_IF_ERROR(Walk(root, path, files, stats));
    } else if (S_ISREG(st.st_mode)) {
      files.push_back(path);
    } else {
      stats.skipped.push_back({path, "not a regular file"});
    }
  }
  return OkStatus();
}

Result<CheckpointSync::Outcome> CheckpointSync::SnapshotFile(const fs::path& dir,
                                                             const std::string& rel,
                                                             std::set<std::string>& stored,
                                                             ManifestEntry& entry, SyncStats& stats,
                                                             std::string& why) {
  const fs::path path = dir / rel;
  struct stat first {};
  if (::lstat(path.c_str(), &first) != 0) {
    if (errno == ENOENT) return Outcome::kGone;
    why = "cannot read: " + ErrnoText();
    return Outcome::kChanged;
  }
  if (!S_ISREG(first.st_mode)) {
    why = "changed while being read";
    return Outcome::kChanged;
  }
  entry = {rel, static_cast<uint64_t>(first.st_size), "", first.st_mode & 0777u};
  auto known = known_.find(rel);
  if (known != known_.end() && known->second.size == entry.size &&
      known->second.mtime_ns == MtimeNs(first) && known->second.inode == first.st_ino &&
      known->second.device == first.st_dev && stored.count(known->second.sha256)) {
    entry.sha256 = known->second.sha256;
    ++stats.files_unchanged;
    return Outcome::kStored;
  }

  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    if (errno == ENOENT) return Outcome::kGone;
    why = "cannot read: " + ErrnoText();
    return Outcome::kChanged;
  }
  struct stat before {
  }, after{};
  std::string sha;
  if (::fstat(fd, &before) == 0 && SameVersion(before, first)) sha = HashOpenFile(fd, why);
  const bool read_whole = !sha.empty() && ::fstat(fd, &after) == 0 && SameVersion(after, first);
  ::close(fd);
  if (!read_whole) {
    if (why.empty()) why = "changed while being read";
    return Outcome::kChanged;
  }

  if (!stored.count(sha)) {
    Status put = client_.PutFileChecked(bucket_, keys_.Blob(sha), path, sha);
    if (!put.ok()) {
      struct stat now {};
      const bool still = ::lstat(path.c_str(), &now) == 0 && SameVersion(now, first);
      if (put.code() != StatusCode::kAborted && still) {
        return put.WithContext("cannot store checkpoint file " + rel);
      }
      why = "changed while being read";
      return Outcome::kChanged;
    }
    stored.insert(sha);
    ++stats.files_uploaded;
    stats.bytes_uploaded += entry.size;
  } else {
    ++stats.files_already_stored;
  }
  struct stat last {};
  if (::lstat(path.c_str(), &last) != 0 || !SameVersion(last, first)) {
    why = "changed while being read";
    return Outcome::kChanged;
  }
  known_[rel] = {entry.size, MtimeNs(first), first.st_ino, first.st_dev, sha};
  entry.sha256 = sha;
  return Outcome::kStored;
}

Result<SyncStats> CheckpointSync::Sync(const fs::path& dir) {
  MutexLock lock(mu_);
  SyncStats stats;
  std::optional<Manifest> previous;
  auto latest = ReadLatest();
  if (latest.ok()) {
    previous = std::move(*latest);
  } else if (latest.status().code() == StatusCode::kInternal) {
    spdlog::warn("{}; the next checkpoint snapshot is written whole", latest.status().message());
  } else {
    return latest.status();
  }

  std::vector<std::string> files;
  TF_RETURN_IF_ERROR(Walk(dir, "", files, stats));
  const std::string blobs_prefix = keys_.BlobsPrefix();
  TF_ASSIGN_OR_RETURN(std::vector<std::string> blob_keys, client_.ListKeys(bucket_, blobs_prefix));
  std::set<std::string> stored;
  for (const auto& k : blob_keys) stored.insert(k.substr(blobs_prefix.size()));
  TF_ASSIGN_OR_RETURN(std::vector<std::string> manifest_keys,
                      client_.ListKeys(bucket_, keys_.ManifestsPrefix()));
  Manifest next;
  next.seq = previous ? previous->seq : 0;
  for (const auto& k : manifest_keys) next.seq = std::max(next.seq, keys_.ManifestSeq(k));
  ++next.seq;  // after any manifest a cut-off sync left, so that none is overwritten

  std::map<std::string, const ManifestEntry*> before;
  if (previous) {
    for (const auto& e : previous->files) before[e.path] = &e;
  }
  for (const auto& rel : files) {
    ManifestEntry entry;
    std::string why;
    TF_ASSIGN_OR_RETURN(Outcome outcome, SnapshotFile(dir, rel, stored, entry, stats, why));
    if (outcome == Outcome::kStored) {
      next.files.push_back(std::move(entry));
    } else if (outcome == Outcome::kChanged) {
      auto it = before.find(rel);
      if (it != before.end()) {
        next.files.push_back(*it->second);
        why += " (kept the version of snapshot " + std::to_string(previous->seq) + ")";
      } else {
        why += " (left out: never synced before)";
      }
      stats.skipped.push_back({rel, why});
    }
  }
  for (const auto& f : next.files) {
    ++stats.files;
    stats.bytes += f.size;
  }
  if (previous && previous->files == next.files) {
    stats.seq = previous->seq;
    return stats;
  }
  // The manifest, then the pointer: until the pointer is written the previous snapshot stays.
  TF_RETURN_IF_ERROR(client_.PutBytes(bucket_, keys_.Manifest(next.seq), ManifestToJson(next)));
  TF_RETURN_IF_ERROR(client_.PutBytes(bucket_, keys_.Latest(), LatestToJson(next.seq)));
  stats.seq = next.seq;
  stats.new_snapshot = true;
  latest_ = next;
  CollectGarbage(next, previous, stats);
  return stats;
}

void CheckpointSync::CollectGarbage(const Manifest& current, const std::optional<Manifest>& kept,
                                    SyncStats& stats) {
  auto fail = [&](const Status& s) {
    stats.cleanup_error = s.ToString();
    spdlog::warn("checkpoint cleanup under tf://{}/{}: {}", bucket_, keys_.ManifestsPrefix(),
                 s.ToString());
  };
  auto manifests = client_.ListKeys(bucket_, keys_.ManifestsPrefix());
  if (!manifests.ok()) return fail(manifests.status());
  for (const auto& key : *manifests) {
    int64_t seq = keys_.ManifestSeq(key);
    if (seq < 0 || seq >= current.seq || (kept && seq == kept->seq)) continue;
    Status s = client_.Delete(bucket_, key);
    if (!s.ok()) return fail(s);
    ++stats.manifests_deleted;
  }
  std::set<std::string> referenced;
  for (const auto& f : current.files) referenced.insert(f.sha256);
  if (kept) {
    for (const auto& f : kept->files) referenced.insert(f.sha256);
  }
  const std::string blobs_prefix = keys_.BlobsPrefix();
  auto blobs = client_.ListKeys(bucket_, blobs_prefix);
  if (!blobs.ok()) return fail(blobs.status());
  for (const auto& key : *blobs) {
    if (referenced.count(key.substr(blobs_prefix.size()))) continue;
    Status s = client_.Delete(bucket_, key);
    if (!s.ok()) return fail(s);
    ++stats.blobs_deleted;
  }
}

Status CheckpointSync::RestoreInto(const fs::path& dir, const Manifest& manifest,
                                   RestoreStats& stats) {
  const std::string snapshot = "snapshot " + std::to_string(manifest.seq);
  for (const auto& e : manifest.files) {
    TF_ASSIGN_OR_RETURN(fs::path path, client::LocalPathFor(dir, e.path));
    std::error_code ec;
    fs::create_directories(path.parent_path(), ec);
    if (ec)
      return InvalidArgument("cannot create " + path.parent_path().string() + ": " + ec.message());
    Status got = client_.GetToFile(bucket_, keys_.Blob(e.sha256), path);
    if (got.code() == StatusCode::kNotFound) {
      return NotFound(snapshot + " lists " + e.path + ", but its content " + keys_.Blob(e.sha256) +
                      " is missing");
    }
    TF_RETURN_IF_ERROR(got);
    TF_ASSIGN_OR_RETURN(std::string sha, Sha256OfFile(path));
    struct stat st {};
    if (sha != e.sha256 || ::stat(path.c_str(), &st) != 0 ||
        static_cast<uint64_t>(st.st_size) != e.size) {
      return Internal(e.path + " of " + snapshot + " does not match its SHA-256 and size (got " +
                      sha + ", expected " + e.sha256 + "): the stored content is damaged");
    }
    if (::chmod(path.c_str(), e.mode & 0777u) != 0 || ::stat(path.c_str(), &st) != 0) {
      return InvalidArgument("cannot set the mode of " + path.string() + ": " + ErrnoText());
    }
    known_[e.path] = {e.size, MtimeNs(st), st.st_ino, st.st_dev, e.sha256};
    ++stats.files;
    stats.bytes += e.size;
  }
  return OkStatus();
}

Result<RestoreStats> CheckpointSync::Restore(const fs::path& dir) {
  MutexLock lock(mu_);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return InvalidArgument("cannot create " + dir.string() + ": " + ec.message());
  if (!fs::is_empty(dir, ec) || ec) {
    return FailedPrecondition("checkpoint directory " + dir.string() +
                              " is not empty: a snapshot is restored into an empty one only");
  }
  TF_ASSIGN_OR_RETURN(std::optional<Manifest> latest, ReadLatest());
  RestoreStats stats;
  if (!latest) return stats;
  stats.seq = latest->seq;
  Status s = RestoreInto(dir, *latest, stats);
  if (!s.ok()) {
    EmptyDirectory(dir);
    known_.clear();
    return s.WithContext("cannot restore checkpoint into " + dir.string());
  }
  return stats;
}

}  // namespace tf::worker
