#include "queues/async_calls.h"

namespace tf::queues {
namespace {

// The queue's record, when the call can go to the store without blocking: the record is
// cached and the store completes writes on its own thread.
std::optional<store::Queue> ReadyQueue(QueueService& service, const std::string& project_id,
                                       const std::string& queue) {
  if (!service.store().queues().async_writes()) return std::nullopt;
  return service.CachedQueue(project_id, queue);
}

// For a receive, also the dead-letter queue's record when `q` names one. False when it is not
// cached (or was deleted: the blocking path then decides what that means).
bool ReadyDeadLetter(QueueService& service, const store::Queue& q,
                     std::optional<store::Queue>* dead_letter) {
  if (q.config.dead_letter_queue.empty()) return true;
  *dead_letter = service.CachedQueue(q.project_id, q.config.dead_letter_queue);
  return dead_letter->has_value();
}

}  // namespace

awaitable<Result<std::vector<SendOutcome>>> SendAsync(QueueService& service,
                                                      asio::thread_pool& pool,
                                                      const std::string& project_id,
                                                      const std::string& queue,
                                                      const std::vector<SendEntry>& entries) {
  std::optional<store::Queue> q = ReadyQueue(service, project_id, queue);
  if (!q) {
    auto blocking = [&] { return service.Send(project_id, queue, entries); };
    auto result = co_await RunBlocking(pool, blocking);
    co_return result;
  }
  auto prepared = service.PrepareSend(*q, entries);
  if (!prepared.ok()) co_return prepared.status();
  if (prepared->batch.empty()) co_return std::move(prepared->outcomes);
  auto start = [&](auto done) {
    service.store().queues().SendMessagesAsync(q->id, std::move(prepared->batch), prepared->now,
                                               kDeduplicationWindowMs, std::move(done));
  };
  auto sent = co_await AwaitCallback<Result<std::vector<store::SentMessage>>>(start);
  if (!sent.ok()) co_return sent.status();
  co_return QueueService::FinishSend(std::move(*prepared), *sent);
}

awaitable<Result<std::vector<Message>>> ReceiveOnceAsync(QueueService& service,
                                                         asio::thread_pool& pool,
                                                         const std::string& project_id,
                                                         const std::string& queue,
                                                         const ReceiveParams& params) {
  std::optional<store::Queue> q = ReadyQueue(service, project_id, queue);
  std::optional<store::Queue> dead_letter;
  if (!q || !ReadyDeadLetter(service, *q, &dead_letter)) {
    auto blocking = [&] { return service.ReceiveOnce(project_id, queue, params); };
    auto result = co_await RunBlocking(pool, blocking);
    co_return result;
  }
  auto options = service.ReceiveOptionsFor(*q, params, dead_letter ? &*dead_letter : nullptr);
  if (!options.ok()) co_return options.status();
  const TimeMs now = service.clock().Now();
  auto start = [&](auto done) {
    service.store().queues().ReceiveMessagesAsync(*options, now, std::move(done));
  };
  auto got = co_await AwaitCallback<Result<std::vector<store::ReceivedMessage>>>(start);
  if (!got.ok()) co_return got.status();
  co_return QueueService::ToMessages(options->queue_id, std::move(*got));
}

awaitable<Result<store::Queue>> ResolveForReceiveAsync(QueueService& service,
                                                       asio::thread_pool& pool,
                                                       const std::string& project_id,
                                                       const std::string& queue,
                                                       const ReceiveParams& params) {
  std::optional<store::Queue> q = service.CachedQueue(project_id, queue);
  std::optional<store::Queue> dead_letter;
  if (!q || !ReadyDeadLetter(service, *q, &dead_letter)) {
    auto blocking = [&] { return service.ResolveForReceive(project_id, queue, params); };
    auto result = co_await RunBlocking(pool, blocking);
    co_return result;
  }
  auto options = service.ReceiveOptionsFor(*q, params, dead_letter ? &*dead_letter : nullptr);
  if (!options.ok()) co_return options.status();
  co_return std::move(*q);
}

awaitable<Result<std::vector<Status>>> DeleteAsync(
    QueueService& service, asio::thread_pool& pool, const std::string& project_id,
    const std::string& queue, const std::vector<std::string>& receipt_handles) {
  std::optional<store::Queue> q = ReadyQueue(service, project_id, queue);
  if (!q) {
    auto blocking = [&] { return service.Delete(project_id, queue, receipt_handles); };
    auto result = co_await RunBlocking(pool, blocking);
    co_return result;
  }
  auto prepared = QueueService::PrepareDelete(q->id, receipt_handles);
  if (!prepared.ok()) co_return prepared.status();
  if (prepared->receipts.empty()) co_return std::move(prepared->results);
  auto start = [&](auto done) {
    service.store().queues().DeleteMessagesAsync(q->id, std::move(prepared->receipts),
                                                 std::move(done));
  };
  auto deleted = co_await AwaitCallback<Result<std::vector<Status>>>(start);
  if (!deleted.ok()) co_return deleted.status();
  co_return QueueService::FinishDelete(std::move(*prepared), *deleted);
}

}  // namespace tf::queues
