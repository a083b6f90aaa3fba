#include "store/pg_pool.h"

#include <chrono>

namespace tf::store {
namespace {

// How long a caller waits for a free connection before it is told the database is busy.
constexpr auto kCheckoutWait = std::chrono::seconds(30);
// Conflicts (deadlocks, serialization failures) are retried this many times before giving up.
constexpr int kMaxConflictRetries = 5;

}  // namespace

Result<std::unique_ptr<PgPool>> PgPool::Open(std::string conninfo, int size) {
  std::unique_ptr<PgPool> pool(new PgPool(std::move(conninfo), size < 1 ? 1 : size));
  TF_ASSIGN_OR_RETURN(std::unique_ptr<PgConnection> first, pool->Checkout());
  pool->Return(std::move(first));
  return pool;
}

Status PgPool::Run(PgTxMode mode, const std::function<Status(PgConnection&)>& fn) {
  int conflicts = 0;
  bool reconnected = false;
  for (;;) {
    TF_ASSIGN_OR_RETURN(std::unique_ptr<PgConnection> conn, Checkout());
    Outcome outcome = RunOnce(mode, *conn, fn);
    const bool lost = !outcome.status.ok() && conn->Broken();
    Return(std::move(conn));
    if (outcome.status.ok()) return outcome.status;
    if (outcome.conflict && ++conflicts <= kMaxConflictRetries) continue;
    // A connection the server closed without our noticing (the check at checkout races with the
    // server's goodbye): safe to run again where nothing can have been done.
    if (lost && !reconnected && (mode == PgTxMode::kRead || outcome.failed_at_begin)) {
      reconnected = true;
      continue;
    }
    return outcome.status;
  }
}

PgPool::Outcome PgPool::RunOnce(PgTxMode mode, PgConnection& conn,
                                const std::function<Status(PgConnection&)>& fn) {
  Outcome out;
  const bool transaction = mode == PgTxMode::kTransaction;
  if (transaction) {
    out.status = conn.Run("BEGIN");
    if (!out.status.ok()) {
      out.failed_at_begin = true;
      return out;
    }
  }
  out.status = fn(conn);
  if (!out.status.ok()) {
    out.conflict = IsConflictSqlState(conn.last_sqlstate());
    if (transaction && conn.InTransaction()) (void)conn.Run("ROLLBACK");
    return out;
  }
  if (transaction) {
    out.status = conn.Run("COMMIT");
    out.conflict = !out.status.ok() && IsConflictSqlState(conn.last_sqlstate());
    if (out.status.code() == StatusCode::kUnavailable) {
      out.status = out.status.WithContext("the change may or may not have been committed");
    }
  }
  return out;
}

bool PgPool::IsOwnBackend(int pid) const {
  MutexLock lock(mu_);
  return backend_pids_.contains(pid);
}

Result<std::unique_ptr<PgConnection>> PgPool::Checkout() {
  std::unique_ptr<PgConnection> conn;
  {
    MutexLock lock(mu_);
    if (!lock.WaitFor(freed_, kCheckoutWait,
                      [&]() REQUIRES(mu_) { return !idle_.empty() || open_ < size_; })) {
      return Unavailable("postgresql: all " + std::to_string(size_) +
                         " database connections stayed busy");
    }
    if (!idle_.empty()) {
      conn = std::move(idle_.back());
      idle_.pop_back();
    } else {
      ++open_;
    }
  }
  if (conn == nullptr) {
    Result<std::unique_ptr<PgConnection>> connected = PgConnection::Connect(conninfo_);
    MutexLock lock(mu_);
    if (!connected.ok()) {
      --open_;
      freed_.notify_one();
      return connected.status();
    }
    backend_pids_.insert((*connected)->backend_pid());
    return connected;
  }
  if (conn->Broken()) {
    {
      MutexLock lock(mu_);
      backend_pids_.erase(conn->backend_pid());
    }
    Status reset = conn->Reset();
    if (!reset.ok()) {
      Drop(std::move(conn));
      return reset;
    }
    MutexLock lock(mu_);
    backend_pids_.insert(conn->backend_pid());
  }
  return conn;
}

void PgPool::Return(std::unique_ptr<PgConnection> conn) {
  if (conn->InTransaction()) (void)conn->Run("ROLLBACK");
  if (conn->InTransaction()) {
    Drop(std::move(conn));
    return;
  }
  // A broken connection goes back too: it is reconnected when next checked out.
  MutexLock lock(mu_);
  idle_.push_back(std::move(conn));
  freed_.notify_one();
}

void PgPool::Drop(std::unique_ptr<PgConnection> conn) {
  {
    MutexLock lock(mu_);
    backend_pids_.erase(conn->backend_pid());
    --open_;
    freed_.notify_one();
  }
  conn.reset();
}

}  // namespace tf::store
