// Upgrade tests open a database that this version made, take it back to an older schema with
// SQL run outside the store, and open it again. They need a database of their own, so that the
// migrations really run: a new SQLite file, or a new schema on the PostgreSQL test server.
#pragma once

#include <memory>
#include <string>

#include "base/crypto.h"
#include "base/status.h"
#include "store/pg_connection.h"
#include "store/sqlite_db.h"
#include "store_test_env.h"

namespace tf::testing {

// Runs `sql` on the database a store at `url` uses, outside the store.
inline Status RunSql(const std::string& backend, const std::string& url, const std::string& sql) {
  if (backend == "postgresql") {
    TF_ASSIGN_OR_RETURN(std::unique_ptr<store::PgConnection> conn,
                        store::PgConnection::Connect(url));
    return conn->RunScript(sql);
  }
  TF_ASSIGN_OR_RETURN(std::unique_ptr<store::SqliteDb> db,
                      store::SqliteDb::Open(url, /*read_only=*/false));
  return db->Exec(sql);
}

// A database of its own for one test on `backend`: `upgrade.db` in `dir`, or a PostgreSQL schema
// named `prefix` and random hex digits, dropped with everything in it when this object goes
// (declare it before the stores that use it, so that they are closed first).
class UpgradeDatabase {
 public:
  UpgradeDatabase(const std::string& backend, const TempDir& dir, const std::string& prefix)
      : backend_(backend), server_url_(StoreUrl(backend, dir)) {
    if (backend != "postgresql") {
      url_ = (dir.path() / "upgrade.db").string();
      return;
    }
    const std::string schema = prefix + RandomHex(4);
    created_ = RunSql(backend_, server_url_, "CREATE SCHEMA " + schema);
    if (!created_.ok()) return;
    schema_ = schema;
    url_ = server_url_ + (server_url_.find('?') == std::string::npos ? "?" : "&") +
           "options=-csearch_path%3D" + schema_;
  }
  ~UpgradeDatabase() {
    if (schema_.empty()) return;
    (void)RunSql(backend_, server_url_, "DROP SCHEMA " + schema_ + " CASCADE");
  }
  UpgradeDatabase(const UpgradeDatabase&) = delete;
  UpgradeDatabase& operator=(const UpgradeDatabase&) = delete;

  // Not OK if the PostgreSQL schema could not be made.
  const Status& created() const { return created_; }
  const std::string& url() const { return url_; }

 private:
  std::string backend_, server_url_, url_, schema_;
  Status created_;
};

}  // namespace tf::testing
