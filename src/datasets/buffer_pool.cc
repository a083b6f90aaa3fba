#include "datasets/buffer_pool.h"

#include <pthread.h>
#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

namespace tf::datasets {
namespace {

constexpr uint64_t kGranule = uint64_t{64} << 10;
constexpr uint64_t kBatchPoolBytes = uint64_t{128} << 20;

}  // namespace

PooledBuffer::PooledBuffer(PooledBuffer&& other) noexcept
    : pool_(other.pool_), data_(other.data_), capacity_(other.capacity_) {
  other.pool_ = nullptr;
  other.data_ = nullptr;
  other.capacity_ = 0;
}

PooledBuffer& PooledBuffer::operator=(PooledBuffer&& other) noexcept {
  if (this != &other) {
    GiveBack();
    std::swap(pool_, other.pool_);
    std::swap(data_, other.data_);
    std::swap(capacity_, other.capacity_);
  }
  return *this;
}

PooledBuffer::~PooledBuffer() { GiveBack(); }

void PooledBuffer::GiveBack() {
  if (data_ != nullptr) pool_->GiveBack(data_, capacity_);
  pool_ = nullptr;
  data_ = nullptr;
  capacity_ = 0;
}

BufferPool::BufferPool(uint64_t max_kept_bytes) : max_kept_bytes_(max_kept_bytes) {}

BufferPool::~BufferPool() {
  for (const Kept& k : kept_) ::munmap(k.data, k.capacity);
}

Result<PooledBuffer> BufferPool::Get(uint64_t bytes) {
  if (bytes == 0) return PooledBuffer();
  {
    MutexLock lock(mu_);
    auto best = kept_.end();
    for (auto it = kept_.begin(); it != kept_.end(); ++it) {
      if (it->capacity < bytes || it->capacity / 2 > bytes) continue;
      if (best == kept_.end() || it->capacity < best->capacity) best = it;
    }
    if (best != kept_.end()) {
      Kept k = *best;
      *best = kept_.back();
      kept_.pop_back();
      kept_bytes_ -= k.capacity;
      return PooledBuffer(this, k.data, k.capacity);
    }
  }
  if (bytes > UINT64_MAX - kGranule) {
    return ResourceExhausted("a buffer of " + std::to_string(bytes) + " bytes");
  }
  const uint64_t capacity = (bytes + kGranule - 1) / kGranule * kGranule;
  void* data = ::mmap(nullptr, capacity, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (data == MAP_FAILED) {
    return ResourceExhausted("cannot map " + std::to_string(capacity) +
                             " bytes for a batch: " + std::strerror(errno));
  }
  MutexLock lock(mu_);
  ++mapped_;
  return PooledBuffer(this, static_cast<char*>(data), capacity);
}

void BufferPool::GiveBack(char* data, uint64_t capacity) {
  {
    MutexLock lock(mu_);
    if (kept_bytes_ + capacity <= max_kept_bytes_) {
      kept_.push_back(Kept{data, capacity});
      kept_bytes_ += capacity;
      return;
    }
  }
  ::munmap(data, capacity);
}

uint64_t BufferPool::kept_bytes() const {
  MutexLock lock(mu_);
  return kept_bytes_;
}

int64_t BufferPool::mapped() const {
  MutexLock lock(mu_);
  return mapped_;
}

BufferPool& BufferPool::ForBatches() {
  // Never destroyed: buffers may be given back to it while the process exits.
  static BufferPool* pool = [] {
    auto* made = new BufferPool(kBatchPoolBytes);
    ::pthread_atfork(LockForFork, UnlockAfterFork, UnlockAfterFork);
    return made;
  }();
  return *pool;
}

// pthread_atfork's handlers: the mutex is taken before fork and given back after it, in another
// function, which the analysis cannot follow.
void BufferPool::LockForFork() NO_THREAD_SAFETY_ANALYSIS { ForBatches().mu_.Lock(); }

void BufferPool::UnlockAfterFork() NO_THREAD_SAFETY_ANALYSIS { ForBatches().mu_.Unlock(); }

}  // namespace tf::datasets
