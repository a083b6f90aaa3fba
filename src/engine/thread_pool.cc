#include "engine/thread_pool.h"

#include <algorithm>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace tf::engine {
namespace {

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#else
  std::this_thread::yield();
#endif
}

// Range i of `chunks` equal parts of [0, n).
void Range(int64_t n, int chunks, int i, int64_t* begin, int64_t* end) {
  *begin = n * i / chunks;
  *end = n * (i + 1) / chunks;
}

}  // namespace

template <typename Pred>
bool ThreadPool::SpinUntil(const Pred& done) const {
  for (int i = 0; i < spin_polls_; ++i) {
    if (done()) return true;
    CpuRelax();
  }
  return done();
}

ThreadPool::ThreadPool(int num_threads, int spin_polls) : spin_polls_(std::max(0, spin_polls)) {
  if (num_threads <= 0)
    num_threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  num_threads = std::min(num_threads, (1 << kChunkBits) - 1);
  for (int i = 1; i < num_threads; ++i) workers_.emplace_back([this, i] { WorkerLoop(i); });
}

ThreadPool::~ThreadPool() {
  stop_.store(true);
  generation_.store(((generation_.load() >> kChunkBits) + 1) << kChunkBits);  // no ranges
  {
    MutexLock lock(mu_);
    work_cv_.notify_all();
  }
  for (auto& t : workers_) t.join();
}

void ThreadPool::ParallelFor(int64_t n, const std::function<void(int64_t, int64_t)>& fn,
                             int64_t min_chunk) {
  if (n <= 0) return;
  int64_t by_size = std::max<int64_t>(1, n / std::max<int64_t>(1, min_chunk));
  int chunks = static_cast<int>(std::min<int64_t>(num_threads(), by_size));
  if (chunks == 1) {
    fn(0, n);
    return;
  }
  MutexLock call_lock(call_mu_);
  fn_ = &fn;
  n_ = n;
  pending_.store(chunks - 1);
  const uint64_t call = (generation_.load() >> kChunkBits) + 1;
  generation_.store(call << kChunkBits | static_cast<uint64_t>(chunks));  // publishes the call
  if (workers_asleep_.load() > 0) {
    MutexLock lock(mu_);
    work_cv_.notify_all();
  }
  int64_t begin, end;
  Range(n, chunks, 0, &begin, &end);
  fn(begin, end);
  auto done = [this] { return pending_.load() == 0; };
  if (!SpinUntil(done)) {
    MutexLock lock(mu_);
    caller_asleep_.store(true);
    lock.Wait(done_cv_, done);
    caller_asleep_.store(false);
  }
  fn_ = nullptr;
}

void ThreadPool::WorkerLoop(int index) {
  uint64_t seen = 0;
  while (true) {
    uint64_t current = seen;
    auto has_work = [&] {
      current = generation_.load();
      return current != seen;
    };
    if (!SpinUntil(has_work)) {
      MutexLock lock(mu_);
      workers_asleep_.fetch_add(1);
      lock.Wait(work_cv_, has_work);
      workers_asleep_.fetch_sub(1);
    }
    seen = current;
    if (stop_.load()) return;
    const int chunks = static_cast<int>(current & ((uint64_t{1} << kChunkBits) - 1));
    if (index >= chunks) continue;  // this call needs fewer threads
    int64_t begin, end;
    Range(n_, chunks, index, &begin, &end);
    (*fn_)(begin, end);
    if (pending_.fetch_sub(1) == 1 && caller_asleep_.load()) {
      MutexLock lock(mu_);
      done_cv_.notify_one();
    }
  }
}

}  // namespace tf::engine
