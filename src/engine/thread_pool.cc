#include "engine/thread_pool.h"

#include <algorithm>

namespace tf::engine {
namespace {

// Range i of `chunks` equal parts of [0, n).
void Range(int64_t n, int chunks, int i, int64_t* begin, int64_t* end) {
  *begin = n * i / chunks;
  *end = n * (i + 1) / chunks;
}

}  // namespace

ThreadPool::ThreadPool(int num_threads) {
  if (num_threads <= 0)
    num_threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  for (int i = 1; i < num_threads; ++i) workers_.emplace_back([this, i] { WorkerLoop(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  work_cv_.notify_all();
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
  std::lock_guard<std::mutex> call_lock(call_mu_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    fn_ = &fn;
    n_ = n;
    chunks_ = chunks;
    pending_ = chunks - 1;
    ++generation_;
  }
  work_cv_.notify_all();
  int64_t begin, end;
  Range(n, chunks, 0, &begin, &end);
  fn(begin, end);
  std::unique_lock<std::mutex> lock(mu_);
  done_cv_.wait(lock, [this] { return pending_ == 0; });
  fn_ = nullptr;
}

void ThreadPool::WorkerLoop(int index) {
  uint64_t seen = 0;
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    work_cv_.wait(lock, [&] { return stop_ || generation_ != seen; });
    if (stop_) return;
    seen = generation_;
    if (index >= chunks_) continue;  // this call needs fewer threads
    const auto* fn = fn_;
    int64_t begin, end;
    Range(n_, chunks_, index, &begin, &end);
    lock.unlock();
    (*fn)(begin, end);
    lock.lock();
    if (--pending_ == 0) done_cv_.notify_one();
  }
}

}  // namespace tf::engine
