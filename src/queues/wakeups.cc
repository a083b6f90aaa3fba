#include "queues/wakeups.h"

#include <vector>

namespace tf::queues {

std::shared_ptr<QueueWakeups::Waiter> QueueWakeups::Register(int64_t queue_id,
                                                             asio::any_io_executor ex) {
  auto w = std::make_shared<Waiter>(ex);
  MutexLock lock(mu_);
  waiters_[queue_id].insert(w);
  return w;
}

void QueueWakeups::Unregister(int64_t queue_id, const std::shared_ptr<Waiter>& waiter) {
  MutexLock lock(mu_);
  auto it = waiters_.find(queue_id);
  if (it == waiters_.end()) return;
  it->second.erase(waiter);
  if (it->second.empty()) waiters_.erase(it);
}

void QueueWakeups::Notify(int64_t queue_id) {
  std::vector<std::shared_ptr<Waiter>> to_wake;
  {
    MutexLock lock(mu_);
    auto it = waiters_.find(queue_id);
    if (it == waiters_.end()) return;
    to_wake.assign(it->second.begin(), it->second.end());
  }
  for (auto& w : to_wake) Wake(w);
}

void QueueWakeups::Close() {
  closed_ = true;
  std::vector<std::shared_ptr<Waiter>> to_wake;
  {
    MutexLock lock(mu_);
    for (const auto& [id, set] : waiters_) to_wake.insert(to_wake.end(), set.begin(), set.end());
  }
  for (auto& w : to_wake) Wake(w);
}

void QueueWakeups::Wake(const std::shared_ptr<Waiter>& w) {
  asio::post(w->timer.get_executor(), [w] {
    w->notified = true;
    w->timer.cancel();
  });
}

size_t QueueWakeups::waiting() const {
  MutexLock lock(mu_);
  size_t n = 0;
  for (const auto& [id, set] : waiters_) n += set.size();
  return n;
}

}  // namespace tf::queues
