// Receive with long polling: try at once; if nothing is there, wait (a timer, no thread) until
// a send wakes this queue or the wait time runs out, and try again.
#pragma once

#include <boost/asio/thread_pool.hpp>

#include "base/async.h"
#include "queues/queue_service.h"
#include "queues/wakeups.h"

namespace tf::queues {

struct LongPollParams {
  ReceiveParams receive;
  std::optional<int64_t> wait_seconds;  // 0..20; default: the queue's receive_wait
};

// Calls the store as queues/async_calls.h does (on `pool` where it would block). Returns as soon as
// at least one message arrives, or with an empty list once the wait time has passed. Must run on a
// strand (see QueueWakeups).
awaitable<Result<std::vector<Message>>> ReceiveWithWait(QueueService& service,
                                                        QueueWakeups& wakeups,
                                                        asio::thread_pool& pool,
                                                        std::string project_id, std::string queue,
                                                        LongPollParams params);

}  // namespace tf::queues
