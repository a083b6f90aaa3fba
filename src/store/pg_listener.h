// Hears about queue changes made through any server: a thread with a connection of its own
// LISTENs on kQueueChannel, whose notifications carry a queue id, and reports each queue id.
//
// Notifications sent by this server's own pool connections are skipped (the store reports those
// itself, as soon as they commit). When the connection drops, the thread reconnects with backoff
// (100 ms, doubling up to 2 s) and then reports every queue once, since notifications sent in the
// meantime are lost. Stopped and joined by the destructor.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>

#include "base/mutex.h"
#include "store/pg_connection.h"

namespace tf::store {

// The channel the store notifies (pg_notify(kQueueChannel, queue_id::text)) when messages may have
// become visible in a queue.
inline constexpr char kQueueChannel[] = "tensorfleet_queue";

class PgQueueListener {
 public:
  // `on_queue` runs on the listener's thread; `is_own_backend(pid)` tells which notifications to
  // skip. Both must be thread-safe and quick.
  PgQueueListener(std::string conninfo, std::function<void(int64_t queue_id)> on_queue,
                  std::function<bool(int pid)> is_own_backend);
  ~PgQueueListener();
  PgQueueListener(const PgQueueListener&) = delete;
  PgQueueListener& operator=(const PgQueueListener&) = delete;

  // Waits until the first LISTEN has taken effect; false if `timeout` passed first (the database
  // is unreachable: the thread keeps trying).
  bool WaitListening(std::chrono::milliseconds timeout);

 private:
  void Loop();
  // Reads notifications until the connection drops or Stop is asked for.
  void Listen(PgConnection& conn);
  void ReportAllQueues(PgConnection& conn);
  // Waits `delay` or until the destructor asks the thread to stop; true if it did.
  bool WaitForStop(std::chrono::milliseconds delay);

  const std::string conninfo_;
  const std::function<void(int64_t)> on_queue_;
  const std::function<bool(int)> is_own_backend_;
  int wake_[2] = {-1, -1};  // a pipe: the destructor writes a byte to wake the thread
  std::atomic<bool> stopping_{false};
  Mutex mu_;
  std::condition_variable listening_changed_;
  bool listening_ GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace tf::store
