// The single SQLite writer. Every write runs on one thread, inside a transaction that it shares
// with whatever other writes arrived meanwhile (group commit): N concurrent callers pay for one
// fsync, not N. Each write runs in its own savepoint, so one failing write rolls back alone.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <thread>

#include "base/mutex.h"
#include "base/status.h"
#include "store/sqlite_db.h"

namespace tf::store {

class SqliteWriter {
 public:
  // Takes ownership of a read-write connection and starts the writer thread.
  explicit SqliteWriter(std::unique_ptr<SqliteDb> db);
  // Finishes the writes already submitted, then stops.
  ~SqliteWriter();

  // Runs `work` on the writer thread inside a transaction and returns once that transaction
  // is durable (or failed). `after_commit`, if set, runs on the writer thread after a
  // successful commit of a successful `work`. Thread-safe; blocks the caller.
  Status Write(std::function<Status(SqliteDb&)> work, std::function<void()> after_commit = {});

  // Write's non-blocking form: queues `work` and returns at once. `done` runs exactly once on
  // the writer thread (after `after_commit`) with what Write would have returned, or on the
  // calling thread, before Submit returns, when the writer is closing. `done` should only hand
  // the result on (post it to another thread): the next transaction waits for it.
  void Submit(std::function<Status(SqliteDb&)> work, std::function<void()> after_commit,
              std::function<void(Status)> done);

  // Writes committed and transactions used so far (batches < writes under concurrency).
  int64_t writes() const;
  int64_t transactions() const;

 private:
  struct Item {
    std::function<Status(SqliteDb&)> work;
    std::function<void()> after_commit;
    std::function<void(Status)> done;
  };
  void Loop();
  void RunBatch(std::deque<Item>& batch);

  std::unique_ptr<SqliteDb> db_;  // used only on the writer thread
  mutable Mutex mu_;
  std::condition_variable cv_;
  std::deque<Item> pending_ GUARDED_BY(mu_);
  bool stopping_ GUARDED_BY(mu_) = false;
  bool idle_ GUARDED_BY(mu_) = false;  // the writer thread waits on cv_
  int64_t writes_ GUARDED_BY(mu_) = 0;
  int64_t transactions_ GUARDED_BY(mu_) = 0;
  std::thread thread_;
};

}  // namespace tf::store
