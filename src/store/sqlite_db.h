// A thin RAII layer over one SQLite connection: prepared statements cached by their SQL text,
// typed binds and columns, and SQLite result codes turned into Status.
// Not thread-safe: one SqliteDb belongs to one thread at a time.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "base/status.h"

namespace tf::store {

class SqliteDb;

// A prepared statement borrowed from the connection's cache; reset when it goes out of scope.
class Stmt {
 public:
  Stmt(SqliteDb* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  Stmt(Stmt&& other) noexcept : db_(other.db_), stmt_(other.stmt_) { other.stmt_ = nullptr; }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  ~Stmt();

  // Parameters are numbered from 1, as in SQL's "?" order.
  Stmt& Bind(int index, int64_t value);
  Stmt& Bind(int index, std::string_view text);  // bound as TEXT
  Stmt& BindBlob(int index, std::string_view bytes);
  Stmt& BindNull(int index);

  // Runs to the next row. Returns true with a row, false when done; error statuses otherwise.
  Result<bool> Step();
  // Runs a statement that returns no rows.
  Status Run();

  int64_t Int(int column) const { return sqlite3_column_int64(stmt_, column); }
  bool IsNull(int column) const { return sqlite3_column_type(stmt_, column) == SQLITE_NULL; }
  std::string Text(int column) const;  // TEXT or BLOB as bytes

 private:
  SqliteDb* db_;
  sqlite3_stmt* stmt_;
};

class SqliteDb {
 public:
  // Opens (creating if allowed) the database file and applies the connection pragmas.
  static Result<std::unique_ptr<SqliteDb>> Open(const std::string& path, bool read_only);
  ~SqliteDb();

  // Runs one or more statements without parameters.
  Status Exec(const std::string& sql);
  // A cached prepared statement; kInternal if the SQL does not compile.
  Result<Stmt> Prepare(std::string_view sql);
  // Runs one statement without parameters through the statement cache (for the statements a
  // hot path repeats, such as BEGIN and COMMIT, which Exec would compile every time).
  Status Run(std::string_view sql);
  int64_t Changes() const { return sqlite3_changes64(db_); }
  int64_t LastInsertId() const { return sqlite3_last_insert_rowid(db_); }

  // Maps an SQLite result code to a Status whose message names `what`.
  Status Error(int rc, std::string_view what) const;

 private:
  explicit SqliteDb(sqlite3* db) : db_(db) {}
  // Looks statements up by any string type without building a std::string.
  struct SqlHash {
    using is_transparent = void;
    size_t operator()(std::string_view sql) const { return std::hash<std::string_view>{}(sql); }
  };
  sqlite3* db_;
  std::unordered_map<std::string, sqlite3_stmt*, SqlHash, std::equal_to<>> cache_;
};

}  // namespace tf::store
