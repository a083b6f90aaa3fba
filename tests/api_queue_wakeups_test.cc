// The gateway's queue wake-ups (api/queue_wakeups.h): a waiter is woken by a request ending at
// its endpoint or by a rotation change, and no wake-up is lost between its look and its wait.
#include <gtest/gtest.h>

#include <future>

#include "api/queue_wakeups.h"
#include "http_test_util.h"  // first: includes base/async.h

namespace tf::api {
namespace {

using namespace std::chrono_literals;

class QueueWakeupsTest : public ::testing::Test {
 protected:
  // Starts a wait on the io thread; the future is ready when it returns.
  std::future<void> StartWait(const std::string& endpoint, uint64_t seen,
                              std::chrono::milliseconds timeout) {
    auto done = std::make_shared<std::promise<void>>();
    std::future<void> ready = done->get_future();
    asio::co_spawn(io_.io(), wakeups_.Wait(endpoint, seen, timeout),
                   [done](const std::exception_ptr&) { done->set_value(); });
    return ready;
  }

  QueueWakeups wakeups_;
  http::testing::IoThread io_;
};

TEST_F(QueueWakeupsTest, AWaitForACountThatMovedOnReturnsAtOnce) {
  uint64_t seen = wakeups_.Count("ep_a");
  wakeups_.Notify("ep_a");
  EXPECT_NE(wakeups_.Count("ep_a"), seen);
  EXPECT_EQ(StartWait("ep_a", seen, 10min).wait_for(10s), std::future_status::ready);
}

TEST_F(QueueWakeupsTest, NotifyWakesTheEndpointsWaitersAndNotifyAllEveryone) {
  // Whether the notice comes before the wait is registered or after, the waiter returns: no
  // wake-up is lost. (Its timeout is far beyond the test's patience.)
  std::future<void> a = StartWait("ep_a", wakeups_.Count("ep_a"), 10min);
  std::future<void> b = StartWait("ep_b", wakeups_.Count("ep_b"), 10min);
  wakeups_.Notify("ep_a");
  EXPECT_EQ(a.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(b.wait_for(0s), std::future_status::timeout) << "another endpoint's notice";
  wakeups_.NotifyAll();
  EXPECT_EQ(b.wait_for(10s), std::future_status::ready);
}

TEST_F(QueueWakeupsTest, AWaitNobodyWakesEndsAtItsTimeout) {
  EXPECT_EQ(StartWait("ep_a", wakeups_.Count("ep_a"), 1ms).wait_for(10s),
            std::future_status::ready);
}

}  // namespace
}  // namespace tf::api
