// The bridge between the engine thread and the HTTP coroutine that answers a request: the
// engine pushes steps into a ChannelSink, the coroutine awaits them without holding a thread.
//
// Threading: OnStep/OnDone/cancelled run on the engine thread; Next and Cancel on the
// coroutine's executor (a connection's strand). Wake-ups are posted onto that executor, so they
// are ordered with the coroutine's own steps.
#pragma once

#include <atomic>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/async.h"  // first: see the note on <utility> there
#include "base/mutex.h"
#include "serve/executor.h"

namespace tf::serve {

class ChannelSink final : public GenerationSink, public std::enable_shared_from_this<ChannelSink> {
 public:
  struct Step {
    std::optional<engine::SampledToken> token;  // none for the last, text-only step
    std::string text;
  };
  // What Next returns: the steps since the last call, and the end once it has come.
  struct Batch {
    std::vector<Step> steps;
    bool done = false;
    bool timed_out = false;  // the wait ran its full length
    Status status;
    engine::GenerateResult result;
  };

  explicit ChannelSink(asio::any_io_executor executor);

  bool OnStep(const engine::GenerateStep& step) override;
  void OnDone(const Status& status, const engine::GenerateResult& result) override;
  bool cancelled() const override { return cancelled_.load(); }

  // Waits up to `wait` for steps or the end; an empty batch when none came in time (or on a
  // spurious wake-up).
  awaitable<Batch> Next(std::chrono::milliseconds wait);
  // The client has gone: the engine stops at its next step.
  void Cancel() { cancelled_.store(true); }

 private:
  void Wake();
  bool TakeLocked(Batch* out) REQUIRES(mu_);

  asio::any_io_executor executor_;
  asio::steady_timer timer_;  // used on executor_ only
  std::atomic<bool> cancelled_{false};
  Mutex mu_;
  std::vector<Step> steps_ GUARDED_BY(mu_);
  bool done_ GUARDED_BY(mu_) = false;
  bool taken_done_ GUARDED_BY(mu_) = false;  // the end has been handed to Next
  Status status_ GUARDED_BY(mu_);
  engine::GenerateResult result_ GUARDED_BY(mu_);
};

}  // namespace tf::serve
