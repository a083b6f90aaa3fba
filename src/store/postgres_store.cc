#include "store/postgres_store.h"

#include <chrono>

#include "store/pg_migrations.h"
#include "store/pg_store_impl.h"

namespace tf::store {
namespace {

// Connections per server. Each is a PostgreSQL backend process, so keep it modest: several
// servers share the database's max_connections.
constexpr int kPoolSize = 8;
// How long SetQueueListener waits for its LISTEN to take effect before going on without it.
constexpr std::chrono::milliseconds kListenWait{5000};

}  // namespace

Result<std::unique_ptr<Store>> OpenPostgresStore(const std::string& conninfo) {
  TF_ASSIGN_OR_RETURN(std::unique_ptr<PgPool> pool, PgPool::Open(conninfo, kPoolSize));
  TF_ASSIGN_OR_RETURN(int version, MigratePostgres(*pool));
  return std::unique_ptr<Store>(new PostgresStore(std::move(pool), version));
}

PostgresStore::~PostgresStore() { queue_listener_.reset(); }

void PostgresStore::SetQueueListener(std::function<void(int64_t)> listener) {
  queue_listener_.reset();
  listener_ = std::move(listener);
  if (!listener_) return;
  PgPool* pool = pool_.get();
  queue_listener_ = std::make_unique<PgQueueListener>(
      pool_->conninfo(), [this](int64_t queue_id) { NotifyLocal(queue_id); },
      [pool](int pid) { return pool->IsOwnBackend(pid); });
  // Best effort: from here on other servers' changes are heard, unless the database is down now,
  // in which case the listener reports every queue once it gets through.
  (void)queue_listener_->WaitListening(kListenWait);
}

Status NotifyQueues(PgConnection& conn, const std::vector<int64_t>& queue_ids) {
  if (queue_ids.empty()) return OkStatus();
  return conn.Run("SELECT pg_notify($1, q::text) FROM unnest($2::bigint[]) AS q",
                  PgParams().Add(kQueueChannel).AddInt64Array(queue_ids));
}

Status LockFifoQueue(PgConnection& conn, int64_t queue_id) {
  // The two-key form has a key space of its own: no clash with other advisory locks. Queue ids
  // past 2^31 share keys, which only serialises a little more.
  constexpr int kFifoLockClass = 0x7466;  // "tf"
  return conn.Run("SELECT pg_advisory_xact_lock($1::int, ($2::bigint % 2147483647)::int)",
                  PgParams().Add(int64_t{kFifoLockClass}).Add(queue_id));
}

}  // namespace tf::store
