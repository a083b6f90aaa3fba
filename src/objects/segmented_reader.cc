#include "objects/segmented_reader.h"

#include <algorithm>

namespace tf::objects {
namespace {

constexpr size_t kOpenSegments = 2;  // kept open at once (besides those FileSpans hold)

}  // namespace

SegmentedBlobReader::SegmentedBlobReader(BlobStore& blobs, std::vector<store::BlobSegment> segments,
                                         std::unique_ptr<BlobReader> first,
                                         std::function<void()> on_close)
    : blobs_(blobs), segments_(std::move(segments)), on_close_(std::move(on_close)) {
  starts_.reserve(segments_.size());
  for (const store::BlobSegment& segment : segments_) {
    starts_.push_back(size_);
    size_ += static_cast<uint64_t>(segment.size);
  }
  open_.resize(segments_.size());
  in_files_ = first->in_files();
  if (!segments_.empty()) {
    open_[0] = std::move(first);
    opened_.push_back(0);
  }
}

SegmentedBlobReader::~SegmentedBlobReader() {
  open_.clear();
  if (on_close_) on_close_();
}

size_t SegmentedBlobReader::SegmentOf(uint64_t offset) const {
  // The last segment that starts at or before `offset`; empty segments are passed over.
  auto it = std::upper_bound(starts_.begin(), starts_.end(), offset);
  return static_cast<size_t>(it - starts_.begin()) - 1;
}

Result<std::shared_ptr<BlobReader>> SegmentedBlobReader::Segment(size_t i) {
  if (open_[i]) return open_[i];
  const store::BlobSegment& segment = segments_[i];
  auto opened = blobs_.Open(segment.blob_id);
  if (opened.status().code() == StatusCode::kNotFound) {
    return Internal("blob " + segment.blob_id + " (segment " + std::to_string(i + 1) + " of " +
                    std::to_string(segments_.size()) + ") is missing");
  }
  TF_RETURN_IF_ERROR(opened.status());
  if ((*opened)->size() != static_cast<uint64_t>(segment.size)) {
    return Internal("blob " + segment.blob_id + " holds " + std::to_string((*opened)->size()) +
                    " bytes, not the " + std::to_string(segment.size) + " of its segment");
  }
  while (opened_.size() >= kOpenSegments) {
    open_[opened_.front()].reset();
    opened_.erase(opened_.begin());
  }
  open_[i] = std::move(opened).value();
  opened_.push_back(i);
  return open_[i];
}

Status SegmentedBlobReader::ForEachPiece(
    uint64_t offset, size_t n, const std::function<Status(BlobReader&, uint64_t, size_t)>& fn) {
  if (offset > size_ || n > size_ - offset) {
    return InvalidArgument("read of " + std::to_string(n) + " bytes at " + std::to_string(offset) +
                           " passes the end of " + std::to_string(size_) + " bytes");
  }
  while (n > 0) {
    const size_t i = SegmentOf(offset);
    const uint64_t within = offset - starts_[i];
    const size_t take = static_cast<size_t>(
        std::min<uint64_t>(n, static_cast<uint64_t>(segments_[i].size) - within));
    TF_ASSIGN_OR_RETURN(std::shared_ptr<BlobReader> blob, Segment(i));
    TF_RETURN_IF_ERROR(fn(*blob, within, take));
    offset += take;
    n -= take;
  }
  return OkStatus();
}

Status SegmentedBlobReader::ReadAt(uint64_t offset, size_t n, std::string* out) {
  out->clear();
  std::string piece;
  bool first = true;
  return ForEachPiece(offset, n, [&](BlobReader& blob, uint64_t at, size_t bytes) -> Status {
    // The first piece lands in *out directly; a range across segments is appended to it.
    if (first) {
      first = false;
      return blob.ReadAt(at, bytes, out);
    }
    TF_RETURN_IF_ERROR(blob.ReadAt(at, bytes, &piece));
    out->append(piece);
    return OkStatus();
  });
}

Status SegmentedBlobReader::Check(uint64_t offset, size_t n) {
  return ForEachPiece(
      offset, n, [](BlobReader& blob, uint64_t at, size_t bytes) { return blob.Check(at, bytes); });
}

Result<BlobReader::FileSpan> SegmentedBlobReader::FileAt(uint64_t offset) {
  if (offset >= size_) return InvalidArgument("offset past the end of the content");
  const size_t i = SegmentOf(offset);
  TF_ASSIGN_OR_RETURN(std::shared_ptr<BlobReader> blob, Segment(i));
  TF_ASSIGN_OR_RETURN(FileSpan span, blob->FileAt(offset - starts_[i]));
  if (!span.keep_open) span.keep_open = blob;
  return span;
}

}  // namespace tf::objects
