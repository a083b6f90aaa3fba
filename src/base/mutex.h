// A mutex the thread-safety analysis knows (base/thread_annotations.h), and the scoped lock
// that holds it. Fields it guards say so with GUARDED_BY(mu_), so that clang checks every access.
//
//   Mutex mu_;
//   std::condition_variable changed_;
//   bool ready_ GUARDED_BY(mu_) = false;
//
//   void Wait() {
//     MutexLock lock(mu_);
//     while (!ready_) lock.Wait(changed_);   // a loop, not a predicate lambda: the analysis
//   }                                        // sees ready_ read with mu_ held
//
// Both are std::mutex and std::unique_lock underneath, with no cost added.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <utility>

#include "base/thread_annotations.h"

namespace tf {

class CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() ACQUIRE() { mu_.lock(); }
  void Unlock() RELEASE() { mu_.unlock(); }
  bool TryLock() TRY_ACQUIRE(true) { return mu_.try_lock(); }
  // Tells the analysis that the caller holds the mutex (where it cannot see it: a callback
  // run under a lock taken elsewhere). Checks nothing at run time.
  void AssertHeld() const ASSERT_CAPABILITY(this) {}

 private:
  friend class MutexLock;
  std::mutex mu_;
};

// Holds a Mutex for its scope; Unlock() and Lock() give it back and take it again within it.
class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mu) ACQUIRE(mu) : lock_(mu.mu_) {}
  ~MutexLock() RELEASE() = default;
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

  void Unlock() RELEASE() { lock_.unlock(); }
  void Lock() ACQUIRE() { lock_.lock(); }

  // Waits until `cv` is notified (or wakes spuriously), the mutex given back meanwhile and held
  // again on return. Callers loop on their condition.
  void Wait(std::condition_variable& cv) { cv.wait(lock_); }
  // Waits until `ready()` is true, calling it with the mutex held. The analysis cannot see
  // through the call, so a lambda that reads guarded fields says so: [&]() REQUIRES(mu_) {...}.
  template <typename Ready>
  void Wait(std::condition_variable& cv, Ready ready) NO_THREAD_SAFETY_ANALYSIS {
    while (!ready()) cv.wait(lock_);
  }
  // As Wait, for at most `timeout`: false if it ran out with `ready()` still false.
  template <typename Rep, typename Period, typename Ready>
  bool WaitFor(std::condition_variable& cv, std::chrono::duration<Rep, Period> timeout,
               Ready ready) NO_THREAD_SAFETY_ANALYSIS {
    return cv.wait_for(lock_, timeout, std::move(ready));
  }
  // As Wait, for at most `timeout` / until `deadline`: false if it ran out.
  template <typename Rep, typename Period>
  bool WaitFor(std::condition_variable& cv, std::chrono::duration<Rep, Period> timeout) {
    return cv.wait_for(lock_, timeout) == std::cv_status::no_timeout;
  }
  template <typename Clock, typename Duration>
  bool WaitUntil(std::condition_variable& cv, std::chrono::time_point<Clock, Duration> deadline) {
    return cv.wait_until(lock_, deadline) == std::cv_status::no_timeout;
  }

 private:
  std::unique_lock<std::mutex> lock_;
};

}  // namespace tf
