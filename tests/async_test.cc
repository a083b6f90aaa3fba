// RunBlocking and AwaitCallback: work goes elsewhere, and the coroutine resumes on its own
// executor.
#include "base/async.h"  // first: see the note on <utility> there

#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/strand.hpp>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace tf {
namespace {

TEST(RunBlockingTest, RunsOnThePoolAndResumesOnTheCallersStrand) {
  asio::io_context io;
  asio::thread_pool pool(2);
  auto strand = asio::make_strand(io);
  std::thread::id fn_thread;
  bool fn_on_strand = true;
  bool resumed_on_strand = false;
  std::unique_ptr<int> result;  // move-only on purpose
  asio::co_spawn(
      strand,
      [&]() -> awaitable<void> {
        result = co_await RunBlocking(pool, [&] {
          fn_thread = std::this_thread::get_id();
          fn_on_strand = strand.running_in_this_thread();
          return std::make_unique<int>(42);
        });
        resumed_on_strand = strand.running_in_this_thread();
      },
      asio::detached);
  io.run();  // returns once the coroutine has finished
  pool.join();
  ASSERT_NE(result, nullptr);
  EXPECT_EQ(*result, 42);
  EXPECT_NE(fn_thread, std::this_thread::get_id());
  EXPECT_FALSE(fn_on_strand);
  EXPECT_TRUE(resumed_on_strand);
}

TEST(RunBlockingTest, ManyConcurrentCallsEachGetTheirOwnResult) {
  constexpr int kCalls = 200;
  asio::io_context io;
  asio::thread_pool pool(4);
  std::vector<int> results(kCalls, -1);
  std::atomic<int> wrong_thread{0};
  const auto io_thread = std::this_thread::get_id();
  for (int i = 0; i < kCalls; ++i) {
    asio::co_spawn(
        io,
        [&, i]() -> awaitable<void> {
          results[i] = co_await RunBlocking(pool, [i] { return i * i; });
          if (std::this_thread::get_id() != io_thread) ++wrong_thread;
        },
        asio::detached);
  }
  io.run();
  pool.join();
  for (int i = 0; i < kCalls; ++i) EXPECT_EQ(results[i], i * i);
  EXPECT_EQ(wrong_thread.load(), 0);
}

TEST(RunBlockingTest, ValueCapturesSurviveWhenTheLambdaIsNamed) {
  asio::io_context io;
  asio::thread_pool pool(1);
  std::string result;
  asio::co_spawn(
      io,
      [&]() -> awaitable<void> {
        std::string name(64, 'n');  // on the heap, so a double free would show
        auto work = [name, owner = std::make_shared<int>(7)] {
          return name + std::to_string(*owner);
        };
        result = co_await RunBlocking(pool, std::move(work));
      },
      asio::detached);
  io.run();
  pool.join();
  EXPECT_EQ(result, std::string(64, 'n') + "7");
}

TEST(AwaitCallbackTest, ResumesOnTheCallersStrandWithTheValueFromAnotherThread) {
  asio::io_context io;
  auto strand = asio::make_strand(io);
  std::thread other;
  std::string result;
  bool resumed_on_strand = false;
  asio::co_spawn(
      strand,
      [&]() -> awaitable<void> {
        auto start = [&](std::function<void(std::string)> done) {
          other = std::thread([done] { done(std::string(64, 'x')); });
        };
        result = co_await AwaitCallback<std::string>(start);
        resumed_on_strand = strand.running_in_this_thread();
      },
      asio::detached);
  io.run();  // returns once the coroutine has finished
  other.join();
  EXPECT_EQ(result, std::string(64, 'x'));
  EXPECT_TRUE(resumed_on_strand);
}

TEST(AwaitCallbackTest, ACallbackCalledBeforeStartReturnsStillResumes) {
  asio::io_context io;
  int result = 0;
  asio::co_spawn(
      io,
      [&]() -> awaitable<void> {
        auto start = [](std::function<void(int)> done) { done(7); };
        result = co_await AwaitCallback<int>(start);
      },
      asio::detached);
  io.run();
  EXPECT_EQ(result, 7);
}

}  // namespace
}  // namespace tf
