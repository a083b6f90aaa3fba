// The asynchronous runtime: network I/O runs as C++20 coroutines on Asio; blocking work (the
// store, the disk) runs on a separate pool so that an idle connection or a long poll costs a
// coroutine frame, never a thread.
#pragma once

// Boost 1.74's awaitable.hpp uses std::exchange without including <utility>: it must come first
// (the formatter would sort it after Asio).
// clang-format off
#include <utility>
// clang-format on

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <memory>
#include <optional>
#include <type_traits>

namespace tf {

namespace asio = boost::asio;
using asio::awaitable;

// Runs `fn` on `pool` and resumes the calling coroutine on its own executor with the result.
// `fn` must not throw and must return a value (not void).
//
// g++ 12 destroys a lambda or brace-initialized temporary that is written inside a co_await
// expression twice (a double free when it holds a std::string, a shared_ptr, ...). A lambda
// that captures only by reference is harmless; one that captures by value must be named first:
//   auto work = [name = std::string(n)] { return Load(name); };
//   auto result = co_await RunBlocking(pool, std::move(work));
template <typename Fn>
awaitable<std::invoke_result_t<Fn>> RunBlocking(asio::thread_pool& pool, Fn fn) {
  using R = std::invoke_result_t<Fn>;
  auto initiate = [&pool, fn = std::move(fn)](auto handler) mutable {
    asio::post(pool, [handler = std::move(handler), fn = std::move(fn)]() mutable {
      std::optional<R> result(fn());
      auto ex = asio::get_associated_executor(handler);
      asio::dispatch(ex, [handler = std::move(handler), result = std::move(result)]() mutable {
        std::move(handler)(std::move(result));
      });
    });
  };
  std::optional<R> result =
      co_await asio::async_initiate<decltype(asio::use_awaitable), void(std::optional<R>)>(
          std::move(initiate), asio::use_awaitable);
  co_return std::move(*result);
}

// Awaits an operation that reports through a callback: `start(done)` begins it and calls
// `done(R)` exactly once, on any thread (or before it returns); the calling coroutine resumes on
// its own executor with that value. `done` is copyable (a std::function can hold it).
// The same g++ 12 caveat as RunBlocking applies to `start`.
template <typename R, typename Start>
awaitable<R> AwaitCallback(Start start) {
  auto initiate = [start = std::move(start)](auto handler) mutable {
    // Asio's handlers are move-only; the callback is copyable, so it holds the handler by
    // pointer, and the first call takes it.
    using Handler = decltype(handler);
    auto held = std::make_shared<std::optional<Handler>>(std::move(handler));
    start([held](R result) {
      if (!held->has_value()) return;  // called twice: a bug in `start`; only the first counts
      Handler h = std::move(**held);
      held->reset();
      auto ex = asio::get_associated_executor(h);
      asio::post(ex, [h = std::move(h), result = std::move(result)]() mutable {
        std::move(h)(std::optional<R>(std::move(result)));
      });
    });
  };
  std::optional<R> result =
      co_await asio::async_initiate<decltype(asio::use_awaitable), void(std::optional<R>)>(
          std::move(initiate), asio::use_awaitable);
  co_return std::move(*result);
}

}  // namespace tf
