#include "datasets/shard_cache.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <functional>
#include <iterator>
#include <new>
#include <utility>
#include <vector>

#include "base/crypto.h"
#include "base/sha256_stream.h"
#include "datasets/fork_safe_locks.h"

// Linux 5.14's madvise advice, missing from older headers (an older kernel answers EINVAL).
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif

namespace tf::datasets {
namespace {

namespace fs = std::filesystem;

std::string Errno(const std::string& what, const fs::path& path) {
  return what + " " + path.string() + ": " + std::strerror(errno);
}

// The SHA-256 and size of a file, hex.
Result<std::pair<std::string, uint64_t>> HashFile(const fs::path& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Internal(Errno("cannot open", path));
  Sha256Stream sha;
  std::vector<char> buf(1 << 20);
  uint64_t size = 0;
  for (;;) {
    ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      Status s = Internal(Errno("cannot read", path));
      ::close(fd);
      return s;
    }
    if (n == 0) break;
    sha.Update(std::string_view(buf.data(), n));
    size += n;
  }
  ::close(fd);
  return std::make_pair(sha.FinishHex(), size);
}

// `path` opened with `flags` and locked with flock `operation` (waiting for it): the
// descriptor, whose closing gives the lock back. kNotFound if the file is not there.
Result<int> OpenLocked(const fs::path& path, int flags, int operation) {
  int fd = ::open(path.c_str(), flags | O_CLOEXEC, 0644);
  if (fd < 0 && errno == ENOENT) return NotFound(path.string() + " is not in the cache");
  if (fd < 0) return Internal(Errno("cannot open", path));
  TrackLockFd(fd);  // not kept by a process forked from now on, the wait for the lock included
  while (::flock(fd, operation) != 0) {
    if (errno != EINTR) {
      Status s = Internal(Errno("cannot lock", path));
      CloseLockFd(fd);
      return s;
    }
  }
  return fd;
}

// An exclusive flock held for the life of this object.
class FileLock {
 public:
  static Result<FileLock> Take(const fs::path& path) {
    TF_ASSIGN_OR_RETURN(int fd, OpenLocked(path, O_RDWR | O_CREAT, LOCK_EX));
    return FileLock(fd);
  }
  FileLock(FileLock&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  // Hands the locked descriptor over to the caller.
  int Release() { return std::exchange(fd_, -1); }
  ~FileLock() {
    CloseLockFd(fd_);  // closing releases the lock
  }

 private:
  explicit FileLock(int fd) : fd_(fd) {}
  int fd_;
};

}  // namespace

namespace {

// The mappings of this process by file, so that threads share them (MappedShard::Open).
struct MappingRegistry {
  struct Key {
    dev_t dev;
    ino_t ino;
    off_t size;
    auto operator<=>(const Key&) const = default;
  };
  struct Slot {
    std::weak_ptr<const MappedShard> mapped;
    bool mapping = false;  // a thread is mapping this file now
  };
  Mutex mu;
  std::condition_variable mapped;  // a slot's mapping ended
  std::map<Key, Slot> live GUARDED_BY(mu);
  int64_t made GUARDED_BY(mu) = 0;
  std::function<void()> while_mapping GUARDED_BY(mu);  // MappedShard::SetWhileMappingForTesting's
};

MappingRegistry* registry_instance = nullptr;

// A process forked by another thread than one in the registry (a DataLoader starting its
// workers while a reader of the parent maps a shard) must not inherit the mutex locked, nor a
// slot "being mapped" by a thread that does not exist in the child: it would wait for it forever.
// So fork waits for the mutex, and the child, where only the forking thread lives on, forgets
// the mappings in progress and the other threads' waits.
// The mutex is taken in one handler and given back in another, which the analysis cannot follow.
void LockBeforeFork() NO_THREAD_SAFETY_ANALYSIS { registry_instance->mu.Lock(); }
void UnlockInParent() NO_THREAD_SAFETY_ANALYSIS { registry_instance->mu.Unlock(); }
void ResetInChild() NO_THREAD_SAFETY_ANALYSIS {
  MappingRegistry& r = *registry_instance;
  for (auto it = r.live.begin(); it != r.live.end();) {
    it = it->second.mapping ? r.live.erase(it) : std::next(it);
  }
  new (&r.mapped) std::condition_variable;  // its waiters were the parent's other threads
  r.mu.Unlock();
}

MappingRegistry& Mappings() {
  static MappingRegistry* registry = [] {
    registry_instance = new MappingRegistry;  // never destroyed: used at exit
    ::pthread_atfork(LockBeforeFork, UnlockInParent, ResetInChild);
    return registry_instance;
  }();
  return *registry;
}

}  // namespace

Result<std::shared_ptr<const MappedShard>> MappedShard::Open(const fs::path& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return NotFound(path.string() + " is not in the cache");
    return Internal(Errno("cannot open", path));
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    Status s = Internal(Errno("cannot stat", path));
    ::close(fd);
    return s;
  }
  const MappingRegistry::Key key{st.st_dev, st.st_ino, st.st_size};
  MappingRegistry& registry = Mappings();
  {
    MutexLock lock(registry.mu);
    for (;;) {
      MappingRegistry::Slot& slot = registry.live[key];
      if (std::shared_ptr<const MappedShard> shared = slot.mapped.lock()) {
        ::close(fd);
        return shared;
      }
      if (!slot.mapping) {
        slot.mapping = true;  // this thread maps it; others asking meanwhile wait for it
        break;
      }
      lock.Wait(registry.mapped);
    }
  }
  if (std::function<void()> hook = [&] {
        MutexLock lock(registry.mu);
        return registry.while_mapping;
      }()) {
    hook();
  }
  const size_t size = static_cast<size_t>(st.st_size);
  void* p = size == 0 ? nullptr : ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  Result<std::shared_ptr<const MappedShard>> out = Internal(Errno("cannot map", path));
  // Large pages where the kernel has them for the file (see MappedShard): refused where
  // transparent huge pages are off or not built, which only loses the speed-up.
  if (p != MAP_FAILED && p != nullptr) ::madvise(p, size, MADV_HUGEPAGE);
  if (p != MAP_FAILED) {
    out = std::shared_ptr<const MappedShard>(
        new MappedShard(static_cast<const char*>(p), size, path.string(), st.st_dev, st.st_ino));
  }
  ::close(fd);
  MutexLock lock(registry.mu);
  MappingRegistry::Slot& slot = registry.live[key];
  slot.mapping = false;
  if (out.ok()) {
    slot.mapped = *out;
    ++registry.made;
  }
  for (auto it = registry.live.begin(); it != registry.live.end();) {
    const bool unused = !it->second.mapping && it->second.mapped.expired();
    it = unused ? registry.live.erase(it) : std::next(it);
  }
  registry.mapped.notify_all();
  return out;
}

void MappedShard::SetWhileMappingForTesting(std::function<void()> hook) {
  MappingRegistry& registry = Mappings();
  MutexLock lock(registry.mu);
  registry.while_mapping = std::move(hook);
}

int64_t MappedShard::mappings_made() {
  MappingRegistry& registry = Mappings();
  MutexLock lock(registry.mu);
  return registry.made;
}

Status MappedShard::Populate(uint64_t offset, uint64_t length) const {
  if (offset >= size_ || length == 0) return OkStatus();
  length = std::min<uint64_t>(length, size_ - offset);
  const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  const uint64_t begin = offset / page * page;  // the mapping starts on a page
  const uint64_t end = offset + length;
  char* at = const_cast<char*>(data_) + begin;
  if (::madvise(at, end - begin, MADV_POPULATE_READ) == 0) return OkStatus();
  if (errno != EINVAL) {
    return Internal("cannot read " + path_ + " bytes " + std::to_string(offset) + " to " +
                    std::to_string(end) + " into memory: " + std::strerror(errno) +
                    " (shortened since it was mapped?)");
  }
  // A kernel without MADV_POPULATE_READ (before Linux 5.14): one read per page. A file shortened
  // since it was mapped then ends in a bus error here, as it would have when read.
  volatile char sink = 0;
  for (uint64_t i = begin; i < end; i += page) sink = sink + data_[i];
  return OkStatus();
}

bool MappedShard::Resident(uint64_t offset, uint64_t length) const {
  if (offset >= size_ || length == 0) return true;
  length = std::min<uint64_t>(length, size_ - offset);
  const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  const uint64_t begin = offset / page * page;
  const uint64_t end = offset + length;
  std::vector<unsigned char> in((end - begin + page - 1) / page);
  if (::mincore(const_cast<char*>(data_) + begin, end - begin, in.data()) != 0) return false;
  return std::all_of(in.begin(), in.end(), [](unsigned char c) { return (c & 1) != 0; });
}

MappedShard::~MappedShard() {
  if (data_ != nullptr) ::munmap(const_cast<char*>(data_), size_);
}

Result<std::unique_ptr<ShardCache>> ShardCache::Open(const fs::path& dir, uint64_t max_bytes) {
  TF_RETURN_IF_ERROR(PrepareCacheDirectory(dir));
  return std::unique_ptr<ShardCache>(new ShardCache(dir, max_bytes));
}

Status PrepareCacheDirectory(const fs::path& given) {
  // "cache/" names the directory "cache", whose parent is then the one to make as usual.
  const fs::path dir = given.has_filename() ? given : given.parent_path();
  std::error_code ec;
  if (dir.has_parent_path()) fs::create_directories(dir.parent_path(), ec);
  if (ec) return Internal("cannot create the shard cache " + dir.string() + ": " + ec.message());
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return Internal("cannot create the shard cache " + dir.string() + ": " + std::strerror(errno));
  }
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) {
    return Internal("cannot open the shard cache " + dir.string() + ": " + std::strerror(errno));
  }
  if (!S_ISDIR(st.st_mode)) {
    return InvalidArgument("the shard cache " + dir.string() + " is not a directory");
  }
  // Shards found in the cache are checked for damage, not for who put them there: whoever can
  // write into the directory decides what training reads.
  const std::string choose =
      ": another user could put shards there. Choose a directory of your own (--cache-dir, or "
      "$TENSORFLEET_DATASET_CACHE)";
  if (st.st_uid != ::geteuid()) {
    return PermissionDenied("the shard cache " + dir.string() + " belongs to uid " +
                            std::to_string(st.st_uid) + ", not to this user (uid " +
                            std::to_string(::geteuid()) + ")" + choose);
  }
  if ((st.st_mode & S_IWOTH) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return PermissionDenied("the shard cache " + dir.string() +
                            " is writable by every user (mode " + mode + ")" + choose +
                            ", or `chmod o-w " + dir.string() + "`");
  }
  return OkStatus();
}

fs::path ShardCache::PathOf(const ShardInfo& shard) const { return dir_ / (shard.sha256 + ".tfs"); }

int64_t ShardCache::downloads() const {
  MutexLock lock(mu_);
  return downloads_;
}

Status ShardCache::Ensure(const ShardInfo& shard, ShardFetcher& fetcher) {
  bool downloaded = false;
  Status s = [&]() -> Status {
    // The shard's lock covers the download and the taking of the hold, so that no Evict (which
    // takes it too) removes the file in between.
    TF_ASSIGN_OR_RETURN(FileLock lock, FileLock::Take(LockPathOf(shard.sha256)));
    Status held = Hold(shard);
    if (held.ok()) {
      std::error_code ec;
      fs::last_write_time(PathOf(shard), fs::file_time_type::clock::now(), ec);  // recently used
      return held;
    }
    if (held.code() != StatusCode::kNotFound) return held;
    downloaded = true;
    Status first = Download(shard, fetcher);
    if (!first.ok() && first.code() != StatusCode::kNotFound &&
        first.code() != StatusCode::kPermissionDenied &&
        first.code() != StatusCode::kUnauthenticated) {
      first = Download(shard, fetcher);
      if (!first.ok()) {
        return first.WithContext("shard " + std::to_string(shard.ordinal) + " (tf://" +
                                 shard.bucket + "/" + shard.key + "), downloaded twice");
      }
    }
    TF_RETURN_IF_ERROR(first);
    return Hold(shard);
  }();
  TF_RETURN_IF_ERROR(s);
  // Only a download makes the directory grow. A shard found in place costs no scan of the
  // directory (a stat of every file in it, each a disk read when the inodes are not cached).
  if (downloaded) Evict();
  return OkStatus();
}

fs::path ShardCache::LockPathOf(const std::string& sha256) const {
  return dir_ / (sha256 + ".lock");
}

Status ShardCache::Hold(const ShardInfo& shard) {
  TF_ASSIGN_OR_RETURN(int fd, OpenLocked(PathOf(shard), O_RDONLY, LOCK_SH));
  MutexLock lock(mu_);
  held_[shard.sha256].push_back(fd);
  return OkStatus();
}

Status ShardCache::Download(const ShardInfo& shard, ShardFetcher& fetcher) {
  const fs::path temp = dir_ / (shard.sha256 + ".tmp-" + RandomHex(4));
  {
    MutexLock lock(mu_);
    ++downloads_;
  }
  std::error_code ec;
  Status s = [&]() -> Status {
    TF_RETURN_IF_ERROR(fetcher.Fetch(shard, temp));
    TF_ASSIGN_OR_RETURN(auto got, HashFile(temp));
    if (got.first != shard.sha256 || got.second != static_cast<uint64_t>(shard.bytes)) {
      return Internal("tf://" + shard.bucket + "/" + shard.key + " arrived as " +
                      std::to_string(got.second) + " bytes with SHA-256 " + got.first +
                      ", but the index says " + std::to_string(shard.bytes) + " bytes with " +
                      shard.sha256);
    }
    fs::rename(temp, PathOf(shard), ec);
    if (ec) return Internal("cannot move " + temp.string() + " into place: " + ec.message());
    return OkStatus();
  }();
  if (!s.ok()) fs::remove(temp, ec);
  return s;
}

void ShardCache::Release(const ShardInfo& shard) {
  bool evict = false;
  {
    MutexLock lock(mu_);
    auto it = held_.find(shard.sha256);
    if (it == held_.end()) return;
    // A hold on a file since removed (dropped as damaged, and downloaded again) goes first, so
    // that the holds left keep the file that is there now.
    std::vector<int>& fds = it->second;
    struct stat now {};
    const bool there = ::stat(PathOf(shard).c_str(), &now) == 0;
    size_t pick = fds.size() - 1;
    for (size_t i = 0; there && i < fds.size(); ++i) {
      struct stat held {};
      if (::fstat(fds[i], &held) != 0 || held.st_dev != now.st_dev || held.st_ino != now.st_ino) {
        pick = i;
        break;
      }
    }
    CloseLockFd(fds[pick]);  // gives back its shared lock
    fds.erase(fds.begin() + static_cast<std::ptrdiff_t>(pick));
    if (fds.empty()) held_.erase(it);
    evict = over_bound_;
  }
  // Shards held when the directory last grew kept it over its bound: it may go back under now.
  if (evict) Evict();
}

ShardCache::~ShardCache() {
  for (auto& [sha, fds] : held_) {
    for (int fd : fds) CloseLockFd(fd);
  }
}

Result<std::shared_ptr<const MappedShard>> ShardCache::Map(const ShardInfo& shard) {
  return MappedShard::Open(PathOf(shard));
}

void ShardCache::Drop(const ShardInfo& shard, const MappedShard* damaged) {
  // Under the shard's lock, so that no download of it is halfway through a rename.
  auto lock = FileLock::Take(LockPathOf(shard.sha256));
  const fs::path path = PathOf(shard);
  struct stat st {};
  if (damaged != nullptr && (::stat(path.c_str(), &st) != 0 || !damaged->IsFile(st))) return;
  std::error_code ec;
  fs::remove(path, ec);
}

ReadSlot::~ReadSlot() {
  CloseLockFd(fd_);  // closing gives the turn back
}

Result<std::optional<ReadSlot>> ShardCache::TryTakeReadSlot(int slots) {
  for (int i = 0; i < slots; ++i) {
    const fs::path path = dir_ / ("read-slot-" + std::to_string(i) + ".lock");
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return Internal(Errno("cannot open", path));
    TrackLockFd(fd);
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) return std::optional<ReadSlot>(ReadSlot(fd));
    const int err = errno;
    CloseLockFd(fd);
    if (err != EWOULDBLOCK && err != EINTR) {
      errno = err;
      return Internal(Errno("cannot lock", path));
    }
  }
  return std::optional<ReadSlot>();
}

Result<ReadSlot> ShardCache::TakeReadSlot(int slots) {
  TF_ASSIGN_OR_RETURN(std::optional<ReadSlot> free, TryTakeReadSlot(slots));
  if (free) return std::move(*free);
  // All taken: wait for one of them, a different one for each waiter of this process.
  static std::atomic<unsigned> turn{0};
  const int i = static_cast<int>((turn.fetch_add(1) + static_cast<unsigned>(::getpid())) %
                                 static_cast<unsigned>(slots));
  const fs::path path = dir_ / ("read-slot-" + std::to_string(i) + ".lock");
  TF_ASSIGN_OR_RETURN(FileLock lock, FileLock::Take(path));
  return ReadSlot(lock.Release());
}

namespace {

// Takes an exclusive flock on `path` if no one holds any lock on it; -1 if someone does (or
// the file cannot be opened).
int TryLockExclusive(const fs::path& path, int flags) {
  Result<int> fd = OpenLocked(path, flags, LOCK_EX | LOCK_NB);
  return fd.ok() ? *fd : -1;
}

}  // namespace

bool ShardCache::RemoveUnlessInUse(const fs::path& path, const std::string& sha256) {
  // The shard's lock first: no download of it is under way, nor an Ensure about to hold it.
  const int shard_lock = TryLockExclusive(LockPathOf(sha256), O_RDWR | O_CREAT);
  if (shard_lock < 0) return false;
  bool removed = false;
  if (path.extension() == ".tfs") {
    // Then no reader, of any process, holds the file (each hold is a shared lock on it).
    const int file = TryLockExclusive(path, O_RDONLY);
    if (file >= 0) {
      std::error_code ec;
      removed = fs::remove(path, ec);
      CloseLockFd(file);
    }
  } else {  // a download's temporary file, left by a process that ended before renaming it
    std::error_code ec;
    removed = fs::remove(path, ec);
  }
  CloseLockFd(shard_lock);
  return removed;
}

void ShardCache::Evict() {
  struct Entry {
    fs::path path;
    fs::file_time_type used;
    uint64_t size;
    std::string sha;
  };
  std::vector<Entry> entries;
  uint64_t total = 0;
  std::error_code ec;
  for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path& p = it->path();
    const std::string name = p.filename().string();
    if (const size_t temp = name.find(".tmp-"); temp != std::string::npos) {
      RemoveUnlessInUse(p, name.substr(0, temp));
      continue;
    }
    if (p.extension() != ".tfs") continue;
    std::error_code e2;
    uint64_t size = it->file_size(e2);
    auto used = it->last_write_time(e2);
    if (e2) continue;
    entries.push_back(Entry{p, used, size, p.stem().string()});
    total += size;
  }
  if (total > max_bytes_) {
    std::sort(entries.begin(), entries.end(),
              [](const Entry& a, const Entry& b) { return a.used < b.used; });
    for (const Entry& e : entries) {
      if (total <= max_bytes_) break;
      if (RemoveUnlessInUse(e.path, e.sha)) total -= e.size;
    }
  }
  MutexLock lock(mu_);
  over_bound_ = total > max_bytes_;
}

}  // namespace tf::datasets
