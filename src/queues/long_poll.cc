#include "queues/long_poll.h"

#include <boost/asio/redirect_error.hpp>
#include <boost/asio/this_coro.hpp>
#include <chrono>

#include "queues/async_calls.h"

namespace tf::queues {
namespace {
// Messages also become visible without a send (a visibility timeout or a delay running out):
// waiters look again at least this often.
constexpr std::chrono::milliseconds kRecheck{1000};
}  // namespace

awaitable<Result<std::vector<Message>>> ReceiveWithWait(QueueService& service,
                                                        QueueWakeups& wakeups,
                                                        asio::thread_pool& pool,
                                                        std::string project_id, std::string queue,
                                                        LongPollParams params) {
  if (params.wait_seconds && (*params.wait_seconds < 0 || *params.wait_seconds > kMaxWaitSeconds)) {
    co_return InvalidArgument("wait_seconds must be between 0 and 20, got " +
                              std::to_string(*params.wait_seconds));
  }
  auto resolved = co_await ResolveForReceiveAsync(service, pool, project_id, queue, params.receive);
  if (!resolved.ok()) co_return resolved.status();
  TimeMs wait_ms =
      params.wait_seconds ? *params.wait_seconds * kSecondMs : resolved->config.receive_wait_ms;
  if (wait_ms == 0) {
    co_return co_await ReceiveOnceAsync(service, pool, project_id, queue, params.receive);
  }

  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
  auto ex = co_await asio::this_coro::executor;
  auto waiter = wakeups.Register(resolved->id, ex);
  Result<std::vector<Message>> result = std::vector<Message>{};
  for (;;) {
    // Registered before looking, so that a send landing in between is not missed.
    waiter->notified = false;
    result = co_await ReceiveOnceAsync(service, pool, project_id, queue, params.receive);
    if (!result.ok() || !result->empty()) break;
    auto now = std::chrono::steady_clock::now();
    if (now >= deadline || wakeups.closed()) break;
    if (waiter->notified) continue;
    waiter->timer.expires_at(std::min(deadline, now + kRecheck));
    boost::system::error_code ec;
    co_await waiter->timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
  wakeups.Unregister(resolved->id, waiter);
  co_return result;
}

}  // namespace tf::queues
