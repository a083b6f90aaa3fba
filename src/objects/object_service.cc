#include "objects/object_service.h"

#include <charconv>
#include <nlohmann/json.hpp>

#include "base/crypto.h"
#include "base/log.h"
#include "objects/blob_format.h"
#include "objects/names.h"
#include "objects/segmented_reader.h"

namespace tf::objects {
namespace {

constexpr int kMaxListLimit = 1000;
// Open re-reads an object's record this often when its blob was removed in between (the object
// was replaced or deleted meanwhile).
constexpr int kOpenAttempts = 3;

}  // namespace

std::map<std::string, std::string> ParseMetadata(const std::string& json) {
  std::map<std::string, std::string> out;
  auto j = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return out;
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it->is_string()) out[it.key()] = it->get<std::string>();
  }
  return out;
}

std::string StoredChecksum(ChecksumAlgorithm algorithm, std::string_view raw) {
  if (algorithm == ChecksumAlgorithm::kNone) return "";
  return std::string(ChecksumName(algorithm)) + " " + Base64Encode(raw);
}

ObjectInfo ToObjectInfo(const std::string& bucket, const store::ObjectRecord& r) {
  ObjectInfo info;
  info.bucket = bucket;
  info.key = r.key;
  info.size = static_cast<uint64_t>(r.size);
  info.etag = r.etag;
  info.sha256 = r.sha256;
  info.content_type = r.content_type;
  info.metadata = ParseMetadata(r.user_metadata);
  info.modified_at = r.modified_at;
  info.headers = ParseMetadata(r.headers);
  for (const store::BlobSegment& segment : r.segments) {
    info.parts.push_back(
        {static_cast<uint64_t>(segment.size), Base64Decode(segment.checksum).value_or("")});
  }
  // What cannot be read back (written by nothing this version knows) is left out.
  if (const size_t space = r.checksum.find(' '); space != std::string::npos) {
    const std::optional<ChecksumAlgorithm> algorithm =
        ChecksumAlgorithmNamed(std::string_view(r.checksum).substr(0, space));
    std::string_view value = std::string_view(r.checksum).substr(space + 1);
    int parts = 0;
    bool parts_readable = true;
    if (const size_t dash = value.find('-'); dash != std::string_view::npos) {
      const std::string_view count = value.substr(dash + 1);
      auto [end, error] = std::from_chars(count.data(), count.data() + count.size(), parts);
      const bool whole = error == std::errc() && end == count.data() + count.size();
      parts_readable = whole && parts >= 1;
      value = value.substr(0, dash);
    }
    std::optional<std::string> raw = Base64Decode(value);
    if (algorithm.has_value() && parts_readable && raw &&
        raw->size() == ChecksumBytes(algorithm.value())) {
      info.checksum_algorithm = algorithm.value();
      info.checksum = std::move(*raw);
      info.checksum_parts = parts;
    }
  }
  return info;
}

Status ObjectReader::SetRange(uint64_t first, uint64_t last) {
  if (first > last || last >= info_.size) {
    return InvalidArgument("range " + std::to_string(first) + "-" + std::to_string(last) +
                           " is outside an object of " + std::to_string(info_.size) + " bytes");
  }
  next_ = first;
  end_ = last + 1;
  return OkStatus();
}

Result<std::string> ObjectReader::Next() {
  std::string out;
  if (next_ >= end_) return out;
  uint64_t block_end = (next_ / kBlockBytes + 1) * kBlockBytes;
  size_t n = static_cast<size_t>(std::min(block_end, end_) - next_);
  Status s = blob_->ReadAt(next_, n, &out);
  if (!s.ok()) {
    return s.WithContext("object '" + info_.key + "' in bucket '" + info_.bucket + "'");
  }
  next_ += n;
  return out;
}

Result<std::string> ObjectReader::ReadRest() {
  std::string out;
  out.reserve(static_cast<size_t>(remaining()));
  for (;;) {
    TF_ASSIGN_OR_RETURN(std::string piece, Next());
    if (piece.empty()) return out;
    out += piece;
  }
}

Result<ObjectReader::Span> ObjectReader::NextChecked(uint64_t max) {
  Span span;
  span.offset = next_;
  if (next_ >= end_) return span;
  auto file = blob_->FileAt(next_);
  if (!file.ok()) {
    return file.status().WithContext("object '" + info_.key + "' in bucket '" + info_.bucket + "'");
  }
  uint64_t stop = std::min({end_, next_ + std::max<uint64_t>(max, 1), next_ + file->length});
  // Pieces end at a block's end (in the file) where the range allows, so no block is read twice.
  const uint64_t file_stop = file->file_offset + (stop - next_);
  if (stop < end_ && file_stop / kBlockBytes * kBlockBytes > file->file_offset) {
    stop = next_ + (file_stop / kBlockBytes * kBlockBytes - file->file_offset);
  }
  span.length = stop - next_;
  span.fd = file->fd;
  span.file_offset = file->file_offset;
  span.keep_open = std::move(file->keep_open);
  Status s = blob_->Check(span.offset, static_cast<size_t>(span.length));
  if (!s.ok()) {
    return s.WithContext("object '" + info_.key + "' in bucket '" + info_.bucket + "'");
  }
  next_ = stop;
  return span;
}

Result<store::Bucket> ObjectService::FindBucket(const std::string& project_id,
                                                const std::string& name) {
  TF_RETURN_IF_ERROR(ValidateBucketName(name));
  return store_.GetBucket(project_id, name);
}

Result<store::Bucket> ObjectService::CreateBucket(const std::string& project_id,
                                                  const std::string& name) {
  TF_RETURN_IF_ERROR(ValidateBucketName(name));
  return store_.CreateBucket({0, project_id, name, clock_.Now()});
}

Result<store::Bucket> ObjectService::GetBucket(const std::string& project_id,
                                               const std::string& name) {
  return FindBucket(project_id, name);
}

Result<std::vector<store::Bucket>> ObjectService::ListBuckets(const std::string& project_id) {
  return store_.ListBuckets(project_id);
}

Status ObjectService::DeleteBucket(const std::string& project_id, const std::string& name) {
  TF_ASSIGN_OR_RETURN(store::Bucket bucket, FindBucket(project_id, name));
  Status s = store_.DeleteBucket(bucket.id);
  if (s.code() == StatusCode::kFailedPrecondition) {
    return FailedPrecondition("bucket '" + name + "' is not empty: delete its objects first");
  }
  if (s.code() == StatusCode::kNotFound) return NotFound("bucket '" + name + "' does not exist");
  return s;
}

Result<ObjectInfo> ObjectService::Head(const std::string& project_id, const std::string& bucket,
                                       const std::string& key) {
  TF_ASSIGN_OR_RETURN(store::Bucket b, FindBucket(project_id, bucket));
  TF_RETURN_IF_ERROR(ValidateKey(key));
  TF_ASSIGN_OR_RETURN(store::ObjectRecord record, store_.GetObject(b.id, key));
  return ToObjectInfo(bucket, record);
}

Result<ObjectInfo> ObjectService::Copy(const std::string& project_id,
                                       const std::string& from_bucket, const std::string& from_key,
                                       const std::string& bucket, const std::string& key) {
  TF_ASSIGN_OR_RETURN(std::unique_ptr<ObjectReader> reader,
                      Open(project_id, from_bucket, from_key));
  const ObjectInfo& from = reader->info();
  if (from.size > options_.max_copy_bytes) {
    return InvalidArgument(from_bucket + "/" + from_key + " is " + std::to_string(from.size) +
                           " bytes: a copy on the server takes objects of up to " +
                           std::to_string(options_.max_copy_bytes) +
                           " (download and upload it instead)");
  }
  PutOptions options;
  options.content_type = from.content_type;
  options.metadata = from.metadata;
  options.headers = from.headers;
  options.expected_sha256 = from.sha256;
  options.checksum_algorithm = from.checksum_algorithm;
  // A composite checksum (of a multipart upload's parts) cannot be checked against one piece of
  // content: the copy's own, of that algorithm, is computed instead.
  if (from.checksum_parts == 0) options.expected_checksum = from.checksum;
  TF_ASSIGN_OR_RETURN(std::unique_ptr<Upload> upload,
                      BeginPut(project_id, bucket, key, std::move(options)));
  for (;;) {
    TF_ASSIGN_OR_RETURN(std::string piece, reader->Next());
    if (piece.empty()) break;
    TF_RETURN_IF_ERROR(upload->Write(piece));
  }
  Result<ObjectInfo> copied = upload->Commit();
  if (!copied.ok() && copied.status().code() == StatusCode::kInvalidArgument) {
    // Content that passed its block checks yet does not hash as recorded: the source is damaged.
    return Internal(from_bucket + "/" + from_key + " is damaged (its content does not match " +
                    "its SHA-256): " + copied.status().message());
  }
  return copied;
}

Result<std::unique_ptr<ObjectReader>> ObjectService::Open(const std::string& project_id,
                                                          const std::string& bucket,
                                                          const std::string& key) {
  TF_ASSIGN_OR_RETURN(store::Bucket b, FindBucket(project_id, bucket));
  TF_RETURN_IF_ERROR(ValidateKey(key));
  for (int attempt = 0; attempt < kOpenAttempts; ++attempt) {
    TF_ASSIGN_OR_RETURN(store::ObjectRecord record, store_.GetObject(b.id, key));
    auto blob = record.blob_id.empty() || !blobs_.readers_outlive_removal()
                    ? OpenPinned(record)
                    : blobs_.Open(record.blob_id);
    if (blob.status().code() == StatusCode::kNotFound) continue;  // replaced or deleted meanwhile
    if (!blob.ok()) return blob.status().WithContext("object '" + key + "'");
    if ((*blob)->size() != static_cast<uint64_t>(record.size)) {
      return Internal("the content of object '" + key + "' does not match its metadata");
    }
    return std::make_unique<ObjectReader>(ToObjectInfo(bucket, record), std::move(blob).value());
  }
  return Internal("the content of object '" + key + "' is missing");
}

Result<Listing> ObjectService::List(const std::string& project_id, const std::string& bucket,
                                    const store::ListObjectsOptions& options) {
  TF_ASSIGN_OR_RETURN(store::Bucket b, FindBucket(project_id, bucket));
  if (options.limit < 1 || options.limit > kMaxListLimit) {
    return InvalidArgument("limit must be 1-" + std::to_string(kMaxListLimit));
  }
  for (const std::string* s : {&options.prefix, &options.delimiter, &options.start_after}) {
    if (s->size() > kMaxKeyBytes) return InvalidArgument("listing parameter too long");
  }
  TF_ASSIGN_OR_RETURN(store::ObjectListing l, store_.ListObjects(b.id, options));
  Listing out;
  for (const auto& record : l.objects) out.objects.push_back(ToObjectInfo(bucket, record));
  out.common_prefixes = std::move(l.common_prefixes);
  out.truncated = l.truncated;
  out.next_start_after = std::move(l.next_start_after);
  return out;
}

Status ObjectService::Delete(const std::string& project_id, const std::string& bucket,
                             const std::string& key, const std::string& if_match) {
  TF_ASSIGN_OR_RETURN(store::Bucket b, FindBucket(project_id, bucket));
  TF_RETURN_IF_ERROR(ValidateKey(key));
  TF_ASSIGN_OR_RETURN(std::vector<std::string> blobs,
                      store_.DeleteObject(b.id, key, blobs_.owner(), clock_.Now(), if_match));
  DiscardReplaced(blobs, "the content of deleted object '" + key + "'");
  return OkStatus();
}

void ObjectService::DiscardReplaced(const std::vector<std::string>& blob_ids,
                                    const std::string& what) {
  for (const std::string& blob : blob_ids) {
    if (Status s = Discard(blob); !s.ok()) {
      spdlog::warn("objects: removing {} (blob {}) failed (retried later): {}", what, blob,
                   s.ToString());
    }
  }
}

Result<std::unique_ptr<BlobReader>> ObjectService::OpenPinned(const store::ObjectRecord& record) {
  // One blob is read as an object of one segment.
  const std::vector<store::BlobSegment> segments =
      record.blob_id.empty() ? record.segments
                             : std::vector<store::BlobSegment>{{record.blob_id, record.size, ""}};
  if (segments.empty()) return Internal("object '" + record.key + "' has no content");
  auto unpin = [this, ids = segments] {
    MutexLock lock(mu_);
    for (const store::BlobSegment& segment : ids) {
      auto it = reading_.find(segment.blob_id);
      if (it != reading_.end() && --it->second == 0) reading_.erase(it);
    }
  };
  {
    MutexLock lock(mu_);
    for (const store::BlobSegment& segment : segments) ++reading_[segment.blob_id];
  }
  // Pinned now: a replacement that commits from here on leaves the blobs for ReclaimPending.
  // One that committed before is seen by reading the record again.
  auto again = store_.GetObject(record.bucket_id, record.key);
  if (!again.ok() || again->blob_id != record.blob_id || again->segments != record.segments) {
    unpin();
    if (!again.ok() && again.status().code() != StatusCode::kNotFound) return again.status();
    return NotFound("object '" + record.key + "' was replaced while it was opened");
  }
  auto first = blobs_.Open(segments[0].blob_id);
  if (first.ok() && (*first)->size() != static_cast<uint64_t>(segments[0].size)) {
    first = Internal("blob " + segments[0].blob_id + " does not hold the bytes of its segment");
  }
  if (!first.ok()) {
    unpin();
    if (first.status().code() == StatusCode::kNotFound) {
      if (!record.blob_id.empty()) return first.status();  // removed meanwhile: Open retries
      return Internal("blob " + segments[0].blob_id + " (segment 1) is missing");
    }
    return first.status();
  }
  return std::unique_ptr<BlobReader>(std::make_unique<SegmentedBlobReader>(
      blobs_, segments, std::move(first).value(), std::move(unpin)));
}

Status ObjectService::Discard(const std::string& blob_id) {
  {
    MutexLock lock(mu_);
    if (reading_.count(blob_id) > 0) return OkStatus();  // pending; ReclaimPending takes it
  }
  TF_RETURN_IF_ERROR(blobs_.Remove(blob_id));
  return store_.RemovePendingBlob(blob_id);
}

void ObjectService::Finished(const std::string& blob_id) {
  MutexLock lock(mu_);
  writing_.erase(blob_id);
}

Result<int> ObjectService::Recover() {
  TF_ASSIGN_OR_RETURN(int unsealed, blobs_.RemoveUnsealed());
  TF_ASSIGN_OR_RETURN(int pending, ReclaimPending());
  if (unsealed + pending > 0) {
    spdlog::info("objects: removed {} unfinished uploads and {} unreferenced blobs", unsealed,
                 pending);
  }
  return unsealed + pending;
}

Result<int> ObjectService::ReclaimPending() {
  // Held throughout, so that no upload registers between the listing and the removals.
  MutexLock lock(mu_);
  TF_ASSIGN_OR_RETURN(std::vector<store::PendingBlob> pending,
                      store_.ListPendingBlobs(blobs_.owner()));
  int removed = 0;
  for (const auto& p : pending) {
    if (writing_.count(p.blob_id) > 0 || reading_.count(p.blob_id) > 0) continue;
    TF_RETURN_IF_ERROR(blobs_.Remove(p.blob_id));
    TF_RETURN_IF_ERROR(store_.RemovePendingBlob(p.blob_id));
    ++removed;
  }
  return removed;
}

}  // namespace tf::objects
