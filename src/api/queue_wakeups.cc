#include "api/queue_wakeups.h"

#include <algorithm>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>

namespace tf::api {

struct QueueWakeups::Waiter {
  explicit Waiter(const asio::any_io_executor& executor) : timer(executor) {}
  asio::steady_timer timer;
};

uint64_t QueueWakeups::CountLocked(const std::string& endpoint_id) {
  auto it = counts_.find(endpoint_id);
  return all_ + (it == counts_.end() ? 0 : it->second);
}

uint64_t QueueWakeups::Count(const std::string& endpoint_id) {
  MutexLock lock(mu_);
  return CountLocked(endpoint_id);
}

awaitable<void> QueueWakeups::Wait(std::string endpoint_id, uint64_t seen,
                                   std::chrono::milliseconds timeout) {
  auto waiter = std::make_shared<Waiter>(co_await asio::this_coro::executor);
  waiter->timer.expires_after(timeout);
  {
    MutexLock lock(mu_);
    if (CountLocked(endpoint_id) != seen) co_return;
    waiters_[endpoint_id].push_back(waiter);
  }
  // A wake-up posted to this executor runs once this coroutine is suspended here.
  boost::system::error_code ignored;
  co_await waiter->timer.async_wait(asio::redirect_error(asio::use_awaitable, ignored));
  MutexLock lock(mu_);
  auto it = waiters_.find(endpoint_id);
  if (it == waiters_.end()) co_return;
  std::erase(it->second, waiter);
  if (it->second.empty()) waiters_.erase(it);
}

void QueueWakeups::Wake(std::vector<std::shared_ptr<Waiter>>& waiters) {
  for (std::shared_ptr<Waiter>& w : waiters) {
    asio::post(w->timer.get_executor(), [w] { w->timer.cancel(); });
  }
}

void QueueWakeups::Notify(const std::string& endpoint_id) {
  std::vector<std::shared_ptr<Waiter>> woken;
  {
    MutexLock lock(mu_);
    ++counts_[endpoint_id];
    auto it = waiters_.find(endpoint_id);
    if (it == waiters_.end()) return;
    woken = std::move(it->second);
    waiters_.erase(it);
  }
  Wake(woken);
}

void QueueWakeups::NotifyAll() {
  std::vector<std::shared_ptr<Waiter>> woken;
  {
    MutexLock lock(mu_);
    ++all_;
    for (auto& [endpoint, waiters] : waiters_) {
      for (auto& w : waiters) woken.push_back(std::move(w));
    }
    waiters_.clear();
  }
  Wake(woken);
}

}  // namespace tf::api
