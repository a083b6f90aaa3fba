#include "store/pg_leadership.h"

#include "base/log.h"
#include "store/pg_store_impl.h"

namespace tf::store {

int32_t LeaderLockKey(std::string_view schema) {
  uint32_t hash = 2166136261u;
  for (unsigned char c : schema) {
    hash ^= c;
    hash *= 16777619u;
  }
  return static_cast<int32_t>(hash);
}

bool PgLeadership::TryAcquire() {
  bool leads = held_.load() ? StillHeld() : TakeIfFree();
  held_.store(leads);
  return leads;
}

bool PgLeadership::StillHeld() {
  if (conn_->Broken()) {
    Report("lost the lead: the connection holding the leader lock was closed");
  } else if (Status alive = conn_->Run("SELECT 1"); !alive.ok()) {
    Report("lost the lead: the connection holding the leader lock failed: " + alive.ToString());
  } else {
    return true;
  }
  conn_.reset();
  return false;
}

bool PgLeadership::TakeIfFree() {
  if (conn_ != nullptr && conn_->Broken()) conn_.reset();
  if (conn_ == nullptr) {
    auto conn = PgConnection::Connect(conninfo_);
    if (!conn.ok()) {
      Report("cannot try the leader lock: " + conn.status().ToString());
      return false;
    }
    auto schema = (*conn)->Exec("SELECT current_schema()");
    if (!schema.ok()) {
      Report("cannot try the leader lock: " + schema.status().ToString());
      return false;
    }
    if (schema->rows() != 1 || schema->IsNull(0, 0)) {
      Report("cannot try the leader lock: no schema of the search_path exists");
      return false;
    }
    // The lock lasts as long as the database session. A leader machine that vanishes without
    // closing it would keep the lead until PostgreSQL's keepalives (two hours by default) ended
    // the session; these settings make the server give up on it after about 25 s of silence.
    if (Status keepalive =
            (*conn)->RunScript("SET tcp_keepalives_idle = 10; SET tcp_keepalives_interval = 5; "
                               "SET tcp_keepalives_count = 3");
        !keepalive.ok()) {
      Report(
          "cannot shorten the leader session's keepalives (a vanished leader is noticed "
          "later): " +
          keepalive.ToString());
    }
    key_ = LeaderLockKey(schema->Text(0, 0));
    conn_ = std::move(conn).value();
  }
  auto taken = conn_->Exec("SELECT pg_try_advisory_lock($1::int, $2::int)",
                           PgParams().Add(int64_t{kLeaderLockClass}).Add(int64_t{key_}));
  if (!taken.ok()) {
    Report("cannot try the leader lock: " + taken.status().ToString());
    conn_.reset();
    return false;
  }
  if (!taken->Bool(0, 0)) return false;
  last_problem_.clear();
  return true;
}

void PgLeadership::Report(const std::string& problem) {
  if (problem == last_problem_) return;
  last_problem_ = problem;
  spdlog::warn("postgresql leadership: {}", problem);
}

std::unique_ptr<Leadership> PostgresStore::NewLeadership() {
  return std::make_unique<PgLeadership>(pool_->conninfo());
}

}  // namespace tf::store
