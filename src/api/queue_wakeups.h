// Requests waiting in an endpoint's queue for a replica with room are woken when one may have
// it: a request at that endpoint ended (Notify), or the rotation changed (NotifyAll), rather
// than looking again on a timer.
//
// An event count: a waiter reads the endpoint's count before it looks for room, and a wait for
// a count that has moved on since returns at once, so no wake-up is lost between the look and
// the wait. Thread-safe; a waiter's timer is cancelled on its own executor (a connection's
// strand), never from another thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/async.h"  // first: see the note on <utility> there
#include "base/mutex.h"

namespace tf::api {

class QueueWakeups {
 public:
  // The endpoint's count now, to pass to Wait after looking for room.
  uint64_t Count(const std::string& endpoint_id);
  // Returns once the endpoint's count has moved past `seen`, or after `timeout`. (The id is
  // taken by value: the coroutine outlives its caller's temporaries.)
  awaitable<void> Wait(std::string endpoint_id, uint64_t seen, std::chrono::milliseconds timeout);
  // Wakes the endpoint's waiters.
  void Notify(const std::string& endpoint_id);
  // Wakes every waiter.
  void NotifyAll();

 private:
  struct Waiter;
  uint64_t CountLocked(const std::string& endpoint_id) REQUIRES(mu_);
  static void Wake(std::vector<std::shared_ptr<Waiter>>& waiters);

  Mutex mu_;
  std::map<std::string, uint64_t> counts_ GUARDED_BY(mu_);
  uint64_t all_ GUARDED_BY(mu_) = 0;  // NotifyAll's, added to every endpoint's count
  std::map<std::string, std::vector<std::shared_ptr<Waiter>>> waiters_ GUARDED_BY(mu_);
};

}  // namespace tf::api
