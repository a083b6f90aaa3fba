#include "objects/s3_blob_store.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "base/sha256_stream.h"
#include "objects/blob_format.h"
#include "objects/bucket_client.h"
#include "objects/crc32c.h"

namespace tf::objects {
namespace {

namespace fs = std::filesystem;
using objects::BlobFooter;
using objects::kBlockBytes;
using objects::kFooterBytes;

Status SpoolError(const std::string& what, const fs::path& path, int err) {
  std::string message = what + " " + path.string() + ": " + std::strerror(err);
  if (err == ENOSPC || err == EDQUOT) return ResourceExhausted("disk full: " + message);
  return Internal(message);
}

std::string KeyOf(const std::string& blob_id) {
  return "blobs/" + blob_id.substr(0, 2) + "/" + blob_id;
}

Status CheckId(const std::string& blob_id) {
  if (!objects::IsBlobId(blob_id)) return InvalidArgument("not a blob id: '" + blob_id + "'");
  return OkStatus();
}

// Spools the blob file (content, then the trailer at Seal) and hashes it for the signed PUT.
class S3BlobWriter final : public objects::BlobWriter {
 public:
  S3BlobWriter(BucketClient& bucket, std::string blob_id, int fd, fs::path spool)
      : bucket_(bucket), id_(std::move(blob_id)), fd_(fd), spool_(std::move(spool)) {
    block_.reserve(kBlockBytes);
  }

  ~S3BlobWriter() override {
    if (fd_ >= 0) ::close(fd_);
    ::unlink(spool_.c_str());
  }

  Status Append(std::string_view data) override {
    if (!failed_.ok()) return failed_;
    while (!data.empty()) {
      size_t take = std::min<size_t>(data.size(), kBlockBytes - block_.size());
      block_.append(data.substr(0, take));
      data.remove_prefix(take);
      if (block_.size() == kBlockBytes) {
        if (Status s = Flush(); !s.ok()) return failed_ = s;
      }
    }
    return OkStatus();
  }

  Status Seal() override {
    if (!failed_.ok()) return failed_;
    if (sealed_) return OkStatus();
    const uint64_t content = size();
    if (!block_.empty()) {
      if (Status s = Flush(); !s.ok()) return failed_ = s;
    }
    std::string trailer = objects::EncodeTrailer(content, crcs_);
    if (Status s = Write(trailer); !s.ok()) return failed_ = s;
    const uint64_t file_bytes = written_;
    const std::string sha256 = hasher_.FinishHex();
    uint64_t offset = 0;
    auto source = [this, &offset, file_bytes](char* buffer, size_t capacity) -> Result<size_t> {
      size_t want = static_cast<size_t>(std::min<uint64_t>(capacity, file_bytes - offset));
      if (want == 0) return size_t{0};
      ssize_t got = ::pread(fd_, buffer, want, static_cast<off_t>(offset));
      if (got < 0) return SpoolError("cannot read", spool_, errno);
      if (got == 0) return Internal("spool file " + spool_.string() + " shrank while sending");
      offset += static_cast<uint64_t>(got);
      return static_cast<size_t>(got);
    };
    if (Status s = bucket_.Put(KeyOf(id_), file_bytes, sha256, source); !s.ok()) {
      return failed_ = s;
    }
    sealed_ = true;
    content_ = content;
    return OkStatus();
  }

  uint64_t size() const override { return sealed_ ? content_ : written_ + block_.size(); }

 private:
  Status Flush() {
    crcs_.push_back(objects::Crc32c(block_));
    TF_RETURN_IF_ERROR(Write(block_));
    block_.clear();
    return OkStatus();
  }

  Status Write(std::string_view data) {
    hasher_.Update(data);
    while (!data.empty()) {
      ssize_t n = ::write(fd_, data.data(), data.size());
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return SpoolError("cannot write", spool_, errno);
      data.remove_prefix(static_cast<size_t>(n));
      written_ += static_cast<uint64_t>(n);
    }
    return OkStatus();
  }

  BucketClient& bucket_;
  const std::string id_;
  int fd_;
  const fs::path spool_;
  std::string block_;           // content not yet written: less than one block
  uint64_t written_ = 0;        // bytes in the spool file
  std::vector<uint32_t> crcs_;  // of the written blocks
  Sha256Stream hasher_;         // of the spool file
  bool sealed_ = false;
  uint64_t content_ = 0;  // once sealed: the content's size
  Status failed_;
};

class S3BlobReader final : public objects::BlobReader {
 public:
  S3BlobReader(BucketClient& bucket, std::string blob_id, BlobFooter footer,
               std::vector<uint32_t> crcs)
      : bucket_(bucket), id_(std::move(blob_id)), footer_(footer), crcs_(std::move(crcs)) {}

  uint64_t size() const override { return footer_.size; }

  Status ReadAt(uint64_t offset, size_t n, std::string* out) override {
    if (offset > footer_.size || n > footer_.size - offset) {
      return InvalidArgument("read past the end of blob " + id_);
    }
    if (n == 0) {
      out->clear();
      return OkStatus();
    }
    const objects::BlockSpan span = objects::CoverBlocks(footer_, offset, n);
    TF_ASSIGN_OR_RETURN(std::string blocks,
                        bucket_.GetRange(KeyOf(id_), span.start, span.stop - span.start));
    TF_RETURN_IF_ERROR(objects::CheckBlocks(blocks, span, footer_, crcs_, id_));
    if (span.start == offset && span.stop == offset + n) {
      *out = std::move(blocks);
    } else {
      out->assign(blocks, static_cast<size_t>(offset - span.start), n);
    }
    return OkStatus();
  }

 private:
  BucketClient& bucket_;
  const std::string id_;
  const BlobFooter footer_;
  const std::vector<uint32_t> crcs_;
};

class S3BlobStore final : public objects::BlobStore {
 public:
  S3BlobStore(std::unique_ptr<BucketClient> bucket, fs::path spool, std::string owner)
      : bucket_(std::move(bucket)), spool_(std::move(spool)), owner_(std::move(owner)) {}

  const std::string& owner() const override { return owner_; }

  Result<std::unique_ptr<objects::BlobWriter>> Create(const std::string& blob_id) override {
    TF_RETURN_IF_ERROR(CheckId(blob_id));
    fs::path path = spool_ / "tmp" / blob_id;
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) return SpoolError("cannot create", path, errno);
    return std::unique_ptr<objects::BlobWriter>(new S3BlobWriter(*bucket_, blob_id, fd, path));
  }

  Result<std::unique_ptr<objects::BlobReader>> Open(const std::string& blob_id) override {
    TF_RETURN_IF_ERROR(CheckId(blob_id));
    const std::string key = KeyOf(blob_id);
    auto file_bytes = bucket_->Size(key);
    if (!file_bytes.ok() && file_bytes.status().code() == StatusCode::kNotFound) {
      return NotFound("no blob " + blob_id);
    }
    TF_RETURN_IF_ERROR(file_bytes.status());
    const std::string where = bucket_->location().Describe() + key;
    if (*file_bytes < kFooterBytes) return Internal("blob " + where + " is truncated");
    TF_ASSIGN_OR_RETURN(std::string footer_bytes,
                        bucket_->GetRange(key, *file_bytes - kFooterBytes, kFooterBytes));
    auto footer = objects::DecodeFooter(footer_bytes, *file_bytes);
    if (!footer.ok()) return footer.status().WithContext(where);
    std::vector<uint32_t> crcs;
    const uint64_t table_bytes = objects::BlockCount(footer->size, footer->block_bytes) * 4;
    if (table_bytes > 0) {
      TF_ASSIGN_OR_RETURN(std::string table, bucket_->GetRange(key, footer->size, table_bytes));
      auto decoded = objects::DecodeTable(table, *footer);
      if (!decoded.ok()) return decoded.status().WithContext(where);
      crcs = std::move(decoded).value();
    }
    return std::unique_ptr<objects::BlobReader>(
        new S3BlobReader(*bucket_, blob_id, *footer, std::move(crcs)));
  }

  Status Remove(const std::string& blob_id) override {
    TF_RETURN_IF_ERROR(CheckId(blob_id));
    return bucket_->Delete(KeyOf(blob_id));
  }

  Result<int> RemoveUnsealed() override { return objects::RemoveFilesIn(spool_ / "tmp"); }

 private:
  const std::unique_ptr<BucketClient> bucket_;
  const fs::path spool_;
  const std::string owner_;
};

}  // namespace

Result<std::unique_ptr<objects::BlobStore>> OpenS3BlobStore(const s3::BucketLocation& location,
                                                            const fs::path& spool,
                                                            const Clock& clock) {
  std::error_code ec;
  fs::create_directories(spool / "tmp", ec);
  if (ec) return Internal("cannot create " + (spool / "tmp").string() + ": " + ec.message());
  auto bucket = std::make_unique<BucketClient>(location, clock);
  if (Status s = bucket->CheckBucket(); !s.ok()) {
    return s.WithContext("cannot use " + location.Describe() + " for objects");
  }
  TF_ASSIGN_OR_RETURN(std::string owner, objects::LoadOrCreateOwner(spool));
  return std::unique_ptr<objects::BlobStore>(
      new S3BlobStore(std::move(bucket), spool, std::move(owner)));
}

}  // namespace tf::objects
