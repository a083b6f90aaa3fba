#include "store/sqlite_db.h"

namespace tf::store {

Stmt::~Stmt() {
  if (stmt_ != nullptr) {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
}

Stmt& Stmt::Bind(int index, int64_t value) {
  sqlite3_bind_int64(stmt_, index, value);
  return *this;
}

Stmt& Stmt::Bind(int index, std::string_view text) {
  sqlite3_bind_text64(stmt_, index, text.data(), text.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
  return *this;
}

Stmt& Stmt::BindBlob(int index, std::string_view bytes) {
  sqlite3_bind_blob64(stmt_, index, bytes.data(), bytes.size(), SQLITE_TRANSIENT);
  return *this;
}

Stmt& Stmt::BindNull(int index) {
  sqlite3_bind_null(stmt_, index);
  return *this;
}

Result<bool> Stmt::Step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return db_->Error(rc, sqlite3_sql(stmt_));
}

Status Stmt::Run() {
  for (;;) {
    TF_ASSIGN_OR_RETURN(bool row, Step());
    if (!row) return OkStatus();
  }
}

std::string Stmt::Text(int column) const {
  const void* data = sqlite3_column_blob(stmt_, column);
  int size = sqlite3_column_bytes(stmt_, column);
  if (data == nullptr) return {};
  return std::string(static_cast<const char*>(data), static_cast<size_t>(size));
}

Result<std::unique_ptr<SqliteDb>> SqliteDb::Open(const std::string& path, bool read_only) {
  sqlite3* raw = nullptr;
  int flags = SQLITE_OPEN_NOMUTEX |
              (read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  int rc = sqlite3_open_v2(path.c_str(), &raw, flags, nullptr);
  std::unique_ptr<SqliteDb> db(new SqliteDb(raw));
  if (rc != SQLITE_OK) {
    return Unavailable("cannot open SQLite database " + path + ": " +
                       (raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc)));
  }
  sqlite3_extended_result_codes(raw, 1);
  // busy_timeout: readers may briefly wait on a WAL checkpoint. synchronous=FULL: a commit is on
  // disk when it returns (the writer batches commits so that many writes share one fsync).
  Status s = db->Exec(
      "PRAGMA busy_timeout=10000;"
      "PRAGMA synchronous=FULL;"
      "PRAGMA temp_store=MEMORY;"
      "PRAGMA cache_size=-65536;");
  if (!s.ok()) return s;
  if (!read_only) {
    TF_RETURN_IF_ERROR(db->Exec("PRAGMA journal_mode=WAL;"));
  }
  return db;
}

SqliteDb::~SqliteDb() {
  for (auto& [sql, stmt] : cache_) sqlite3_finalize(stmt);
  sqlite3_close_v2(db_);
}

Status SqliteDb::Exec(const std::string& sql) {
  char* err = nullptr;
  int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err);
  if (rc == SQLITE_OK) return OkStatus();
  std::string message = err ? err : sqlite3_errstr(rc);
  sqlite3_free(err);
  return Error(rc, sql).WithContext(message);
}

Result<Stmt> SqliteDb::Prepare(std::string_view sql) {
  auto it = cache_.find(sql);
  if (it != cache_.end()) return Stmt(this, it->second);
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()),
                              SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
  if (rc != SQLITE_OK) {
    return Internal("cannot prepare '" + std::string(sql) + "': " + sqlite3_errmsg(db_));
  }
  cache_.emplace(std::string(sql), stmt);
  return Stmt(this, stmt);
}

Status SqliteDb::Run(std::string_view sql) {
  TF_ASSIGN_OR_RETURN(Stmt stmt, Prepare(sql));
  return stmt.Run();
}

Status SqliteDb::Error(int rc, std::string_view what) const {
  std::string message = std::string(sqlite3_errmsg(db_)) + " (in: " + std::string(what) + ")";
  switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return Unavailable("database busy: " + message);
    case SQLITE_FULL:
      return ResourceExhausted("disk full: " + message);
    case SQLITE_IOERR:
    case SQLITE_CANTOPEN:
      return Unavailable("database I/O error: " + message);
    case SQLITE_CONSTRAINT:
      if (rc == SQLITE_CONSTRAINT_UNIQUE || rc == SQLITE_CONSTRAINT_PRIMARYKEY) {
        return AlreadyExists(message);
      }
      return Internal("constraint failed: " + message);
    default:
      return Internal(message);
  }
}

}  // namespace tf::store
