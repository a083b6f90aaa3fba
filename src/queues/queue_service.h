// The queue service: SQS semantics for one project's queues, on top of the store.
//
// Validates every request before anything reaches the store, so that a refused request changes
// nothing. Thread-safe; every method blocks on the store (the API runs them on a blocking pool).
// Long polling is built on ReceiveOnce by queues/long_poll.h.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/mutex.h"
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
  int64_t max_messages = 1;                           // 1..10 (others are refused as given)
  std::optional<int64_t> visibility_timeout_seconds;  // default: the queue's
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
  store::Store& store() { return store_; }

  // --- Send, receive and delete in steps, for callers that must not block (queues/async_calls.h).
  // Each call above is: the queue's record, a pure step that checks the request and says what to
  // ask of the store, the store call, and a pure step that maps its answer.

  // Queue records are cached briefly: every send and receive needs one. Lookup reads the store
  // when the record is not cached; CachedQueue never does (nullopt when not cached).
  Result<store::Queue> Lookup(const std::string& project_id, const std::string& name);
  std::optional<store::Queue> CachedQueue(const std::string& project_id, const std::string& name);

  struct PreparedSend {
    std::vector<SendOutcome> outcomes;     // one per entry; failed entries are final
    std::vector<store::NewMessage> batch;  // what to store
    std::vector<size_t> entry_of;          // batch[i] came from entries[entry_of[i]]
    TimeMs now = 0;
  };
  Result<PreparedSend> PrepareSend(const store::Queue& q, const std::vector<SendEntry>& entries);
  static std::vector<SendOutcome> FinishSend(PreparedSend prepared,
                                             const std::vector<store::SentMessage>& sent);

  // `dead_letter`: the record of q's dead-letter queue, null when it has none (or it was
  // deleted after it was configured: messages then stay where they are).
  Result<store::ReceiveOptions> ReceiveOptionsFor(const store::Queue& q,
                                                  const ReceiveParams& params,
                                                  const store::Queue* dead_letter);
  static std::vector<Message> ToMessages(int64_t queue_id,
                                         std::vector<store::ReceivedMessage> received);

  struct PreparedDelete {
    std::vector<Status> results;           // one per handle; malformed ones are final
    std::vector<store::Receipt> receipts;  // what to delete
    std::vector<size_t> handle_of;         // receipts[i] came from handles[handle_of[i]]
  };
  static Result<PreparedDelete> PrepareDelete(int64_t queue_id,
                                              const std::vector<std::string>& receipt_handles);
  static std::vector<Status> FinishDelete(PreparedDelete prepared,
                                          const std::vector<Status>& deleted);

 private:
  void Forget(const std::string& project_id, const std::string& name);
  Status CheckDeadLetterTarget(const std::string& project_id, const std::string& name,
                               const store::QueueConfig& config);
  // Looks up q's dead-letter queue as ReceiveOptionsFor wants it.
  Result<store::ReceiveOptions> ReceiveOptionsFor(const store::Queue& q,
                                                  const ReceiveParams& params);

  store::Store& store_;
  const Clock& clock_;

  struct CacheEntry {
    store::Queue queue;
    TimeMs fetched_at;
  };
  Mutex mu_;
  std::map<std::pair<std::string, std::string>, CacheEntry> cache_ GUARDED_BY(mu_);
};

}  // namespace tf::queues
