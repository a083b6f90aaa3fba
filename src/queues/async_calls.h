// Send, receive and delete for coroutines on the network threads, without blocking them.
//
// With the queue's record cached and a store whose writes complete on a thread of its own
// (QueueStore::async_writes: SQLite's writer), a call checks the request on the calling thread,
// hands the write to the store and resumes when it is durable: no pool thread in between.
// Otherwise (a record to read, PostgreSQL) the blocking QueueService call runs on `pool`.
// Either way the result is what the blocking call returns.
#pragma once

#include <boost/asio/thread_pool.hpp>

#include "base/async.h"
#include "queues/queue_service.h"

namespace tf::queues {

awaitable<Result<std::vector<SendOutcome>>> SendAsync(QueueService& service,
                                                      asio::thread_pool& pool,
                                                      const std::string& project_id,
                                                      const std::string& queue,
                                                      const std::vector<SendEntry>& entries);

awaitable<Result<std::vector<Message>>> ReceiveOnceAsync(QueueService& service,
                                                         asio::thread_pool& pool,
                                                         const std::string& project_id,
                                                         const std::string& queue,
                                                         const ReceiveParams& params);

// QueueService::ResolveForReceive, from the cache when it can.
awaitable<Result<store::Queue>> ResolveForReceiveAsync(QueueService& service,
                                                       asio::thread_pool& pool,
                                                       const std::string& project_id,
                                                       const std::string& queue,
                                                       const ReceiveParams& params);

awaitable<Result<std::vector<Status>>> DeleteAsync(QueueService& service, asio::thread_pool& pool,
                                                   const std::string& project_id,
                                                   const std::string& queue,
                                                   const std::vector<std::string>& receipt_handles);

}  // namespace tf::queues
