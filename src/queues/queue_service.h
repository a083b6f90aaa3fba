// The queue service: SQS semantics for one project's queues, on top of the store.
//
// Validates every request before anything reaches the store, so that a refused request changes
// nothing. Thread-safe; every method blocks on the store (the API runs them on a blocking pool).
// Long polling is built on ReceiveOnce by queues/long_poll.h.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "queues/message.h"
#include "queues/settings.h"
#include "store/store.h"

namespace tf::queues {

struct QueueInfo {
  store::Queue queue;
  store::QueueCounts counts;
};

struct ReceiveParams {
  int max_messages = 1;                              // 1..10
  std::optional<int64_t> visibility_timeout_seconds; // default: the queue's
};

struct VisibilityRequest {
  std::string receipt_handle;
  int64_t visibility_timeout_seconds = 0;  // 0..43200, counted from now
};

class QueueService {
 public:
  QueueService(store::Store& store, const Clock& clock) : store_(store), clock_(clock) {}

  // Creates a queue. Creating one that exists with the same settings returns it (as SQS does);
  // with different settings it is kAlreadyExists.
  Result<store::Queue> CreateQueue(const std::string& project_id, const std::string& name,
                                   const QueueSettings& settings);
  Result<QueueInfo> DescribeQueue(const std::string& project_id, const std::string& name);
  Result<std::vector<store::Queue>> ListQueues(const std::string& project_id,
                                               const std::string& prefix);
  Result<store::Queue> UpdateQueue(const std::string& project_id, const std::string& name,
                                   const QueueSettings& settings);
  Status DeleteQueue(const std::string& project_id, const std::string& name);

  // Sends 1-10 messages. A request-level problem (no such queue, too many entries, batch too
  // large) fails the call; a problem with one entry fails only that entry's SendOutcome.
  Result<std::vector<SendOutcome>> Send(const std::string& project_id, const std::string& queue,
                                        const std::vector<SendEntry>& entries);

  // One attempt to receive, without waiting.
  Result<std::vector<Message>> ReceiveOnce(const std::string& project_id, const std::string& queue,
                                           const ReceiveParams& params);
  // Checks params and returns the queue's id and its default wait, for the long poll.
  Result<store::Queue> ResolveForReceive(const std::string& project_id, const std::string& queue,
                                         const ReceiveParams& params);

  // One status per handle (see QueueStore::DeleteMessages); a malformed handle is
  // kInvalidArgument for that entry.
  Result<std::vector<Status>> Delete(const std::string& project_id, const std::string& queue,
                                     const std::vector<std::string>& receipt_handles);
  Result<std::vector<Status>> ChangeVisibility(const std::string& project_id,
                                               const std::string& queue,
                                               const std::vector<VisibilityRequest>& changes);
  Result<int64_t> Purge(const std::string& project_id, const std::string& queue);

  // Moves messages from dead-letter queue `queue` back to their source queues, or to `to` when
  // given. limit 0: all of them.
  Result<int64_t> Redrive(const std::string& project_id, const std::string& queue,
                          const std::string& to, int64_t limit);

  // Removes messages past their retention. Run periodically by the server.
  Result<int64_t> DeleteExpired();

  const Clock& clock() const { return clock_; }

 private:
  // Queue records are cached briefly: every send and receive needs one.
  Result<store::Queue> Lookup(const std::string& project_id, const std::string& name);
  void Forget(const std::string& project_id, const std::string& name);
  Status CheckDeadLetterTarget(const std::string& project_id, const std::string& name,
                               const store::QueueConfig& config);
  Result<store::ReceiveOptions> ReceiveOptionsFor(const store::Queue& q,
                                                  const ReceiveParams& params);

  store::Store& store_;
  const Clock& clock_;

  struct CachedQueue {
    store::Queue queue;
    TimeMs fetched_at;
  };
  std::mutex mu_;
  std::map<std::pair<std::string, std::string>, CachedQueue> cache_;  // guarded by mu_
};

}  // namespace tf::queues
