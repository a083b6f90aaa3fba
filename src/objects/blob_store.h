// Where objects' content lives: blobs, named by random ids chosen by the object service and
// never by object keys. A blob is written once, sealed (made durable), read any number of
// times, and removed. Its metadata (which object it holds) is in the store, not here.
//
// The local implementation keeps each blob as one file, DIR/ab/cd/<id> for id "abcd...",
// written first as DIR/tmp/<id> and renamed into place once synced, so that a reader never sees
// a partial blob (docs/objects.md). One server owns a blob directory.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"

namespace tf::objects {

// Writes one blob. Not thread-safe; used by one thread at a time.
class BlobWriter {
 public:
  // Without Seal, or after a failed one, removes what was written.
  virtual ~BlobWriter() = default;
  // kResourceExhausted when the disk is full; kInternal for other I/O errors.
  virtual Status Append(std::string_view data) = 0;
  // Writes the checksums, syncs the content, and moves the blob into place: once this returns
  // OK the blob survives a crash. Errors as for Append.
  virtual Status Seal() = 0;
  virtual uint64_t size() const = 0;
};

// Reads one sealed blob. Not thread-safe. Keeps the file open, so a blob removed meanwhile
// stays readable to the end.
class BlobReader {
 public:
  virtual ~BlobReader() = default;
  virtual uint64_t size() const = 0;
  // Replaces *out with content bytes [offset, offset + n), after checking every block they
  // touch against its checksum. kInvalidArgument if the range passes the end; kInternal, naming
  // the blob and the block, if the content does not match its checksums.
  virtual Status ReadAt(uint64_t offset, size_t n, std::string* out) = 0;

  // For sending content without copying it through this process (sendfile): a file descriptor,
  // open as long as this reader, of a file that holds content byte i at offset i; -1 when the
  // content is not in such a file. Only ranges that Check accepted may be sent from it.
  virtual int content_fd() const { return -1; }
  // Checks content bytes [offset, offset + n) against their checksums as ReadAt does, without
  // returning them. Errors as for ReadAt.
  virtual Status Check(uint64_t offset, size_t n) {
    std::string ignored;
    return ReadAt(offset, n, &ignored);
  }

  // Where content byte `offset` (< size) lies in a file, for sending content from there
  // (sendfile): a descriptor, the byte's offset in that file, how many content bytes lie in a
  // row from there, and what keeps the descriptor open (null: this reader does, while it lives).
  // fd is -1 when the content is not in files. A reader of one file answers from content_fd;
  // one of several (objects/segmented_reader.h) names the file of the byte's segment.
  struct FileSpan {
    int fd = -1;
    uint64_t file_offset = 0;
    uint64_t length = 0;
    std::shared_ptr<void> keep_open;
  };
  virtual Result<FileSpan> FileAt(uint64_t offset) {
    if (offset >= size()) return InvalidArgument("offset past the end of the content");
    return FileSpan{content_fd(), offset, size() - offset, nullptr};
  }
  // Whether FileAt names files (true for content_fd() >= 0).
  virtual bool in_files() const { return content_fd() >= 0; }
};

// Thread-safe.
class BlobStore {
 public:
  virtual ~BlobStore() = default;
  // Names this store among all that share a database (store::PendingBlob::owner).
  virtual const std::string& owner() const = 0;
  // kInvalidArgument if `blob_id` is not 32 lowercase hex digits.
  virtual Result<std::unique_ptr<BlobWriter>> Create(const std::string& blob_id) = 0;
  // kNotFound if there is no sealed blob `blob_id`; kInternal if its file is damaged.
  virtual Result<std::unique_ptr<BlobReader>> Open(const std::string& blob_id) = 0;
  // Removes a sealed blob, durably. OK if there is none.
  virtual Status Remove(const std::string& blob_id) = 0;
  // Whether a reader opened before Remove reads the whole blob still (an open file does; an
  // external bucket, read range by range, does not). Where not, ObjectService keeps a blob
  // that is being read from removal until its readers are done.
  virtual bool readers_outlive_removal() const { return false; }
  // Removes every blob that was never sealed (left by a crash). Only for start-up, before any
  // writer exists. Returns how many were removed.
  virtual Result<int> RemoveUnsealed() = 0;
};

// Opens (creating it if needed) a blob directory, with a random owner id kept in DIR/owner.
Result<std::unique_ptr<BlobStore>> OpenLocalBlobStore(const std::filesystem::path& dir);

// A fresh random blob id: 32 lowercase hex digits.
std::string NewBlobId();

// True for 32 lowercase hex digits.
bool IsBlobId(std::string_view id);

// Removes every file directly in `dir` (what a crash left of blobs being written); returns how
// many.
Result<int> RemoveFilesIn(const std::filesystem::path& dir);

// The owner id kept in DIR/owner ("blobs-" and 16 hex digits), created durably on first use.
Result<std::string> LoadOrCreateOwner(const std::filesystem::path& dir);

}  // namespace tf::objects
