// Multipart uploads: an object written as numbered parts, in any order and side by side, that
// appears whole and atomically when its upload completes (S3's CreateMultipartUpload, UploadPart,
// CompleteMultipartUpload, AbortMultipartUpload, ListParts).
//
// Each part is a blob of its own, recorded as pending before a byte of it is written. Once it is
// written whole and synced, a row in the store records it as the upload's part (replacing an
// earlier part of that number), which keeps it from ObjectService::Recover and ReclaimPending.
// Uploads and their parts are kept in the store until completed or aborted, so they survive a
// restart: ListParts shows the parts and Complete works. A part cut short by a crash, or one
// replaced, is a pending blob no part refers to, and is reclaimed with the others: nothing is
// leaked and no partial part is ever listed. Complete makes the object of the named parts'
// blobs, in order, without copying them (kept as the object's segments, store::BlobSegment):
// it reads them back once for the object's SHA-256, then one store transaction forgets the
// upload, commits the object (replacing any object of that key) and takes the named blobs out
// of the pending ones, so an upload makes its object at most once, even across a crash; then it
// removes the parts not named (a crash before that leaves them pending, for Recover). An upload
// untouched for kIdleUploadMs is aborted the next time an upload is created. The store's uploads
// are read the first time they are needed (a failure is returned, and reading is tried again
// next call).
//
// Thread-safe; every call blocks on the store and the disk. Errors: kNotFound for a missing
// bucket or an unknown upload (or one of another bucket, key or project); kInvalidArgument for
// bad keys, metadata or part numbers and for content that does not match an expected digest;
// kFailedPrecondition when Complete names a part that is not there (or not with that ETag);
// kResourceExhausted past kMaxUploads; the object service's other errors.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/mutex.h"
#include "base/status.h"
#include "objects/object_service.h"

namespace tf::objects {

inline constexpr int kMaxPartNumber = 10'000;
inline constexpr uint64_t kMinPartBytes = uint64_t{5} << 20;  // every part but the last (S3)
inline constexpr uint64_t kMaxPartBytes = uint64_t{5} << 30;
inline constexpr size_t kMaxUploads = 10'000;  // in progress at once, on one server
inline constexpr TimeMs kIdleUploadMs = 7 * kDayMs;

struct PartInfo {
  int number = 0;
  uint64_t size = 0;
  std::string etag;  // MD5 of the part, hex
  TimeMs modified_at = 0;
  // Its checksum's bytes, of the upload's checksum algorithm; "" (and kNone) if it has none.
  std::string checksum;
  ChecksumAlgorithm checksum_algorithm = ChecksumAlgorithm::kNone;
};

struct MultipartUpload {
  std::string upload_id;
  std::string bucket;
  std::string key;
  TimeMs initiated_at = 0;
  // What its parts' checksums are of (kNone if they have none), and how the object's is made.
  ChecksumAlgorithm checksum_algorithm = ChecksumAlgorithm::kNone;
  ChecksumType checksum_type = ChecksumType::kComposite;
};

// The checksum an object made of `parts`, in that order, gets (ContentChecksum::Finish's form):
// kComposite, the checksum of the parts' checksums (shown with "-<parts>" after it);
// kFullObject, the CRC of the whole content, combined from the parts' CRCs and sizes. Every part
// must have a checksum of `algorithm` (kInternal naming the first that has none).
Result<std::string> MultipartChecksum(ChecksumAlgorithm algorithm, ChecksumType type,
                                      const std::vector<PartInfo>& parts);

class MultipartUploads;

// One part being written. Not thread-safe (one caller at a time, on any thread).
class PartWriter {
 public:
  ~PartWriter();  // without a successful Commit, removes what was written
  PartWriter(const PartWriter&) = delete;
  PartWriter& operator=(const PartWriter&) = delete;

  // Appends content; kInvalidArgument once the part passes kMaxPartBytes. After an error the
  // writer is dead: later calls fail too.
  Status Write(std::string_view data);
  // As Upload::ExpectChecksum. Before Commit.
  void ExpectChecksum(std::string raw);
  // Syncs the part and adds it to its upload, replacing an earlier part of that number.
  // kInvalidArgument if an expected digest does not match; kNotFound if the upload was
  // completed or aborted meanwhile. Either way nothing is kept.
  Result<PartInfo> Commit();

 private:
  friend class MultipartUploads;
  struct State;
  explicit PartWriter(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

class MultipartUploads {
 public:
  explicit MultipartUploads(ObjectService& objects) : objects_(objects) {}
  ~MultipartUploads();  // parts stay pending: Recover removes them at the next start

  // Starts an upload of `key`; `options` (content type, metadata, kept headers) apply to the
  // object made at Complete. With a checksum_algorithm in `options`, each part's checksum of
  // that algorithm is kept (checked when sent, computed when not), and the object gets the
  // checksum of its parts' that options.checksum_type names (MultipartChecksum).
  // kInvalidArgument for kFullObject with an algorithm that is not a CRC. Returns the upload id.
  Result<std::string> Create(const std::string& project_id, const std::string& bucket,
                             const std::string& key, PutOptions options);

  // Starts writing part `number` (1-kMaxPartNumber) of an upload. Digests set in `expected`
  // (expected_sha256, expected_md5) are checked at Commit; its other fields are ignored.
  Result<std::unique_ptr<PartWriter>> BeginPart(const std::string& project_id,
                                                const std::string& bucket, const std::string& key,
                                                const std::string& upload_id, int number,
                                                const PutOptions& expected);

  // The upload, as ListUploads shows it.
  Result<MultipartUpload> Get(const std::string& project_id, const std::string& bucket,
                              const std::string& key, const std::string& upload_id);

  // The upload's parts, by number.
  Result<std::vector<PartInfo>> ListParts(const std::string& project_id, const std::string& bucket,
                                          const std::string& key, const std::string& upload_id);

  // A bucket's uploads in progress, by key and then by when they began.
  Result<std::vector<MultipartUpload>> ListUploads(const std::string& project_id,
                                                   const std::string& bucket);

  // Makes the object of the named parts, in the order given, recording `etag` as its ETag, and
  // forgets the upload; the parts not named are removed. Each entry names a part number (at
  // most once) and the ETag (MD5 hex) it must have (kInvalidArgument if one does not). While
  // Complete runs, parts of the upload are refused. kInternal, naming the part and its blob, if
  // a part's content is damaged; kFailedPrecondition if `condition` does not hold of the object
  // the upload would replace, checked in the commit's transaction. If it fails the upload stays
  // as it was, so that it may be completed again or aborted (after kUnavailable, whether the
  // commit happened is known from the store: the upload is read from it again).
  Result<ObjectInfo> Complete(const std::string& project_id, const std::string& bucket,
                              const std::string& key, const std::string& upload_id,
                              const std::vector<std::pair<int, std::string>>& parts,
                              const std::string& etag, const store::PutCondition& condition = {});

  // Removes the upload's parts and forgets it.
  Status Abort(const std::string& project_id, const std::string& bucket, const std::string& key,
               const std::string& upload_id);

  // Uploads in progress on this server.
  size_t size();

 private:
  friend class PartWriter;
  struct Part {
    PartInfo info;
    std::string blob_id;
  };
  struct Upload {
    std::string project_id;
    MultipartUpload public_info;
    PutOptions options;
    std::map<int, Part> parts;  // by number
    TimeMs touched_at = 0;
    bool completing = false;
  };

  // The upload `upload_id` of this project, bucket and key; null if there is none.
  Upload* Find(const std::string& project_id, const std::string& bucket, const std::string& key,
               const std::string& upload_id) REQUIRES(mu_);
  TimeMs Now() const { return objects_.clock_.Now(); }
  // Complete's work once the parts are chosen: hashes them, then commits the object made of
  // them in the transaction that forgets the upload. Returns what was made.
  Result<ObjectInfo> Assemble(const std::string& project_id, const std::string& bucket,
                              const std::string& key, const std::string& upload_id,
                              const std::vector<Part>& chosen, const PutOptions& options,
                              const std::string& etag);
  // The SHA-256 (hex) of the parts' content one after another, every block checked as read.
  Result<std::string> HashParts(const std::string& upload_id, const std::vector<Part>& chosen);
  // Adds a sealed part blob to its upload, in the store and here. kNotFound if the upload is
  // gone or completing.
  Status AddPart(const std::string& upload_id, const Part& part);
  // Reads the uploads of this blob store from the store, once.
  Status LoadLocked() REQUIRES(mu_);
  // Forgets an upload in the store and here, returning its part blobs.
  Result<std::vector<std::string>> ForgetLocked(std::map<std::string, Upload>::iterator it)
      REQUIRES(mu_);
  // Removes part blobs (and forgets them as pending) that no upload holds any more.
  void DropBlobs(const std::vector<std::string>& blob_ids);
  // Aborts uploads untouched since before `cutoff`; returns their part blobs.
  std::vector<std::string> ExpireIdle(TimeMs cutoff) REQUIRES(mu_);
  bool loaded_ GUARDED_BY(mu_) = false;

  ObjectService& objects_;
  Mutex mu_;
  std::map<std::string, Upload> uploads_ GUARDED_BY(mu_);  // by upload id
};

}  // namespace tf::objects
