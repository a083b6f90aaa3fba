// Wakes long polls when a queue may have new visible messages, without a thread per waiter.
//
// A waiter is a timer on its coroutine's executor. Notify() posts the wake-up onto that
// executor, so it is ordered with the coroutine's own steps when the executor is a strand (the
// HTTP server runs each connection on one).
#pragma once

#include <atomic>
#include <boost/asio/steady_timer.hpp>
#include <cstdint>
#include <map>
#include <memory>
#include <set>

#include "base/async.h"
#include "base/mutex.h"

namespace tf::queues {

class QueueWakeups {
 public:
  struct Waiter {
    explicit Waiter(asio::any_io_executor ex) : timer(ex) {}
    asio::steady_timer timer;
    bool notified = false;  // touched only on timer's executor
  };

  // Registers a waiter for `queue_id`. Keep the result alive while waiting; Unregister after.
  std::shared_ptr<Waiter> Register(int64_t queue_id, asio::any_io_executor ex);
  void Unregister(int64_t queue_id, const std::shared_ptr<Waiter>& waiter);

  // Thread-safe; called by the store's listener.
  void Notify(int64_t queue_id);

  // Thread-safe: wakes every waiter, and closed() is true from now on, so that long polls
  // answer with what they have instead of holding a server's graceful shutdown until they end.
  void Close();
  bool closed() const { return closed_.load(); }

  size_t waiting() const;

 private:
  static void Wake(const std::shared_ptr<Waiter>& w);

  mutable Mutex mu_;
  std::map<int64_t, std::set<std::shared_ptr<Waiter>>> waiters_ GUARDED_BY(mu_);
  std::atomic<bool> closed_{false};
};

}  // namespace tf::queues
