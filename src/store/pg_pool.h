// A fixed-size pool of PostgreSQL connections, and the one place that decides when a statement or
// transaction is run again.
//
// Connections are opened on demand, up to `size`. A connection found broken when it is checked out
// (the server restarted, or an administrator ended the session) is reconnected first, so the pool
// recovers on its own when PostgreSQL comes back. Thread-safe.
#pragma once

#include <condition_variable>
#include <functional>
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "base/mutex.h"
#include "base/status.h"
#include "store/pg_connection.h"

namespace tf::store {

enum class PgTxMode {
  // No transaction; `fn` only reads. Run again after a lost connection or a conflict.
  kRead,
  // No transaction; `fn` runs statements each of which commits on its own. Run again only after a
  // conflict (the failing statement was rolled back).
  kAutocommit,
  // BEGIN ... COMMIT around `fn` (READ COMMITTED). Run again after a conflict, or when the
  // connection turns out to be lost at BEGIN, before anything was done.
  kTransaction,
};

class PgPool {
 public:
  // Opens the first connection now: kUnavailable if the server cannot be reached.
  static Result<std::unique_ptr<PgPool>> Open(std::string conninfo, int size);

  // Runs `fn` with a connection as `mode` says. `fn` may run more than once: each run must start
  // from scratch (clear its outputs first). When `fn` fails inside a transaction, the transaction
  // is rolled back and fn's status returned. A lost connection at COMMIT returns kUnavailable:
  // the transaction may or may not have committed. kUnavailable also when no connection frees up
  // within a while.
  Status Run(PgTxMode mode, const std::function<Status(PgConnection&)>& fn);

  // Whether `pid` is the server process of one of this pool's connections (to tell this store's
  // own notifications from other servers').
  bool IsOwnBackend(int pid) const;

  const std::string& conninfo() const { return conninfo_; }

 private:
  PgPool(std::string conninfo, int size) : conninfo_(std::move(conninfo)), size_(size) {}

  // A connection that is not known to be broken, and gives it back.
  Result<std::unique_ptr<PgConnection>> Checkout();
  void Return(std::unique_ptr<PgConnection> conn);
  // Forgets a connection that will not come back.
  void Drop(std::unique_ptr<PgConnection> conn);
  struct Outcome {
    Status status;
    bool conflict = false;         // rolled back by the server after a conflict
    bool failed_at_begin = false;  // nothing was done
  };
  Outcome RunOnce(PgTxMode mode, PgConnection& conn,
                  const std::function<Status(PgConnection&)>& fn);

  const std::string conninfo_;
  const int size_;
  mutable Mutex mu_;
  std::condition_variable freed_;
  std::vector<std::unique_ptr<PgConnection>> idle_ GUARDED_BY(mu_);
  int open_ GUARDED_BY(mu_) = 0;  // idle or lent out
  std::unordered_set<int> backend_pids_ GUARDED_BY(mu_);
};

}  // namespace tf::store
