// Carries an upstream response from the blocking HTTP client, on a pool thread, to the
// coroutine that answers the gateway's client, piece by piece as it arrives (an SSE stream
// event by event), without holding a thread on the coroutine's side.
//
// The pool thread calls OnHead once, OnChunk for each piece, and OnEnd last; the coroutine
// awaits Next. Cancel (from the coroutine: its client has gone) makes the next OnChunk return
// false, which drops the upstream connection. Wake-ups are posted onto the coroutine's
// executor, as serve/channel.h does for the engine.
#pragma once

#include <atomic>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "base/async.h"  // first: see the note on <utility> there
#include "base/mutex.h"
#include "base/status.h"
#include "http/http.h"

namespace tf::endpoints {

class ResponseRelay final : public std::enable_shared_from_this<ResponseRelay> {
 public:
  struct Batch {
    std::optional<http::ClientResponse> head;  // the status and headers, once
    std::string data;                          // the pieces since the last call, joined
    bool done = false;
    Status status;  // with done: how the exchange ended
  };

  explicit ResponseRelay(asio::any_io_executor executor) : executor_(executor), timer_(executor) {}

  // Pool side.
  void OnHead(const http::ClientResponse& head);
  bool OnChunk(std::string_view piece);
  void OnEnd(const Status& status);

  // Coroutine side: what has come since the last call, waiting up to `wait` when nothing has.
  awaitable<Batch> Next(std::chrono::milliseconds wait);
  void Cancel() { cancelled_.store(true); }
  bool cancelled() const { return cancelled_.load(); }

 private:
  void Wake();
  bool TakeLocked(Batch* out) REQUIRES(mu_);

  asio::any_io_executor executor_;
  asio::steady_timer timer_;  // on executor_ only
  std::atomic<bool> cancelled_{false};
  Mutex mu_;
  std::optional<http::ClientResponse> head_ GUARDED_BY(mu_);
  std::string data_ GUARDED_BY(mu_);
  bool done_ GUARDED_BY(mu_) = false;
  bool taken_done_ GUARDED_BY(mu_) = false;
  Status status_ GUARDED_BY(mu_);
};

}  // namespace tf::endpoints
