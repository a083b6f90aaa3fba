// Blobs as files on the local disk (blob_store.h, docs/objects.md).
//
// Durability: the content and its checksums are written to DIR/tmp/<id>, fsynced, renamed to
// DIR/ab/cd/<id>, and the directory is fsynced (as is a fan-out directory's parent when it is
// created).
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <future>
#include <system_error>
#include <vector>

#include "base/crypto.h"
#include "objects/blob_format.h"
#include "objects/blob_store.h"
#include "objects/crc32c.h"

namespace tf::objects {
namespace {

namespace fs = std::filesystem;

// Linux 5.14's madvise advice, missing from older headers (an older kernel answers EINVAL).
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif

constexpr uint64_t kSyncWindow = 8 << 20;

Status ErrnoStatus(const std::string& what, const fs::path& path, int err) {
  std::string message = what + " " + path.string() + ": " + std::strerror(err);
  if (err == ENOSPC || err == EDQUOT) return ResourceExhausted("disk full: " + message);
  return Internal(message);
}

Status FsyncPath(const fs::path& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus("cannot open", path, errno);
  int rc = ::fsync(fd);
  int err = errno;
  ::close(fd);
  return rc == 0 ? OkStatus() : ErrnoStatus("cannot fsync", path, err);
}

// Creates `dir` if missing, making its new entry in the parent durable.
Status EnsureDir(const fs::path& dir) {
  if (::mkdir(dir.c_str(), 0755) == 0) return FsyncPath(dir.parent_path());
  if (errno == EEXIST) return OkStatus();
  return ErrnoStatus("cannot create directory", dir, errno);
}

Status WriteAll(int fd, std::string_view data, const fs::path& path) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoStatus("cannot write", path, errno);
    data.remove_prefix(static_cast<size_t>(n));
  }
  return OkStatus();
}

Status ReadExactly(int fd, uint64_t offset, char* out, size_t n, const fs::path& path) {
  while (n > 0) {
    ssize_t got = ::pread(fd, out, n, static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return ErrnoStatus("cannot read", path, errno);
    if (got == 0) return Internal("blob " + path.string() + " is shorter than its footer says");
    out += got;
    offset += static_cast<uint64_t>(got);
    n -= static_cast<size_t>(got);
  }
  return OkStatus();
}

// Content is gathered into an aligned buffer of a few blocks and written a whole buffer at a
// time, so that the disk gets large writes. With O_DIRECT (when the file system allows it) the
// blocks go from that buffer to the disk without a copy into the page cache, which costs as much
// CPU as hashing them; the short last block and the trailer are written through the cache, and
// fsync covers both.
class LocalBlobWriter final : public BlobWriter {
 public:
  static constexpr size_t kAlignment = 4096;
  static constexpr size_t kBufferBytes = 4 * size_t{kBlockBytes};

  LocalBlobWriter(int fd, bool direct, fs::path temp, fs::path final_path)
      : fd_(fd),
        direct_(direct),
        temp_(std::move(temp)),
        final_(std::move(final_path)),
        buffer_(static_cast<char*>(std::aligned_alloc(kAlignment, kBufferBytes)), &std::free) {}

  ~LocalBlobWriter() override {
    if (fd_ >= 0) ::close(fd_);
    if (!sealed_) ::unlink(temp_.c_str());
  }

  Status Append(std::string_view data) override {
    if (!failed_.ok()) return failed_;
    if (buffer_ == nullptr) return failed_ = ResourceExhausted("out of memory for a blob buffer");
    while (!data.empty()) {
      // Whole blocks that need no gathering are written from where they lie: the caller's
      // buffer, when it is aligned as O_DIRECT needs (jemalloc, which the server links, page
      // aligns every large allocation, such as the pieces of a request body).
      if (fill_ == 0 && data.size() >= kBlockBytes &&
          reinterpret_cast<uintptr_t>(data.data()) % kAlignment == 0) {
        const size_t whole = data.size() / kBlockBytes * kBlockBytes;
        if (Status s = WriteBlocks(data.substr(0, whole)); !s.ok()) return failed_ = s;
        data.remove_prefix(whole);
        continue;
      }
      size_t take = std::min<size_t>(data.size(), kBufferBytes - fill_);
      std::memcpy(buffer_.get() + fill_, data.data(), take);
      fill_ += take;
      data.remove_prefix(take);
      if (fill_ == kBufferBytes) {
        if (Status s = WriteBuffered(kBufferBytes); !s.ok()) return failed_ = s;
      }
    }
    return OkStatus();
  }

  Status Seal() override {
    if (!failed_.ok()) return failed_;
    if (buffer_ == nullptr) return failed_ = ResourceExhausted("out of memory for a blob buffer");
    if (size_t whole = fill_ / kBlockBytes * kBlockBytes; whole > 0) {
      if (Status s = WriteBuffered(whole); !s.ok()) return failed_ = s;
    }
    std::string tail(buffer_.get(), fill_);
    if (fill_ > 0) crcs_.push_back(Crc32c(tail));
    const uint64_t size = written_ + fill_;
    tail += EncodeTrailer(size, crcs_);
    Status s;
    // The tail is not a whole aligned block: it goes through the page cache.
    if (direct_ && ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) & ~O_DIRECT) != 0) {
      s = ErrnoStatus("cannot change the mode of", temp_, errno);
    }
    if (s.ok()) s = WriteAll(fd_, tail, temp_);
    if (s.ok() && ::fsync(fd_) != 0) s = ErrnoStatus("cannot fsync", temp_, errno);
    if (s.ok() && ::close(fd_) != 0) s = ErrnoStatus("cannot close", temp_, errno);
    fd_ = -1;
    if (s.ok()) s = EnsureDir(final_.parent_path().parent_path());
    if (s.ok()) s = EnsureDir(final_.parent_path());
    if (s.ok() && ::rename(temp_.c_str(), final_.c_str()) != 0) {
      s = ErrnoStatus("cannot move blob to", final_, errno);
    }
    if (s.ok()) s = FsyncPath(final_.parent_path());
    if (!s.ok()) return failed_ = s;
    written_ = size;
    fill_ = 0;
    sealed_ = true;
    return OkStatus();
  }

  uint64_t size() const override { return written_ + fill_; }

 private:
  // Writes the first `bytes` of the buffer, whole blocks, and keeps what follows them.
  Status WriteBuffered(size_t bytes) {
    TF_RETURN_IF_ERROR(WriteBlocks(std::string_view(buffer_.get(), bytes)));
    fill_ -= bytes;
    std::memmove(buffer_.get(), buffer_.get() + bytes, fill_);
    return OkStatus();
  }

  // Writes whole blocks, from memory aligned for O_DIRECT, after the content written so far.
  Status WriteBlocks(std::string_view blocks) {
    for (size_t at = 0; at < blocks.size(); at += kBlockBytes) {
      crcs_.push_back(Crc32c(blocks.substr(at, kBlockBytes)));
    }
    TF_RETURN_IF_ERROR(WriteAll(fd_, blocks, temp_));
    written_ += blocks.size();
    if (direct_) return OkStatus();
    // Through the cache: start writeback of each whole window and wait for the one before it,
    // so that dirty pages stay few and the final fsync is short.
    while (written_ >= synced_ + kSyncWindow) {
      ::sync_file_range(fd_, static_cast<off_t>(synced_), kSyncWindow, SYNC_FILE_RANGE_WRITE);
      if (synced_ >= kSyncWindow) {
        ::sync_file_range(
            fd_, static_cast<off_t>(synced_ - kSyncWindow), kSyncWindow,
            SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER);
      }
      synced_ += kSyncWindow;
    }
    return OkStatus();
  }

  int fd_;
  const bool direct_;  // fd_ has O_DIRECT
  const fs::path temp_, final_;
  std::unique_ptr<char, decltype(&std::free)> buffer_;  // kBufferBytes, aligned
  size_t fill_ = 0;                                     // bytes in buffer_
  uint64_t written_ = 0;                                // whole blocks written
  std::vector<uint32_t> crcs_;                          // of the written blocks
  uint64_t synced_ = 0;  // without O_DIRECT: writeback started for [0, synced_)
  bool sealed_ = false;
  Status failed_;
};

class LocalBlobReader final : public BlobReader {
 public:
  LocalBlobReader(int fd, fs::path path, BlobFooter footer, std::vector<uint32_t> crcs)
      : fd_(fd), path_(std::move(path)), footer_(footer), crcs_(std::move(crcs)) {}
  ~LocalBlobReader() override {
    ::close(fd_);
    if (second_fd_ >= 0) ::close(second_fd_);
  }

  uint64_t size() const override { return footer_.size; }

  Status ReadAt(uint64_t offset, size_t n, std::string* out) override {
    if (offset > footer_.size || n > footer_.size - offset) {
      return InvalidArgument("read past the end of blob " + path_.filename().string());
    }
    if (n == 0) {
      out->clear();
      return OkStatus();
    }
    const BlockSpan span = CoverBlocks(footer_, offset, n);
    // Whole blocks are read and checked; aligned reads land in *out directly.
    std::string& buf = (span.start == offset && span.stop == offset + n) ? *out : scratch_;
    buf.resize(static_cast<size_t>(span.stop - span.start));
    TF_RETURN_IF_ERROR(ReadExactly(fd_, span.start, buf.data(), buf.size(), path_));
    TF_RETURN_IF_ERROR(CheckBlocks(buf, span, footer_, crcs_, path_.filename().string()));
    if (&buf != out) out->assign(buf, static_cast<size_t>(offset - span.start), n);
    return OkStatus();
  }

  int content_fd() const override { return fd_; }

  // The blocks are checked where they lie in the page cache, from which sendfile then sends
  // them: each block is brought in with MADV_POPULATE_READ through a read-only mapping (which
  // reads from the disk what is missing, through the file's read-ahead) and its CRC-32C is
  // taken from the mapping, without a copy (CheckBlocksMapped); where mapping is refused, each
  // block is read with pread into a reused buffer and checked there. A range of several blocks
  // is checked in two halves at once, the second on a helper thread through a second
  // descriptor (its own read-ahead): the first touch of a page-cache page can cost a fault in
  // the host of a virtual machine that was handed the page back while it was free, and two
  // threads take those faults twice as fast (docs/benchmarks/objects.md, "Why slow GETs burn
  // CPU").
  Status Check(uint64_t offset, size_t n) override {
    if (offset > footer_.size || n > footer_.size - offset) {
      return InvalidArgument("read past the end of blob " + path_.filename().string());
    }
    if (n == 0) return OkStatus();
    const BlockSpan span = CoverBlocks(footer_, offset, n);
    const uint64_t half = span.first + (span.end - span.first + 1) / 2;
    if (half < span.end && second_fd_ == kNotOpened) second_fd_ = OpenAgain();
    if (half == span.end || second_fd_ < 0) {
      return CheckBlocksFrom(fd_, span.first, span.end, scratch_);
    }
    std::future<Status> second;
    try {
      second = std::async(std::launch::async, [this, half, end = span.end] {
        return CheckBlocksFrom(second_fd_, half, end, second_scratch_);
      });
    } catch (const std::system_error&) {  // no thread to be had: one thread does it all
      return CheckBlocksFrom(fd_, span.first, span.end, scratch_);
    }
    Status first = CheckBlocksFrom(fd_, span.first, half, scratch_);
    Status rest = second.get();
    return first.ok() ? rest : first;
  }

 private:
  static constexpr int kNotOpened = -2;
  // Below this a copy costs less than a mapping, whose unmapping interrupts every core running
  // one of the server's threads to flush its TLB: a small object's block is read.
  static constexpr uint64_t kMapFromBytes = uint64_t{256} << 10;

  // The blob's file opened again, or -1 if its path no longer names the file fd_ has open (the
  // blob was removed while this reader had it).
  int OpenAgain() const {
    int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    struct stat a {
    }, b{};
    if (::fstat(fd_, &a) != 0 || ::fstat(fd, &b) != 0 || a.st_dev != b.st_dev ||
        a.st_ino != b.st_ino) {
      ::close(fd);
      return -1;
    }
    return fd;
  }

  // Checks blocks [first, end) through `fd`: mapped, or read into `scratch` where they are
  // fewer than kMapFromBytes or mapping is not to be had.
  Status CheckBlocksFrom(int fd, uint64_t first, uint64_t end, std::string& scratch) {
    const uint64_t bytes = std::min(footer_.size, end * footer_.block_bytes) -
                           std::min(footer_.size, first * footer_.block_bytes);
    if (bytes >= kMapFromBytes && !map_refused_.load(std::memory_order_relaxed)) {
      bool refused = false;
      Status mapped = CheckBlocksMapped(fd, first, end, &refused);
      if (!refused) return mapped;
      map_refused_.store(true, std::memory_order_relaxed);
    }
    return CheckBlocksRead(fd, first, end, scratch);
  }

  // Maps the blocks' bytes read-only and checks each block where it lies in the page cache: the
  // block is brought in with MADV_POPULATE_READ, then its CRC-32C taken from the mapping. A file
  // shortened before a block is brought in makes the populate fail (EFAULT), an error naming
  // the blob, where touching the missing pages would be a bus error; only a file cut between a
  // block's populate and its CRC (microseconds) is still a bus error. Sets *refused, and checks
  // nothing, where the mapping or the advice is not to be had (a file system that cannot map, a
  // kernel before 5.14).
  Status CheckBlocksMapped(int fd, uint64_t first, uint64_t end, bool* refused) const {
    const uint64_t block = footer_.block_bytes;
    const uint64_t start = first * block;
    const uint64_t stop = std::min(footer_.size, end * block);
    const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
    const uint64_t base = start / page * page;
    const size_t length = static_cast<size_t>(stop - base);
    void* p = ::mmap(nullptr, length, PROT_READ, MAP_SHARED, fd, static_cast<off_t>(base));
    if (p == MAP_FAILED) {
      *refused = true;
      return OkStatus();
    }
    char* const at = static_cast<char*>(p);
    Status status;
    for (uint64_t b = first; b < end && status.ok(); ++b) {
      BlockSpan one{b, b + 1, b * block, std::min(footer_.size, (b + 1) * block)};
      char* const bytes = at + (one.start - base);
      char* const from = at + (one.start - base) / page * page;
      int rc;
      do {
        rc = ::madvise(from, static_cast<size_t>(bytes + (one.stop - one.start) - from),
                       MADV_POPULATE_READ);
      } while (rc != 0 && errno == EINTR);
      if (rc != 0 && errno == EINVAL && b == first) {
        *refused = true;
        break;
      }
      if (rc != 0) {
        status = Internal("cannot read blob " + path_.string() + " bytes " +
                          std::to_string(one.start) + " to " + std::to_string(one.stop) + ": " +
                          std::strerror(errno) + " (shorter than its footer says?)");
        break;
      }
      status = CheckBlocks(std::string_view(bytes, static_cast<size_t>(one.stop - one.start)), one,
                           footer_, crcs_, path_.filename().string());
    }
    ::munmap(p, length);
    return status;
  }

  // Reads blocks [first, end) one at a time through `fd` into `scratch` and checks each.
  Status CheckBlocksRead(int fd, uint64_t first, uint64_t end, std::string& scratch) const {
    const uint64_t block = footer_.block_bytes;
    for (uint64_t b = first; b < end; ++b) {
      BlockSpan one{b, b + 1, b * block, std::min(footer_.size, (b + 1) * block)};
      scratch.resize(static_cast<size_t>(one.stop - one.start));
      TF_RETURN_IF_ERROR(ReadExactly(fd, one.start, scratch.data(), scratch.size(), path_));
      TF_RETURN_IF_ERROR(CheckBlocks(scratch, one, footer_, crcs_, path_.filename().string()));
    }
    return OkStatus();
  }

  const int fd_;
  const fs::path path_;
  const BlobFooter footer_;
  const std::vector<uint32_t> crcs_;
  std::string scratch_;
  int second_fd_ = kNotOpened;            // for Check's second half: fd_'s file opened again, or -1
  std::string second_scratch_;            // Check's second half reads into this
  std::atomic<bool> map_refused_{false};  // mapping was refused once: Check reads instead
};

class LocalBlobStore final : public BlobStore {
 public:
  LocalBlobStore(fs::path dir, std::string owner)
      : dir_(std::move(dir)), owner_(std::move(owner)) {}

  const std::string& owner() const override { return owner_; }
  // A reader holds the blob's file open, and a removed file stays readable through it.
  bool readers_outlive_removal() const override { return true; }

  Result<std::unique_ptr<BlobWriter>> Create(const std::string& blob_id) override {
    TF_RETURN_IF_ERROR(CheckId(blob_id));
    fs::path temp = dir_ / "tmp" / blob_id;
    constexpr int kFlags = O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC;
    bool direct = true;
    int fd = ::open(temp.c_str(), kFlags | O_DIRECT, 0600);
    if (fd < 0 && errno == EINVAL) {  // a file system without O_DIRECT (tmpfs)
      direct = false;
      fd = ::open(temp.c_str(), kFlags, 0600);
    }
    if (fd < 0) return ErrnoStatus("cannot create", temp, errno);
    return std::unique_ptr<BlobWriter>(new LocalBlobWriter(fd, direct, temp, PathOf(blob_id)));
  }

  Result<std::unique_ptr<BlobReader>> Open(const std::string& blob_id) override {
    TF_RETURN_IF_ERROR(CheckId(blob_id));
    fs::path path = PathOf(blob_id);
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT) return NotFound("no blob " + blob_id);
    if (fd < 0) return ErrnoStatus("cannot open", path, errno);
    auto reader = ReadTrailer(fd, path);
    if (!reader.ok()) ::close(fd);
    return reader;
  }

  Status Remove(const std::string& blob_id) override {
    TF_RETURN_IF_ERROR(CheckId(blob_id));
    fs::path path = PathOf(blob_id);
    if (::unlink(path.c_str()) != 0) {
      return errno == ENOENT ? OkStatus() : ErrnoStatus("cannot remove", path, errno);
    }
    return FsyncPath(path.parent_path());
  }

  Result<int> RemoveUnsealed() override { return RemoveFilesIn(dir_ / "tmp"); }

 private:
  static Status CheckId(const std::string& blob_id) {
    if (!IsBlobId(blob_id)) return InvalidArgument("not a blob id: '" + blob_id + "'");
    return OkStatus();
  }

  fs::path PathOf(const std::string& id) const {
    return dir_ / id.substr(0, 2) / id.substr(2, 2) / id;
  }

  Result<std::unique_ptr<BlobReader>> ReadTrailer(int fd, const fs::path& path) {
    struct stat st {};
    if (::fstat(fd, &st) != 0) return ErrnoStatus("cannot stat", path, errno);
    const auto file_bytes = static_cast<uint64_t>(st.st_size);
    if (file_bytes < kFooterBytes) return Internal("blob " + path.string() + " is truncated");
    std::string footer_bytes(kFooterBytes, '\0');
    TF_RETURN_IF_ERROR(
        ReadExactly(fd, file_bytes - kFooterBytes, footer_bytes.data(), kFooterBytes, path));
    auto footer = DecodeFooter(footer_bytes, file_bytes);
    if (!footer.ok()) return footer.status().WithContext(path.string());
    std::string table(BlockCount(footer->size, footer->block_bytes) * 4, '\0');
    TF_RETURN_IF_ERROR(ReadExactly(fd, footer->size, table.data(), table.size(), path));
    auto crcs = DecodeTable(table, *footer);
    if (!crcs.ok()) return crcs.status().WithContext(path.string());
    return std::unique_ptr<BlobReader>(
        new LocalBlobReader(fd, path, *footer, std::move(crcs).value()));
  }

  const fs::path dir_;
  const std::string owner_;
};

}  // namespace

std::string NewBlobId() { return RandomHex(16); }

Result<int> RemoveFilesIn(const std::filesystem::path& dir) {
  int removed = 0;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (::unlink(entry.path().c_str()) != 0) {
      return ErrnoStatus("cannot remove", entry.path(), errno);
    }
    ++removed;
  }
  if (ec) return Internal("cannot list " + dir.string() + ": " + ec.message());
  return removed;
}

bool IsBlobId(std::string_view id) {
  if (id.size() != 32) return false;
  for (char c : id) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

Result<std::string> LoadOrCreateOwner(const std::filesystem::path& dir) {
  fs::path path = dir / "owner";
  std::string owner;
  if (std::ifstream in(path); in && std::getline(in, owner) && !owner.empty()) return owner;
  owner = "blobs-" + RandomHex(8);
  fs::path temp = dir / "owner.tmp";
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return ErrnoStatus("cannot create", temp, errno);
  Status s = WriteAll(fd, owner + "\n", temp);
  if (s.ok() && ::fsync(fd) != 0) s = ErrnoStatus("cannot fsync", temp, errno);
  ::close(fd);
  if (s.ok() && ::rename(temp.c_str(), path.c_str()) != 0) {
    s = ErrnoStatus("cannot create", path, errno);
  }
  if (s.ok()) s = FsyncPath(dir);
  if (!s.ok()) return s;
  return owner;
}

Result<std::unique_ptr<BlobStore>> OpenLocalBlobStore(const std::filesystem::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Internal("cannot create " + dir.string() + ": " + ec.message());
  // The server's alone: jobs that may pass through the data directory (docs/security.md) do not
  // even list the blobs' names.
  fs::permissions(dir, fs::perms::owner_all, fs::perm_options::replace, ec);
  if (ec) return Internal("cannot make " + dir.string() + " private (mode 0700): " + ec.message());
  TF_RETURN_IF_ERROR(EnsureDir(dir / "tmp"));
  TF_ASSIGN_OR_RETURN(std::string owner, LoadOrCreateOwner(dir));
  return std::unique_ptr<BlobStore>(new LocalBlobStore(dir, std::move(owner)));
}

}  // namespace tf::objects
