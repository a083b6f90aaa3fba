// A small fixed pool of threads for splitting one kernel call across cores.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace tf::engine {

class ThreadPool {
 public:
  // `num_threads` counts the calling thread: 1 runs everything on the caller, N starts N - 1
  // workers. 0 means one per hardware thread.
  explicit ThreadPool(int num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return static_cast<int>(workers_.size()) + 1; }

  // Calls fn(begin, end) on disjoint ranges that together cover [0, n), at most one range per
  // thread, the caller's thread included, and returns when every call has returned. Ranges are
  // at least `min_chunk` long, so small jobs stay on fewer threads. One ParallelFor at a time:
  // calls from several threads are serialised; fn must not call ParallelFor.
  void ParallelFor(int64_t n, const std::function<void(int64_t, int64_t)>& fn,
                   int64_t min_chunk = 1);

 private:
  void WorkerLoop(int index);

  std::mutex call_mu_;  // serialises ParallelFor callers
  std::mutex mu_;       // guards everything below
  std::condition_variable work_cv_;
  std::condition_variable done_cv_;
  const std::function<void(int64_t, int64_t)>* fn_ = nullptr;
  int64_t n_ = 0;
  int chunks_ = 0;  // ranges in the current call; range i goes to thread i (0: caller)
  uint64_t generation_ = 0;
  int pending_ = 0;  // workers still running their range
  bool stop_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace tf::engine
