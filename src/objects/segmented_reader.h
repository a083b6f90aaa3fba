// An object kept as several blobs in a row (a completed multipart upload's parts, recorded as
// store::BlobSegment) read as one content: content byte i lies in the segment whose range holds
// it, at i minus that segment's start. Every read is checked against the segment blob's own
// block checksums, so damage is reported naming the segment's blob.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "objects/blob_store.h"
#include "store/records.h"

namespace tf::objects {

// Not thread-safe, like every BlobReader. Opens the segments' blobs as reads reach them and
// keeps at most two open (and those that the FileSpans it handed out keep open), so an object
// of 10,000 parts needs no more descriptors than one of two. The caller keeps the segments'
// blobs from being removed while the reader lives (ObjectService pins them).
class SegmentedBlobReader final : public BlobReader {
 public:
  // `first` is segment 0's blob, already open and checked against its size. `on_close` runs
  // once, when the reader goes.
  SegmentedBlobReader(BlobStore& blobs, std::vector<store::BlobSegment> segments,
                      std::unique_ptr<BlobReader> first, std::function<void()> on_close);
  ~SegmentedBlobReader() override;

  uint64_t size() const override { return size_; }
  // Errors as BlobReader's, and kInternal, naming the blob, if a segment's blob is missing or
  // does not hold the bytes its segment records.
  Status ReadAt(uint64_t offset, size_t n, std::string* out) override;
  Status Check(uint64_t offset, size_t n) override;
  // The span ends at the end of the byte's segment; keep_open holds that segment's blob open.
  Result<FileSpan> FileAt(uint64_t offset) override;
  bool in_files() const override { return in_files_; }

 private:
  // The segment that holds content byte `offset` (< size_).
  size_t SegmentOf(uint64_t offset) const;
  // Segment i's blob, opened (and checked against the segment's size) if it is not.
  Result<std::shared_ptr<BlobReader>> Segment(size_t i);
  // Calls fn(blob, offset in it, bytes) for each segment's piece of [offset, offset + n), in
  // order. kInvalidArgument if the range passes the end.
  Status ForEachPiece(uint64_t offset, size_t n,
                      const std::function<Status(BlobReader&, uint64_t, size_t)>& fn);

  BlobStore& blobs_;
  const std::vector<store::BlobSegment> segments_;
  std::vector<uint64_t> starts_;  // content offset of each segment's first byte
  uint64_t size_ = 0;
  bool in_files_ = false;
  std::vector<std::shared_ptr<BlobReader>> open_;  // by segment; null where not open
  std::vector<size_t> opened_;                     // the segments open in open_, oldest first
  std::function<void()> on_close_;
};

}  // namespace tf::objects
