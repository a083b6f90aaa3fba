// Leadership over PostgreSQL: a session-level advisory lock, taken with pg_try_advisory_lock on
// a connection of the server's own (not one of the pool's), held until that connection closes.
//
// The lock is the two-key form (kLeaderLockClass, LeaderLockKey(schema)): one leader per
// tensorfleet schema, so that deployments in different schemas of one database each have their
// own, and no clash with the other advisory locks of the store (the FIFO queues' class, the
// migrations' one-key lock).
//
// TryAcquire, while not leading: connects if needed and tries the lock (never waits for it).
// While leading: checks the connection with a round trip; if it has dropped, the lead is lost
// (the database released the lock with the session): TryAcquire says so once, logs why, and
// tries again on the next call with a new connection.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "store/leadership.h"
#include "store/pg_connection.h"

namespace tf::store {

// The first key of the leader lock: "tl".
inline constexpr int32_t kLeaderLockClass = 0x746C;

// The second key: a hash (32-bit FNV-1a) of the schema the store's tables live in.
int32_t LeaderLockKey(std::string_view schema);

class PgLeadership final : public Leadership {
 public:
  explicit PgLeadership(std::string conninfo) : conninfo_(std::move(conninfo)) {}

  bool TryAcquire() override;
  bool Held() const override { return held_.load(); }

 private:
  // Whether the lead held so far is still held (the connection answers).
  bool StillHeld();
  // Connects if needed and tries the lock once.
  bool TakeIfFree();
  // Logs `problem` when it differs from the last one logged (a database that stays down is
  // reported once, not on every try).
  void Report(const std::string& problem);

  const std::string conninfo_;
  std::unique_ptr<PgConnection> conn_;  // used by TryAcquire only
  int32_t key_ = 0;                     // LeaderLockKey of conn_'s schema
  std::string last_problem_;            // used by TryAcquire only
  std::atomic<bool> held_{false};
};

}  // namespace tf::store
