#include "store/sqlite_store.h"

#include "base/mutex.h"
#include "store/sqlite_store_impl.h"

namespace tf::store {

Status SqliteReaders::With(const std::function<Status(SqliteDb&)>& fn) {
  std::unique_ptr<SqliteDb> db;
  {
    MutexLock lock(mu_);
    if (!idle_.empty()) {
      db = std::move(idle_.back());
      idle_.pop_back();
    }
  }
  if (!db) {
    TF_ASSIGN_OR_RETURN(db, SqliteDb::Open(path_, /*read_only=*/true));
  }
  Status s = db->Exec("BEGIN");
  if (s.ok()) {
    s = fn(*db);
    Status end = db->Exec("COMMIT");
    if (s.ok()) s = end;
  }
  MutexLock lock(mu_);
  if (static_cast<int>(idle_.size()) < max_idle_) idle_.push_back(std::move(db));
  return s;
}

Result<std::unique_ptr<Store>> OpenSqliteStore(const std::string& path) {
  TF_ASSIGN_OR_RETURN(auto db, SqliteDb::Open(path, /*read_only=*/false));
  TF_ASSIGN_OR_RETURN(int version, MigrateSqlite(*db));
  auto writer = std::make_unique<SqliteWriter>(std::move(db));
  return std::unique_ptr<Store>(new SqliteStore(path, std::move(writer), version));
}

}  // namespace tf::store
