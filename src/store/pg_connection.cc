#include "store/pg_connection.h"

#include <poll.h>

#include <charconv>

namespace tf::store {
namespace {

constexpr Oid kByteaOid = 17;  // pg_type.oid of bytea

// Notices ("relation already exists, skipping") are not errors: keep them off stderr.
void IgnoreNotice(void*, const char*) {}

std::string TrimmedMessage(const char* text) {
  std::string message = text == nullptr ? "" : text;
  while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.pop_back();
  return message.empty() ? "unknown error" : message;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return 0;
}

}  // namespace

Status StatusFromSqlState(std::string_view sqlstate, std::string_view message) {
  std::string text = "postgresql: " + std::string(message);
  if (!sqlstate.empty()) text += " (SQLSTATE " + std::string(sqlstate) + ")";
  if (sqlstate.starts_with("08") || sqlstate.starts_with("53") || sqlstate == "57P01" ||
      sqlstate == "57P02" || sqlstate == "57P03" || sqlstate == "25006") {
    return Unavailable(std::move(text));
  }
  if (sqlstate == "23505") return AlreadyExists(std::move(text));
  if (IsConflictSqlState(sqlstate)) return Aborted(std::move(text));
  return Internal(std::move(text));
}

bool IsConflictSqlState(std::string_view sqlstate) {
  return sqlstate == "40001" || sqlstate == "40P01";
}

PgParams& PgParams::Add(std::string_view text) {
  values_.push_back({std::string(text), false, false});
  return *this;
}

PgParams& PgParams::Add(int64_t value) { return Add(std::to_string(value)); }

PgParams& PgParams::AddBool(bool value) { return Add(value ? "t" : "f"); }

PgParams& PgParams::AddBytes(std::string_view bytes) {
  values_.push_back({std::string(bytes), false, true});
  return *this;
}

PgParams& PgParams::AddNull() {
  values_.push_back({"", true, false});
  return *this;
}

PgParams& PgParams::AddInt64Array(const std::vector<int64_t>& values) {
  std::string text = "{";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) text += ',';
    text += std::to_string(values[i]);
  }
  text += '}';
  return Add(text);
}

PgParams& PgParams::AddTextArray(const std::vector<std::string>& values) {
  std::string text = "{";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) text += ',';
    text += '"';
    for (char c : values[i]) {
      if (c == '"' || c == '\\') text += '\\';
      text += c;
    }
    text += '"';
  }
  text += '}';
  return Add(text);
}

int64_t PgResult::affected() const {
  const char* text = PQcmdTuples(result_.get());
  int64_t n = 0;
  std::from_chars(text, text + std::char_traits<char>::length(text), n);
  return n;
}

std::string_view PgResult::Text(int row, int column) const {
  return std::string_view(PQgetvalue(result_.get(), row, column),
                          PQgetlength(result_.get(), row, column));
}

int64_t PgResult::Int(int row, int column) const {
  std::string_view text = Text(row, column);
  int64_t value = 0;
  std::from_chars(text.data(), text.data() + text.size(), value);
  return value;
}

std::string PgResult::Bytes(int row, int column) const {
  std::string_view text = Text(row, column);
  if (!text.starts_with("\\x")) return std::string(text);  // not hex output: already bytes
  text.remove_prefix(2);
  std::string out(text.size() / 2, '\0');
  for (size_t i = 0; i < out.size(); ++i) {
    out[i] = static_cast<char>(HexValue(text[2 * i]) << 4 | HexValue(text[2 * i + 1]));
  }
  return out;
}

Result<std::unique_ptr<PgConnection>> PgConnection::Connect(const std::string& conninfo) {
  // Later entries override earlier ones, and "dbname" expands to everything `conninfo` sets, so
  // the defaults come first.
  const char* keys[] = {"connect_timeout",
                        "keepalives_idle",
                        "keepalives_interval",
                        "keepalives_count",
                        "fallback_application_name",
                        "dbname",
                        nullptr};
  const char* values[] = {"10", "30", "10", "3", "tensorfleet", conninfo.c_str(), nullptr};
  PGconn* conn = PQconnectdbParams(keys, values, /*expand_dbname=*/1);
  if (conn == nullptr) return Unavailable("postgresql: out of memory while connecting");
  if (PQstatus(conn) != CONNECTION_OK) {
    std::string message = TrimmedMessage(PQerrorMessage(conn));
    PQfinish(conn);
    return Unavailable("postgresql: cannot connect: " + message);
  }
  PQsetNoticeProcessor(conn, &IgnoreNotice, nullptr);
  return std::unique_ptr<PgConnection>(new PgConnection(conn));
}

PgConnection::~PgConnection() { PQfinish(conn_); }

Result<PgResult> PgConnection::Exec(const std::string& sql, const PgParams& params) {
  const int n = params.size();
  std::vector<Oid> types(n, 0);  // 0: the server infers the type from the statement
  std::vector<const char*> values(n);
  std::vector<int> lengths(n);
  std::vector<int> formats(n);
  for (int i = 0; i < n; ++i) {
    const PgParams::Param& p = params.values_[i];
    values[i] = p.null ? nullptr : p.value.data();
    lengths[i] = static_cast<int>(p.value.size());
    formats[i] = p.binary ? 1 : 0;
    if (p.binary) types[i] = kByteaOid;
  }
  PGresult* result = PQexecParams(conn_, sql.c_str(), n, types.data(), values.data(),
                                  lengths.data(), formats.data(), /*resultFormat=*/0);
  ExecStatusType status = result == nullptr ? PGRES_FATAL_ERROR : PQresultStatus(result);
  if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) {
    last_sqlstate_.clear();
    return PgResult(result);
  }
  Status failure = Failure(result);
  PQclear(result);
  return failure;
}

Status PgConnection::Run(const std::string& sql, const PgParams& params) {
  return Exec(sql, params).status();
}

Status PgConnection::RunScript(const std::string& sql) {
  PGresult* result = PQexec(conn_, sql.c_str());
  ExecStatusType status = result == nullptr ? PGRES_FATAL_ERROR : PQresultStatus(result);
  Status out = OkStatus();
  if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) {
    last_sqlstate_.clear();
  } else {
    out = Failure(result);
  }
  PQclear(result);
  return out;
}

Status PgConnection::Failure(const PGresult* result) {
  const char* sqlstate = result == nullptr ? nullptr : PQresultErrorField(result, PG_DIAG_SQLSTATE);
  last_sqlstate_ = sqlstate == nullptr ? "" : sqlstate;
  const char* text = result == nullptr ? nullptr : PQresultErrorMessage(result);
  if (text == nullptr || *text == '\0') text = PQerrorMessage(conn_);
  std::string message = TrimmedMessage(text);
  if (PQstatus(conn_) != CONNECTION_OK) {
    return Unavailable("postgresql: connection lost: " + message);
  }
  return StatusFromSqlState(last_sqlstate_, message);
}

bool PgConnection::Broken() {
  // A server that closes an idle connection first sends an error, then end-of-file; reading both
  // can take two reads. Each read is bounded, and a healthy idle connection has nothing to read.
  for (int i = 0; i < 4 && PQstatus(conn_) == CONNECTION_OK; ++i) {
    pollfd fd{PQsocket(conn_), POLLIN, 0};
    if (poll(&fd, 1, 0) <= 0) break;
    if (PQconsumeInput(conn_) == 0) break;
  }
  return PQstatus(conn_) != CONNECTION_OK;
}

Status PgConnection::Reset() {
  last_sqlstate_.clear();
  PQreset(conn_);
  if (PQstatus(conn_) != CONNECTION_OK) {
    return Unavailable("postgresql: cannot reconnect: " + TrimmedMessage(PQerrorMessage(conn_)));
  }
  backend_pid_ = PQbackendPID(conn_);
  return OkStatus();
}

bool PgConnection::InTransaction() const {
  PGTransactionStatusType status = PQtransactionStatus(conn_);
  return status == PQTRANS_INTRANS || status == PQTRANS_INERROR || status == PQTRANS_ACTIVE;
}

}  // namespace tf::store
