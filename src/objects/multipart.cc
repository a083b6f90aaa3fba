#include "objects/multipart.h"

#include <algorithm>
#include <future>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "base/crypto.h"
#include "base/log.h"
#include "base/sha256_stream.h"
#include "objects/blob_format.h"
#include "objects/hashing.h"
#include "objects/names.h"
#include "store/put_condition.h"

namespace tf::objects {
namespace {

// Complete reads the parts back this much at a time to compute the object's SHA-256.
constexpr uint64_t kHashPieceBytes = uint64_t{8} << 20;

}  // namespace

struct PartWriter::State {
  MultipartUploads* uploads = nullptr;
  std::string upload_id;
  int number = 0;
  std::string blob_id;
  std::unique_ptr<BlobWriter> writer;
  ContentHasher hasher;
  std::string expected_sha256, expected_md5, expected_checksum;
  bool keep_checksum = false;  // the checksum is of the upload's algorithm
  Status failed;
  bool done = false;  // committed, or given up
};

PartWriter::PartWriter(std::unique_ptr<State> state) : state_(std::move(state)) {}

PartWriter::~PartWriter() {
  State& st = *state_;
  if (st.done) return;
  st.writer.reset();  // removes an unsealed file
  st.uploads->DropBlobs({st.blob_id});
}

Status PartWriter::Write(std::string_view data) {
  State& st = *state_;
  if (st.done) return FailedPrecondition("the part has ended");
  if (!st.failed.ok()) return st.failed;
  if (st.writer->size() + data.size() > kMaxPartBytes) {
    return st.failed = InvalidArgument("a part may hold at most " +
                                       std::to_string(kMaxPartBytes >> 30) + " GiB");
  }
  st.failed = HashWhileWriting(st.hasher, data, [&] { return st.writer->Append(data); });
  return st.failed;
}

void PartWriter::ExpectChecksum(std::string raw) { state_->expected_checksum = std::move(raw); }

Result<PartInfo> PartWriter::Commit() {
  State& st = *state_;
  if (st.done) return FailedPrecondition("the part has ended");
  TF_RETURN_IF_ERROR(st.failed);
  MultipartUploads::Part part;
  part.blob_id = st.blob_id;
  part.info.number = st.number;
  part.info.size = st.writer->size();
  std::string sha256;
  st.hasher.Finish(&part.info.etag, &sha256);
  if (!st.expected_sha256.empty() && st.expected_sha256 != sha256) {
    return st.failed = InvalidArgument("the content's SHA-256 is " + sha256 +
                                       ", not the expected " + st.expected_sha256);
  }
  if (!st.expected_md5.empty() && st.expected_md5 != part.info.etag) {
    return st.failed = InvalidArgument("the content's MD5 is " + part.info.etag +
                                       ", not the expected " + st.expected_md5);
  }
  Result<std::string> checksum = st.hasher.FinishChecksum(st.expected_checksum);
  TF_RETURN_IF_ERROR(st.failed = checksum.status());
  if (st.keep_checksum) {
    part.info.checksum = std::move(*checksum);
    part.info.checksum_algorithm = st.hasher.checksum()->algorithm();
  }
  TF_RETURN_IF_ERROR(st.failed = st.writer->Seal());
  part.info.modified_at = st.uploads->Now();
  TF_RETURN_IF_ERROR(st.failed = st.uploads->AddPart(st.upload_id, part));
  st.done = true;  // the upload holds the blob now
  return part.info;
}

MultipartUploads::~MultipartUploads() {
  // The parts stay pending in the store; the next start's Recover removes them. Only the
  // service's record of holding them goes.
  MutexLock lock(objects_.mu_);
  for (const auto& [id, upload] : uploads_) {
    for (const auto& [number, part] : upload.parts) objects_.writing_.erase(part.blob_id);
  }
}

MultipartUploads::Upload* MultipartUploads::Find(const std::string& project_id,
                                                 const std::string& bucket, const std::string& key,
                                                 const std::string& upload_id) {
  auto it = uploads_.find(upload_id);
  if (it == uploads_.end()) return nullptr;
  Upload& u = it->second;
  if (u.project_id != project_id || u.public_info.bucket != bucket || u.public_info.key != key) {
    return nullptr;
  }
  return &u;
}

namespace {

Status NoSuchUpload(const std::string& upload_id) {
  return NotFound("upload '" + upload_id.substr(0, 64) +
                  "' does not exist: it was completed or aborted");
}

}  // namespace

Result<std::string> MultipartChecksum(ChecksumAlgorithm algorithm, ChecksumType type,
                                      const std::vector<PartInfo>& parts) {
  for (const PartInfo& part : parts) {
    if (part.checksum.empty() || part.checksum_algorithm != algorithm) {
      return Internal("part " + std::to_string(part.number) + " has no " +
                      std::string(ChecksumName(algorithm)) + " checksum");
    }
  }
  if (type == ChecksumType::kFullObject) {
    if (!IsCrc(algorithm)) {
      return Internal("a FULL_OBJECT checksum of " + std::string(ChecksumName(algorithm)));
    }
    if (parts.empty()) return ContentChecksum(algorithm).Finish();
    std::string whole = parts.front().checksum;
    for (size_t i = 1; i < parts.size(); ++i) {
      whole = CombineCrcs(algorithm, whole, parts[i].checksum, parts[i].size);
    }
    return whole;
  }
  ContentChecksum composite(algorithm);
  for (const PartInfo& part : parts) composite.Update(part.checksum);
  return composite.Finish();
}

Status MultipartUploads::LoadLocked() {
  if (loaded_) return OkStatus();
  TF_ASSIGN_OR_RETURN(std::vector<store::MultipartUploadRecord> stored,
                      objects_.store_.ListMultipartUploads(objects_.blobs_.owner()));
  for (store::MultipartUploadRecord& r : stored) {
    Upload u;
    u.project_id = r.project_id;
    u.public_info = {r.upload_id, r.bucket, r.key, r.initiated_at};
    u.options.content_type = r.content_type;
    u.options.metadata = ParseMetadata(r.user_metadata);
    u.options.headers = ParseMetadata(r.headers);
    u.options.checksum_algorithm =
        ChecksumAlgorithmNamed(r.checksum_algorithm).value_or(ChecksumAlgorithm::kNone);
    u.options.checksum_type = ChecksumTypeNamed(r.checksum_type).value_or(ChecksumType::kComposite);
    u.public_info.checksum_algorithm = u.options.checksum_algorithm;
    u.public_info.checksum_type = u.options.checksum_type;
    u.touched_at = r.initiated_at;
    for (const store::MultipartPartRecord& p : r.parts) {
      Part part;
      part.info = {p.number, static_cast<uint64_t>(p.size), p.etag, p.modified_at,
                   Base64Decode(p.checksum).value_or("")};
      if (!part.info.checksum.empty()) {
        part.info.checksum_algorithm = u.options.checksum_algorithm;
      }
      part.blob_id = p.blob_id;
      u.parts.emplace(p.number, std::move(part));
      u.touched_at = std::max(u.touched_at, p.modified_at);
    }
    uploads_.emplace(r.upload_id, std::move(u));
  }
  loaded_ = true;
  return OkStatus();
}

Result<std::vector<std::string>> MultipartUploads::ForgetLocked(
    std::map<std::string, Upload>::iterator it) {
  TF_RETURN_IF_ERROR(objects_.store_.RemoveMultipartUpload(it->first));
  std::vector<std::string> blobs;
  for (const auto& [number, part] : it->second.parts) blobs.push_back(part.blob_id);
  uploads_.erase(it);
  return blobs;
}

Result<std::string> MultipartUploads::Create(const std::string& project_id,
                                             const std::string& bucket, const std::string& key,
                                             PutOptions options) {
  TF_RETURN_IF_ERROR(objects_.FindBucket(project_id, bucket).status());
  TF_RETURN_IF_ERROR(ValidateKey(key));
  TF_RETURN_IF_ERROR(ValidateMetadata(options.metadata));
  TF_RETURN_IF_ERROR(ValidateStoredHeaders(options.headers));
  TF_RETURN_IF_ERROR(ValidateContentType(options.content_type));
  if (options.checksum_type == ChecksumType::kFullObject && !IsCrc(options.checksum_algorithm)) {
    return InvalidArgument(
        "a FULL_OBJECT checksum is combined from the parts' CRCs: its algorithm must be CRC32, "
        "CRC32C or CRC64NVME, not " +
        (options.checksum_algorithm == ChecksumAlgorithm::kNone
             ? std::string("none")
             : std::string(ChecksumName(options.checksum_algorithm))));
  }
  if (options.content_type.empty()) options.content_type = kDefaultContentType;
  options.expected_md5.clear();
  options.expected_sha256.clear();
  options.expected_checksum.clear();

  const TimeMs now = objects_.clock_.Now();
  std::vector<std::string> expired;
  std::string id = RandomHex(20);
  Status stored;
  {
    MutexLock lock(mu_);
    TF_RETURN_IF_ERROR(LoadLocked());
    expired = ExpireIdle(now - kIdleUploadMs);
    if (uploads_.size() < kMaxUploads) {
      store::MultipartUploadRecord record;
      record.upload_id = id;
      record.owner = objects_.blobs_.owner();
      record.project_id = project_id;
      record.bucket = bucket;
      record.key = key;
      record.content_type = options.content_type;
      record.user_metadata = nlohmann::json(options.metadata).dump();
      record.headers = nlohmann::json(options.headers).dump();
      record.checksum_algorithm = std::string(ChecksumName(options.checksum_algorithm));
      if (options.checksum_algorithm != ChecksumAlgorithm::kNone) {
        record.checksum_type = std::string(ChecksumTypeName(options.checksum_type));
      }
      record.initiated_at = now;
      stored = objects_.store_.AddMultipartUpload(record);
      if (stored.ok()) {
        Upload u;
        u.project_id = project_id;
        u.public_info = {id, bucket, key, now, options.checksum_algorithm, options.checksum_type};
        u.options = std::move(options);
        u.touched_at = now;
        uploads_.emplace(id, std::move(u));
      }
    } else {
      id.clear();
    }
  }
  DropBlobs(expired);
  TF_RETURN_IF_ERROR(stored);
  if (id.empty()) {
    return ResourceExhausted("this server has " + std::to_string(kMaxUploads) +
                             " multipart uploads in progress: complete or abort some first");
  }
  return id;
}

std::vector<std::string> MultipartUploads::ExpireIdle(TimeMs cutoff) {
  std::vector<std::string> blobs;
  for (auto it = uploads_.begin(); it != uploads_.end();) {
    const Upload& u = it->second;
    if (u.completing || u.touched_at >= cutoff) {
      ++it;
      continue;
    }
    spdlog::info("objects: multipart upload of '{}' in bucket '{}' abandoned for {} days: aborted",
                 u.public_info.key, u.public_info.bucket, kIdleUploadMs / kDayMs);
    auto next = std::next(it);
    auto forgotten = ForgetLocked(it);
    if (!forgotten.ok()) {
      spdlog::warn("objects: aborting an abandoned multipart upload failed (retried later): {}",
                   forgotten.status().ToString());
    } else {
      blobs.insert(blobs.end(), forgotten->begin(), forgotten->end());
    }
    it = next;
  }
  return blobs;
}

Result<std::unique_ptr<PartWriter>> MultipartUploads::BeginPart(
    const std::string& project_id, const std::string& bucket, const std::string& key,
    const std::string& upload_id, int number, const PutOptions& expected) {
  if (number < 1 || number > kMaxPartNumber) {
    return InvalidArgument("part number must be 1-" + std::to_string(kMaxPartNumber) + ", not " +
                           std::to_string(number));
  }
  ChecksumAlgorithm upload_algorithm = ChecksumAlgorithm::kNone;
  {
    MutexLock lock(mu_);
    TF_RETURN_IF_ERROR(LoadLocked());
    Upload* u = Find(project_id, bucket, key, upload_id);
    if (u == nullptr || u->completing) return NoSuchUpload(upload_id);
    u->touched_at = objects_.clock_.Now();
    upload_algorithm = u->options.checksum_algorithm;
  }
  if (upload_algorithm != ChecksumAlgorithm::kNone &&
      expected.checksum_algorithm != ChecksumAlgorithm::kNone &&
      expected.checksum_algorithm != upload_algorithm) {
    return InvalidArgument("this upload's parts carry " +
                           std::string(ChecksumName(upload_algorithm)) + " checksums, not " +
                           std::string(ChecksumName(expected.checksum_algorithm)));
  }
  auto state = std::make_unique<PartWriter::State>();
  state->uploads = this;
  state->upload_id = upload_id;
  state->number = number;
  state->blob_id = NewBlobId();
  state->expected_sha256 = expected.expected_sha256;
  state->expected_md5 = expected.expected_md5;
  state->expected_checksum = expected.expected_checksum;
  // The upload's algorithm is computed for a part sent without its checksum.
  const ChecksumAlgorithm algorithm = expected.checksum_algorithm != ChecksumAlgorithm::kNone
                                          ? expected.checksum_algorithm
                                          : upload_algorithm;
  state->keep_checksum = algorithm != ChecksumAlgorithm::kNone && algorithm == upload_algorithm;
  state->hasher.AlsoChecksum(algorithm);
  {
    MutexLock lock(objects_.mu_);
    objects_.writing_.insert(state->blob_id);
  }
  // Recorded before a byte is written, so that a crash from here on leaves a trace to reclaim.
  Status s = objects_.store_.AddPendingBlob(
      {state->blob_id, objects_.blobs_.owner(), objects_.clock_.Now()});
  if (s.ok()) {
    auto writer = objects_.blobs_.Create(state->blob_id);
    if (writer.ok()) {
      state->writer = std::move(writer).value();
    } else {
      s = writer.status();
    }
  }
  if (!s.ok()) {
    DropBlobs({state->blob_id});
    return s;
  }
  return std::unique_ptr<PartWriter>(new PartWriter(std::move(state)));
}

Status MultipartUploads::AddPart(const std::string& upload_id, const Part& part) {
  std::string replaced;
  {
    MutexLock lock(mu_);
    auto it = uploads_.find(upload_id);
    if (it == uploads_.end() || it->second.completing) return NoSuchUpload(upload_id);
    Upload& u = it->second;
    store::MultipartPartRecord record{
        upload_id,    part.info.number,      static_cast<int64_t>(part.info.size), part.info.etag,
        part.blob_id, part.info.modified_at, Base64Encode(part.info.checksum)};
    Result<std::string> put = objects_.store_.PutMultipartPart(record);
    if (put.status().code() == StatusCode::kNotFound) return NoSuchUpload(upload_id);
    TF_RETURN_IF_ERROR(put.status());
    replaced = *put;
    u.parts[part.info.number] = part;
    u.touched_at = part.info.modified_at;
  }
  if (!replaced.empty()) DropBlobs({replaced});
  return OkStatus();
}

void MultipartUploads::DropBlobs(const std::vector<std::string>& blob_ids) {
  for (const auto& id : blob_ids) {
    if (Status s = objects_.Discard(id); !s.ok()) {
      spdlog::warn("objects: removing multipart part blob {} failed (retried later): {}", id,
                   s.ToString());
    }
    objects_.Finished(id);
  }
}

Result<MultipartUpload> MultipartUploads::Get(const std::string& project_id,
                                              const std::string& bucket, const std::string& key,
                                              const std::string& upload_id) {
  MutexLock lock(mu_);
  TF_RETURN_IF_ERROR(LoadLocked());
  Upload* u = Find(project_id, bucket, key, upload_id);
  if (u == nullptr) return NoSuchUpload(upload_id);
  return u->public_info;
}

Result<std::vector<PartInfo>> MultipartUploads::ListParts(const std::string& project_id,
                                                          const std::string& bucket,
                                                          const std::string& key,
                                                          const std::string& upload_id) {
  MutexLock lock(mu_);
  TF_RETURN_IF_ERROR(LoadLocked());
  Upload* u = Find(project_id, bucket, key, upload_id);
  if (u == nullptr) return NoSuchUpload(upload_id);
  std::vector<PartInfo> out;
  for (const auto& [number, part] : u->parts) out.push_back(part.info);
  return out;
}

Result<std::vector<MultipartUpload>> MultipartUploads::ListUploads(const std::string& project_id,
                                                                   const std::string& bucket) {
  TF_RETURN_IF_ERROR(objects_.FindBucket(project_id, bucket).status());
  std::vector<MultipartUpload> out;
  {
    MutexLock lock(mu_);
    TF_RETURN_IF_ERROR(LoadLocked());
    for (const auto& [id, u] : uploads_) {
      if (u.project_id == project_id && u.public_info.bucket == bucket) {
        out.push_back(u.public_info);
      }
    }
  }
  std::sort(out.begin(), out.end(), [](const MultipartUpload& a, const MultipartUpload& b) {
    return std::tie(a.key, a.initiated_at, a.upload_id) <
           std::tie(b.key, b.initiated_at, b.upload_id);
  });
  return out;
}

Result<ObjectInfo> MultipartUploads::Complete(const std::string& project_id,
                                              const std::string& bucket, const std::string& key,
                                              const std::string& upload_id,
                                              const std::vector<std::pair<int, std::string>>& parts,
                                              const std::string& etag,
                                              const store::PutCondition& condition) {
  // Checked again in the commit's transaction, which decides; checked here first, a completion
  // bound to fail answers before the parts are read back.
  if (condition.must_be_absent || !condition.etag.empty()) {
    TF_ASSIGN_OR_RETURN(store::Bucket b, objects_.FindBucket(project_id, bucket));
    Result<store::ObjectRecord> current = objects_.store_.GetObject(b.id, key);
    if (!current.ok() && current.status().code() != StatusCode::kNotFound) {
      return current.status();
    }
    TF_RETURN_IF_ERROR(store::PutConditionHolds(
        key, condition, current.ok() ? std::optional<std::string>(current->etag) : std::nullopt));
  }
  std::vector<Part> chosen;
  PutOptions options;
  {
    MutexLock lock(mu_);
    TF_RETURN_IF_ERROR(LoadLocked());
    Upload* u = Find(project_id, bucket, key, upload_id);
    if (u == nullptr) return NoSuchUpload(upload_id);
    if (u->completing) return Aborted("upload '" + upload_id + "' is being completed already");
    std::set<int> named;
    for (const auto& [number, wanted] : parts) {
      if (!named.insert(number).second) {
        return InvalidArgument("part " + std::to_string(number) + " is named twice");
      }
      auto it = u->parts.find(number);
      if (it == u->parts.end() || it->second.info.etag != wanted) {
        return InvalidArgument("part " + std::to_string(number) + " with ETag '" +
                               wanted.substr(0, 64) + "' was not uploaded");
      }
      chosen.push_back(it->second);
    }
    u->completing = true;
    options = u->options;
    options.condition = condition;
  }
  Result<ObjectInfo> made = Assemble(project_id, bucket, key, upload_id, chosen, options, etag);

  // The commit forgot the upload in the store in the same transaction that made the object: the
  // chosen parts' blobs are the object's now, and the others, pending again, are removed here
  // (or by Recover, after a crash).
  std::vector<std::string> unused;
  {
    MutexLock lock(mu_);
    auto it = uploads_.find(upload_id);
    if (it != uploads_.end()) {
      if (made.ok()) {
        std::set<std::string> kept;
        for (const Part& part : chosen) kept.insert(part.blob_id);
        for (const auto& [number, part] : it->second.parts) {
          if (kept.count(part.blob_id) == 0) unused.push_back(part.blob_id);
        }
        uploads_.erase(it);
        for (const std::string& blob : kept) objects_.Finished(blob);
      } else if (made.status().code() == StatusCode::kUnavailable) {
        // The commit may have happened: then the parts' blobs are the object's and must not be
        // dropped with the upload. Forget it here and read it again from the store when next
        // needed, where it is only if the commit did not happen.
        for (const auto& [number, part] : it->second.parts) objects_.Finished(part.blob_id);
        uploads_.erase(it);
        loaded_ = false;
      } else {
        it->second.completing = false;
      }
    }
  }
  DropBlobs(unused);
  return made;
}

Result<ObjectInfo> MultipartUploads::Assemble(const std::string& project_id,
                                              const std::string& bucket, const std::string& key,
                                              const std::string& upload_id,
                                              const std::vector<Part>& chosen,
                                              const PutOptions& options, const std::string& etag) {
  TF_ASSIGN_OR_RETURN(store::Bucket b, objects_.FindBucket(project_id, bucket));
  store::ObjectRecord record;
  record.bucket_id = b.id;
  record.key = key;
  record.etag = etag;
  record.content_type = options.content_type;
  record.user_metadata = nlohmann::json(options.metadata).dump();
  record.headers = nlohmann::json(options.headers).dump();
  for (const Part& part : chosen) {
    record.segments.push_back(
        {part.blob_id, static_cast<int64_t>(part.info.size), Base64Encode(part.info.checksum)});
    record.size += static_cast<int64_t>(part.info.size);
  }
  if (record.segments.empty()) {
    return InvalidArgument("a multipart upload is completed with at least one part");
  }
  if (options.checksum_algorithm != ChecksumAlgorithm::kNone) {
    std::vector<PartInfo> infos;
    for (const Part& part : chosen) infos.push_back(part.info);
    TF_ASSIGN_OR_RETURN(std::string checksum, MultipartChecksum(options.checksum_algorithm,
                                                                options.checksum_type, infos));
    record.checksum = StoredChecksum(options.checksum_algorithm, checksum);
    if (options.checksum_type == ChecksumType::kComposite) {
      record.checksum += "-" + std::to_string(chosen.size());
    }
  }
  // The object's SHA-256, read back from the parts (each block checked against its CRC as it
  // is read): written nowhere, but read once, while the client waits.
  TF_ASSIGN_OR_RETURN(record.sha256, HashParts(upload_id, chosen));
  record.modified_at = Now();
  TF_ASSIGN_OR_RETURN(std::vector<std::string> replaced,
                      objects_.store_.PutObjectCompletingUpload(record, objects_.blobs_.owner(),
                                                                upload_id, options.condition));
  objects_.DiscardReplaced(replaced, "the replaced content of '" + key + "'");
  return ToObjectInfo(bucket, record);
}

Result<std::string> MultipartUploads::HashParts(const std::string& upload_id,
                                                const std::vector<Part>& chosen) {
  Sha256Stream sha256;
  // Two buffers: one is hashed on another thread while the next piece is read into the other.
  std::string buffers[2];
  std::future<void> hashing;
  int next = 0;
  Status failed;
  for (const Part& part : chosen) {
    auto reader = objects_.blobs_.Open(part.blob_id);
    if (reader.ok() && (*reader)->size() != part.info.size) {
      reader = Internal("blob " + part.blob_id + " does not have the size it was written with");
    }
    for (uint64_t at = 0; reader.ok() && failed.ok() && at < part.info.size;
         at += kHashPieceBytes) {
      const size_t n = static_cast<size_t>(std::min(kHashPieceBytes, part.info.size - at));
      std::string& buffer = buffers[next];
      failed = (*reader)->ReadAt(at, n, &buffer);
      if (hashing.valid()) hashing.get();
      if (failed.ok()) {
        hashing = std::async(std::launch::async, [&sha256, &buffer] { sha256.Update(buffer); });
      }
      next ^= 1;
    }
    if (!reader.ok()) failed = reader.status();
    if (!failed.ok()) {
      if (hashing.valid()) hashing.get();
      return failed.WithContext("part " + std::to_string(part.info.number) + " of upload '" +
                                upload_id + "'");
    }
  }
  if (hashing.valid()) hashing.get();
  return sha256.FinishHex();
}

Status MultipartUploads::Abort(const std::string& project_id, const std::string& bucket,
                               const std::string& key, const std::string& upload_id) {
  std::vector<std::string> blobs;
  {
    MutexLock lock(mu_);
    TF_RETURN_IF_ERROR(LoadLocked());
    Upload* u = Find(project_id, bucket, key, upload_id);
    if (u == nullptr) return NoSuchUpload(upload_id);
    if (u->completing) return Aborted("upload '" + upload_id + "' is being completed");
    TF_ASSIGN_OR_RETURN(blobs, ForgetLocked(uploads_.find(upload_id)));
  }
  DropBlobs(blobs);
  return OkStatus();
}

size_t MultipartUploads::size() {
  MutexLock lock(mu_);
  return uploads_.size();
}

}  // namespace tf::objects
