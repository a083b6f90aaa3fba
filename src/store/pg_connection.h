// A thin RAII layer over one libpq connection: parameterised statements (PQexecParams; text
// parameters and results, byte strings sent as binary BYTEA), typed access to result columns, and
// PostgreSQL errors turned into Status:
//
//   connection refused or lost, SQLSTATE class 08, 57P01..57P03 (shutdown, crash, starting up),
//   class 53 (too many connections, out of memory or disk), 25006 (read-only: a failover in
//   progress)                                              -> kUnavailable (retry the call)
//   23505 unique_violation                                 -> kAlreadyExists
//   40001 serialization_failure, 40P01 deadlock_detected   -> kAborted (retry the transaction)
//   anything else                                          -> kInternal, with the server's message
//
// Not thread-safe: one PgConnection belongs to one thread at a time.
#pragma once

#include <libpq-fe.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace tf::store {

// The Status for a failed statement with SQLSTATE `sqlstate` ("" if unknown) and server message
// `message`, by the table above (a lost connection is decided by the caller).
Status StatusFromSqlState(std::string_view sqlstate, std::string_view message);

// Whether `sqlstate` means the transaction lost a conflict and was rolled back, so that running it
// again from the start is safe (40001, 40P01).
bool IsConflictSqlState(std::string_view sqlstate);

// Statement parameters, numbered $1, $2, ... in the order they are added. Values are copied.
class PgParams {
 public:
  PgParams& Add(std::string_view text);
  PgParams& Add(int64_t value);
  PgParams& AddBool(bool value);
  // Sent in binary format with type BYTEA: any bytes, including NUL and invalid UTF-8.
  PgParams& AddBytes(std::string_view bytes);
  PgParams& AddNull();
  // A BIGINT[] in text form ("{1,2,3}"); cast it in SQL: $n::bigint[].
  PgParams& AddInt64Array(const std::vector<int64_t>& values);
  // A TEXT[] in text form, each element quoted; cast it in SQL: $n::text[].
  PgParams& AddTextArray(const std::vector<std::string>& values);

  int size() const { return static_cast<int>(values_.size()); }

 private:
  friend class PgConnection;
  struct Param {
    std::string value;
    bool null = false;
    bool binary = false;
  };
  std::vector<Param> values_;
};

// The rows of a successful statement. Columns are read by position, as the SQL names them.
class PgResult {
 public:
  explicit PgResult(PGresult* result) : result_(result, &PQclear) {}

  int rows() const { return PQntuples(result_.get()); }
  // Rows changed by INSERT, UPDATE or DELETE.
  int64_t affected() const;

  bool IsNull(int row, int column) const { return PQgetisnull(result_.get(), row, column) != 0; }
  std::string_view Text(int row, int column) const;
  // A BIGINT, INT or similar column; 0 for NULL.
  int64_t Int(int row, int column) const;
  bool Bool(int row, int column) const { return Text(row, column) == "t"; }
  // A BYTEA column (text form "\x<hex>") decoded to its bytes.
  std::string Bytes(int row, int column) const;

 private:
  std::unique_ptr<PGresult, void (*)(PGresult*)> result_;
};

class PgConnection {
 public:
  // Connects with `conninfo` (a postgresql:// URL or "key=value ..." string). Sensible defaults
  // (a connect timeout, TCP keepalives, an application name) apply unless `conninfo` sets them.
  // kUnavailable if the server cannot be reached or refuses the connection.
  static Result<std::unique_ptr<PgConnection>> Connect(const std::string& conninfo);
  ~PgConnection();
  PgConnection(const PgConnection&) = delete;
  PgConnection& operator=(const PgConnection&) = delete;

  // Runs one statement. kInternal etc. by the table above; kUnavailable if the connection is lost.
  Result<PgResult> Exec(const std::string& sql, const PgParams& params = {});
  // Exec for statements whose rows, if any, are not needed.
  Status Run(const std::string& sql, const PgParams& params = {});
  // Runs several statements separated by semicolons, without parameters (schema changes).
  Status RunScript(const std::string& sql);

  // Whether the connection is known to be unusable. Reads whatever the server sent while the
  // connection sat idle, without waiting, so that one the server closed (a restart, an
  // administrator's kill) is noticed before a statement is sent on it.
  bool Broken();
  // Reconnects with the same parameters. kUnavailable if the server cannot be reached.
  Status Reset();

  // The SQLSTATE of the last failed statement; "" after a success or a failure without one.
  const std::string& last_sqlstate() const { return last_sqlstate_; }
  // Whether a transaction is open (or failed and not yet rolled back).
  bool InTransaction() const;
  // The server process serving this connection (changes on Reset).
  int backend_pid() const { return backend_pid_; }
  // For the listener, which waits on the socket and reads notifications itself.
  PGconn* raw() { return conn_; }

 private:
  explicit PgConnection(PGconn* conn) : conn_(conn), backend_pid_(PQbackendPID(conn)) {}
  Status Failure(const PGresult* result);

  PGconn* conn_;
  int backend_pid_;
  std::string last_sqlstate_;
};

}  // namespace tf::store
