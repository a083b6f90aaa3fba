// The object service: buckets of objects per project, metadata in the store, content in a blob
// store. What it promises:
//
//  - Atomic replacement: an object becomes visible only when its upload commits, and then whole.
//    A reader sees the old object or the new one, never part of either; a reader that has opened
//    an object reads it to the end even if it is replaced or deleted meanwhile.
//  - Durability: an upload's content is synced before its metadata commits, so a committed
//    object survives a crash.
//  - No leaks: every blob is recorded as pending before it is written and forgotten only when an
//    object refers to it or its file is gone; Recover() (at start) and ReclaimPending() remove
//    what a crash or a failed call left.
//  - Verified reads: content is checked against per-block checksums as it is read; a damaged
//    blob gives an error, never wrong bytes.
//  - Keys are data: they are validated (objects/names.h) and stored, never used as paths.
//
// Thread-safe. Every call blocks on the store and the disk: run it on the blocking pool. Errors:
// kNotFound for a missing bucket or object, kInvalidArgument for bad names, keys or metadata,
// kAlreadyExists for a taken bucket name, kFailedPrecondition for deleting a bucket that holds
// objects, kResourceExhausted for a full disk, kInternal for damaged content, and the store's
// kUnavailable when the database is down.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "base/mutex.h"
#include "base/status.h"
#include "objects/blob_store.h"
#include "objects/checksums.h"
#include "store/store.h"

namespace tf::objects {

inline constexpr const char* kDefaultContentType = "application/octet-stream";

// One part of an object made by a multipart upload.
struct ObjectPart {
  uint64_t size = 0;
  // The bytes of the checksum the part was kept with, of the object's checksum algorithm; ""
  // if it has none.
  std::string checksum;
};

struct ObjectInfo {
  std::string bucket;
  std::string key;
  uint64_t size = 0;
  std::string etag;    // MD5 of the content, hex; for a multipart upload's, S3's (multipart.h)
  std::string sha256;  // hex
  std::string content_type;
  std::map<std::string, std::string> metadata;
  TimeMs modified_at = 0;
  std::map<std::string, std::string> headers;  // see kStoredHeaders (names.h)
  // The checksum a client sent with the content (or asked for on a copy), kNone if none: its
  // bytes, as ContentChecksum::Finish gives them.
  ChecksumAlgorithm checksum_algorithm = ChecksumAlgorithm::kNone;
  std::string checksum;
  // A multipart upload's object with a COMPOSITE checksum: `checksum` is of its parts'
  // checksums, and this many parts. 0 when `checksum` is of the whole content (FULL_OBJECT).
  int checksum_parts = 0;
  // A multipart upload's object: its parts, in content order (from Head and Open; List leaves
  // them out). Empty for an object of one piece.
  std::vector<ObjectPart> parts;
};

struct PutOptions {
  std::string content_type;                     // "": kDefaultContentType
  std::map<std::string, std::string> metadata;  // see ValidateMetadata
  std::map<std::string, std::string> headers;   // see ValidateStoredHeaders
  std::string expected_sha256;                  // hex; when set, a mismatch fails the commit
  std::string expected_md5;                     // hex; when set, a mismatch fails the commit
  // The ETag to record instead of the content's MD5.
  std::string etag;
  // A checksum the client sent (x-amz-checksum-*): its bytes, checked at commit and kept with the
  // object. With an algorithm and no bytes, the checksum is only computed and kept.
  ChecksumAlgorithm checksum_algorithm = ChecksumAlgorithm::kNone;
  std::string expected_checksum;
  // A multipart upload's (MultipartUploads::Create): how its object's checksum is made of its
  // parts'. kFullObject needs a CRC.
  ChecksumType checksum_type = ChecksumType::kComposite;
  // What must hold of the object the upload replaces when it commits (kFailedPrecondition,
  // nothing committed, if it does not).
  store::PutCondition condition;
};

struct Listing {
  std::vector<ObjectInfo> objects;
  std::vector<std::string> common_prefixes;
  bool truncated = false;
  std::string next_start_after;
};

class ObjectService;

// One object being written. Not thread-safe (one caller at a time, on any thread).
class Upload {
 public:
  // Without a successful Commit, Abort()s.
  ~Upload();
  Upload(const Upload&) = delete;
  Upload& operator=(const Upload&) = delete;

  // Appends content. After an error the upload is dead: later calls fail too.
  Status Write(std::string_view data);
  // The bytes of the checksum (PutOptions::checksum_algorithm) the content must have, when
  // they come after the content (an aws-chunked body's trailer). Before Commit.
  void ExpectChecksum(std::string raw);
  // Syncs the content, then makes the object visible, replacing any object of that key, whose
  // content is then removed. kInvalidArgument if expected_sha256 does not match (nothing
  // changes); kNotFound if the bucket was deleted meanwhile.
  Result<ObjectInfo> Commit();
  // Removes what was written; nothing becomes visible. Safe to call more than once.
  void Abort();

  uint64_t size() const;

 private:
  friend class ObjectService;
  struct State;
  explicit Upload(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

// One object being read, pinned to the version that was current when it was opened. Not
// thread-safe.
class ObjectReader {
 public:
  ObjectReader(ObjectInfo info, std::unique_ptr<BlobReader> blob)
      : info_(std::move(info)), blob_(std::move(blob)), next_(0), end_(info_.size) {}

  const ObjectInfo& info() const { return info_; }
  // Limits reading to bytes [first, last] (inclusive). kInvalidArgument unless
  // first <= last < size.
  Status SetRange(uint64_t first, uint64_t last);
  // The bytes of the range (the whole object unless SetRange) not read yet.
  uint64_t remaining() const { return end_ - next_; }
  // The next piece of the range (at most one block), checked against its checksum; "" once the
  // range is read. kInternal if the content is damaged.
  Result<std::string> Next();
  // The rest of the range at once, checked, as Next reads it. Only for small ranges: it is held
  // in memory.
  Result<std::string> ReadRest();

  // Whether NextChecked's spans name files to send from (sendfile); when not, use Next.
  bool sends_from_files() const { return blob_->in_files(); }
  // Like Next, but checks the next piece of the range where it lies, without reading it out: up
  // to `max` bytes (ending at a block's end where the range allows, and never past the end of
  // one file), returned as the content offset of its first byte, its length, and where it lies:
  // `fd` holds it from `file_offset` on, open while the span (keep_open) or this reader lives.
  // Length 0 once the range is read.
  struct Span {
    uint64_t offset = 0;
    uint64_t length = 0;
    int fd = -1;
    uint64_t file_offset = 0;
    std::shared_ptr<void> keep_open;
  };
  Result<Span> NextChecked(uint64_t max);

 private:
  ObjectInfo info_;
  std::unique_ptr<BlobReader> blob_;
  uint64_t next_, end_;  // the rest of the range: [next_, end_)
};

struct ObjectServiceOptions {
  // The most one copy on the server may copy (Copy here, and S3's CopyObject and UploadPartCopy
  // on top of it): what a request copies well inside the server's handler timeout. 5 GiB, as S3
  // itself; larger objects are copied as a multipart upload of part copies.
  uint64_t max_copy_bytes = uint64_t{5} << 30;
};

class ObjectService {
 public:
  ObjectService(store::Store& store, BlobStore& blobs, const Clock& clock,
                ObjectServiceOptions options = {})
      : store_(store.objects()), blobs_(blobs), clock_(clock), options_(options) {}

  uint64_t max_copy_bytes() const { return options_.max_copy_bytes; }

  Result<store::Bucket> CreateBucket(const std::string& project_id, const std::string& name);
  Result<store::Bucket> GetBucket(const std::string& project_id, const std::string& name);
  Result<std::vector<store::Bucket>> ListBuckets(const std::string& project_id);
  Status DeleteBucket(const std::string& project_id, const std::string& name);

  // Starts writing object `key` of a bucket. Nothing is visible until Upload::Commit.
  Result<std::unique_ptr<Upload>> BeginPut(const std::string& project_id, const std::string& bucket,
                                           const std::string& key, PutOptions options);
  Result<ObjectInfo> Head(const std::string& project_id, const std::string& bucket,
                          const std::string& key);
  Result<std::unique_ptr<ObjectReader>> Open(const std::string& project_id,
                                             const std::string& bucket, const std::string& key);
  // Copies object from_bucket/from_key to bucket/key of the same project, on the server: the
  // content (checked as it is read, and committed only if it hashes as the source's), the
  // content type, metadata, stored headers and checksum. As atomic and durable as a put; a copy
  // onto itself writes the object anew, as one piece (a multipart upload's parts, its composite
  // checksum and its ETag become those of one piece). kNotFound for a missing source or bucket;
  // kInvalidArgument for a source over max_copy_bytes(); kInternal for damaged source content
  // (nothing is committed).
  Result<ObjectInfo> Copy(const std::string& project_id, const std::string& from_bucket,
                          const std::string& from_key, const std::string& bucket,
                          const std::string& key);
  // Options as in store::ObjectStore::ListObjects; limit 1-1000.
  Result<Listing> List(const std::string& project_id, const std::string& bucket,
                       const store::ListObjectsOptions& options);
  // kNotFound if there is no such object; kFailedPrecondition, deleting nothing, if `if_match`
  // names an ETag ("*" for any, "" for no condition) the object does not have.
  Status Delete(const std::string& project_id, const std::string& bucket, const std::string& key,
                const std::string& if_match = "");

  // At start, before any upload: removes unsealed blobs and every pending blob of this blob
  // store. Returns how many blobs were removed.
  Result<int> Recover();
  // Removes pending blobs of this blob store that no upload in progress is writing (left by a
  // removal that failed). Safe while serving. Returns how many were removed.
  Result<int> ReclaimPending();

 private:
  friend class Upload;
  friend class MultipartUploads;  // keeps parts as pending blobs of this service
  Result<store::Bucket> FindBucket(const std::string& project_id, const std::string& name);
  // Removes a blob that no object refers to, then forgets it as pending; a blob that a reader
  // has pinned stays pending, for ReclaimPending once the reader is gone.
  Status Discard(const std::string& blob_id);
  // Discards the blobs of a replaced or deleted object (`what`, for the log).
  void DiscardReplaced(const std::vector<std::string>& blob_ids, const std::string& what);
  // Opens an object's content, pinning its blobs while the reader lives, so that replacing or
  // deleting the object leaves them to ReclaimPending until the reader is done: for objects
  // kept as segments, and for every object where the blob store's readers do not outlive a
  // removal. kNotFound if the object was replaced or deleted since `record` was read.
  Result<std::unique_ptr<BlobReader>> OpenPinned(const store::ObjectRecord& record);
  void Finished(const std::string& blob_id);

  store::ObjectStore& store_;
  BlobStore& blobs_;
  const Clock& clock_;
  const ObjectServiceOptions options_;
  Mutex mu_;
  std::set<std::string> writing_ GUARDED_BY(mu_);  // blobs of uploads in progress
  // Segments' blobs that open readers pin, with how many pin each. A segmented reader opens its
  // blobs as it reaches them, so their files must outlive a replacement.
  std::map<std::string, int> reading_ GUARDED_BY(mu_);
};

// An object's record as the API shows it.
ObjectInfo ToObjectInfo(const std::string& bucket, const store::ObjectRecord& record);
// User metadata as the store keeps it (a JSON object of strings); what is not a string is left
// out, and text that is not a JSON object gives none.
std::map<std::string, std::string> ParseMetadata(const std::string& json);
// A checksum as the store keeps it: "<name> <base64>" ("crc32c q3k3Aw=="), "" for kNone; a
// composite one (multipart.h) has "-<parts>" after it.
std::string StoredChecksum(ChecksumAlgorithm algorithm, std::string_view raw);

}  // namespace tf::objects
