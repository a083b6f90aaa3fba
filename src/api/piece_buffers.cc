#include "api/piece_buffers.h"

#include <utility>

namespace tf::api {

std::string PieceBuffers::Take() {
  MutexLock lock(mu_);
  if (kept_.empty()) return {};
  std::string buffer = std::move(kept_.back());
  kept_.pop_back();
  kept_bytes_ -= buffer.capacity();
  return buffer;
}

void PieceBuffers::Give(std::string buffer) {
  const size_t bytes = buffer.capacity();
  if (bytes < kMinKeptBytes) return;
  MutexLock lock(mu_);
  if (kept_bytes_ + bytes > max_kept_bytes_) return;  // freed as `buffer` goes
  kept_bytes_ += bytes;
  kept_.push_back(std::move(buffer));
}

size_t PieceBuffers::kept_bytes() const {
  MutexLock lock(mu_);
  return kept_bytes_;
}

PieceBuffers& BodyPieceBuffers() {
  static PieceBuffers buffers(kKeptBodyBufferBytes);
  return buffers;
}

}  // namespace tf::api
