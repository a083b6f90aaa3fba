// A small fixed pool of threads for splitting one kernel call across cores.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <thread>
#include <vector>

#include "base/mutex.h"

namespace tf::engine {

class ThreadPool {
 public:
  // `num_threads` counts the calling thread: 1 runs everything on the caller, N starts N - 1
  // workers. 0 means one per hardware thread. `spin_polls`: how many times a waiting thread
  // polls before it sleeps (see ParallelFor; 0 sleeps at once).
  static constexpr int kDefaultSpinPolls = 1 << 14;
  explicit ThreadPool(int num_threads, int spin_polls = kDefaultSpinPolls);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return static_cast<int>(workers_.size()) + 1; }

  // Calls fn(begin, end) on disjoint ranges that together cover [0, n), at most one range per
  // thread, the caller's thread included, and returns when every call has returned. Ranges are
  // at least `min_chunk` long, so small jobs stay on fewer threads. One ParallelFor at a time:
  // calls from several threads are serialised; fn must not call ParallelFor.
  //
  // A decode step makes about a hundred calls a few microseconds apart, so waiting threads
  // (workers for the next call, the caller for the workers) first poll for a bounded number of
  // pause instructions (kDefaultSpinPolls: 0.2 to 1 ms, a pause taking 40 to 140 cycles
  // depending on the CPU), and only then sleep on a condition variable: back
  // to back calls never pay for a sleep and a wake-up, and an idle pool uses no CPU.
  void ParallelFor(int64_t n, const std::function<void(int64_t, int64_t)>& fn,
                   int64_t min_chunk = 1);

 private:
  void WorkerLoop(int index);
  // Polls `done` up to spin_polls_ times; true as soon as it holds.
  template <typename Pred>
  bool SpinUntil(const Pred& done) const;

  const int spin_polls_;

  Mutex call_mu_;  // serialises ParallelFor callers
  // The current call: generation_ is (call number << 16) | ranges, range i going to thread i
  // (0: the caller). The caller writes fn_ and n_ before it stores a new generation_, which
  // publishes them; a worker reads them only when the call has a range for it, so the caller
  // (which waits for that range) cannot overwrite them meanwhile.
  static constexpr int kChunkBits = 16;
  const std::function<void(int64_t, int64_t)>* fn_ = nullptr;
  int64_t n_ = 0;
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> pending_{0};  // workers still running their range
  std::atomic<bool> stop_{false};

  // Sleeping: a thread that gives up polling announces itself (workers_asleep_, caller_asleep_)
  // under mu_ before it waits, and whoever changes what it waits for wakes it when it is
  // announced; both sides use sequentially consistent operations, so one of them always sees
  // the other.
  Mutex mu_;
  std::condition_variable work_cv_;
  std::condition_variable done_cv_;
  std::atomic<int> workers_asleep_{0};
  std::atomic<bool> caller_asleep_{false};

  std::vector<std::thread> workers_;
};

}  // namespace tf::engine
