// ObjectService::BeginPut and Upload: content is hashed and written as it arrives, sealed, and
// only then committed to the store.
#include <nlohmann/json.hpp>

#include "base/log.h"
#include "base/mutex.h"
#include "objects/hashing.h"
#include "objects/names.h"
#include "objects/object_service.h"

namespace tf::objects {

struct Upload::State {
  ObjectService* service = nullptr;
  store::Bucket bucket;
  std::string key;
  std::string blob_id;
  PutOptions options;
  std::unique_ptr<BlobWriter> writer;
  ContentHasher hasher;
  Status failed;
  bool done = false;  // committed or aborted
};

Result<std::unique_ptr<Upload>> ObjectService::BeginPut(const std::string& project_id,
                                                        const std::string& bucket,
                                                        const std::string& key,
                                                        PutOptions options) {
  TF_ASSIGN_OR_RETURN(store::Bucket b, FindBucket(project_id, bucket));
  TF_RETURN_IF_ERROR(ValidateKey(key));
  TF_RETURN_IF_ERROR(ValidateMetadata(options.metadata));
  TF_RETURN_IF_ERROR(ValidateStoredHeaders(options.headers));
  TF_RETURN_IF_ERROR(ValidateContentType(options.content_type));
  if (options.content_type.empty()) options.content_type = kDefaultContentType;

  auto state = std::make_unique<Upload::State>();
  state->service = this;
  state->bucket = std::move(b);
  state->key = key;
  state->blob_id = NewBlobId();
  state->options = std::move(options);
  state->hasher.AlsoChecksum(state->options.checksum_algorithm);
  {
    MutexLock lock(mu_);
    writing_.insert(state->blob_id);
  }
  // Recorded before a byte is written, so that a crash from here on leaves a trace to reclaim.
  Status s = store_.AddPendingBlob({state->blob_id, blobs_.owner(), clock_.Now()});
  if (s.ok()) {
    auto writer = blobs_.Create(state->blob_id);
    if (writer.ok()) {
      state->writer = std::move(writer).value();
    } else {
      s = writer.status();
      (void)store_.RemovePendingBlob(state->blob_id);
    }
  }
  if (!s.ok()) {
    Finished(state->blob_id);
    return s;
  }
  return std::unique_ptr<Upload>(new Upload(std::move(state)));
}

Upload::Upload(std::unique_ptr<State> state) : state_(std::move(state)) {}

Upload::~Upload() { Abort(); }

uint64_t Upload::size() const { return state_->writer ? state_->writer->size() : 0; }

Status Upload::Write(std::string_view data) {
  State& st = *state_;
  if (st.done) return FailedPrecondition("the upload has ended");
  if (!st.failed.ok()) return st.failed;
  st.failed = HashWhileWriting(st.hasher, data, [&] { return st.writer->Append(data); });
  return st.failed;
}

void Upload::ExpectChecksum(std::string raw) { state_->options.expected_checksum = std::move(raw); }

Result<ObjectInfo> Upload::Commit() {
  State& st = *state_;
  ObjectService& service = *st.service;
  if (st.done) return FailedPrecondition("the upload has ended");
  if (!st.failed.ok()) {
    Abort();
    return st.failed;
  }
  store::ObjectRecord record;
  record.bucket_id = st.bucket.id;
  record.key = st.key;
  record.size = static_cast<int64_t>(st.writer->size());
  st.hasher.Finish(&record.etag, &record.sha256);
  if (!st.options.expected_sha256.empty() && st.options.expected_sha256 != record.sha256) {
    Abort();
    return InvalidArgument("the content's SHA-256 is " + record.sha256 + ", not the expected " +
                           st.options.expected_sha256);
  }
  if (!st.options.expected_md5.empty() && st.options.expected_md5 != record.etag) {
    Abort();
    return InvalidArgument("the content's MD5 is " + record.etag + ", not the expected " +
                           st.options.expected_md5);
  }
  Result<std::string> checksum = st.hasher.FinishChecksum(st.options.expected_checksum);
  if (!checksum.ok()) {
    Abort();
    return checksum.status();
  }
  if (!st.options.etag.empty()) record.etag = st.options.etag;
  if (Status s = st.writer->Seal(); !s.ok()) {
    Abort();
    return s;
  }
  record.content_type = st.options.content_type;
  record.user_metadata = nlohmann::json(st.options.metadata).dump();
  record.headers = nlohmann::json(st.options.headers).dump();
  record.checksum = StoredChecksum(st.options.checksum_algorithm, *checksum);
  record.blob_id = st.blob_id;
  record.modified_at = service.clock_.Now();

  auto replaced = service.store_.PutObject(record, service.blobs_.owner(), st.options.condition);
  st.done = true;
  service.Finished(st.blob_id);
  if (!replaced.ok()) {
    // kUnavailable may hide a commit that happened: then the blob is in use and must stay. If it
    // did not happen the blob is still pending, and ReclaimPending removes it.
    if (replaced.status().code() != StatusCode::kUnavailable) (void)service.Discard(st.blob_id);
    return replaced.status();
  }
  service.DiscardReplaced(*replaced, "the replaced content of '" + st.key + "'");
  return ToObjectInfo(st.bucket.name, record);
}

void Upload::Abort() {
  State& st = *state_;
  if (st.done) return;
  st.done = true;
  st.writer.reset();  // removes an unsealed file
  Status s = st.service->Discard(st.blob_id);
  if (!s.ok()) {
    spdlog::warn("objects: cleaning up an abandoned upload of '{}' failed (retried later): {}",
                 st.key, s.ToString());
  }
  st.service->Finished(st.blob_id);
}

}  // namespace tf::objects
