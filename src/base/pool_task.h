// Blocking work started on the pool now and awaited later, so that a coroutine can do something
// else meanwhile (read the next piece of a request body while the last one is written to disk).
#pragma once

#include <functional>
#include <memory>
#include <optional>

#include "base/async.h"
#include "base/mutex.h"

namespace tf {

// One piece of blocking work returning R, started by Start on `pool` (or on a strand of it, so
// that several started one after another run one at a time, in order). Wait() resumes the
// awaiting coroutine on its own executor with the result, at once if it is already there.
// Whatever `fn` uses must outlive the work: a PooledTask that was started must be awaited
// before those things go (its destructor does not wait).
template <typename R>
class PooledTask {
 public:
  PooledTask() = default;

  template <typename Pool, typename Fn>
  static PooledTask Start(Pool& pool, Fn fn) {
    PooledTask task;
    task.state_ = std::make_shared<State>();
    asio::post(pool, [state = task.state_, fn = std::move(fn)]() mutable {
      R result = fn();
      std::function<void(R)> waiter;
      {
        MutexLock lock(state->mu);
        if (state->waiter) {
          waiter = std::move(state->waiter);
        } else {
          state->result.emplace(std::move(result));
          return;
        }
      }
      waiter(std::move(result));
    });
    return task;
  }

  // Whether Start was called and Wait has not been yet.
  bool started() const { return state_ != nullptr; }

  // The work's result. Call once per Start.
  awaitable<R> Wait() {
    std::shared_ptr<State> state = std::move(state_);
    // Named first: see RunBlocking on lambdas inside co_await with g++ 12.
    auto start = [state](std::function<void(R)> done) {
      MutexLock lock(state->mu);
      if (state->result) {
        R result = std::move(*state->result);
        lock.Unlock();
        done(std::move(result));
        return;
      }
      state->waiter = std::move(done);
    };
    R result = co_await AwaitCallback<R>(std::move(start));
    co_return result;
  }

 private:
  struct State {
    Mutex mu;
    std::optional<R> result GUARDED_BY(mu);        // set when done before anyone waited
    std::function<void(R)> waiter GUARDED_BY(mu);  // set when someone waited first
  };
  std::shared_ptr<State> state_;
};

}  // namespace tf
