// A peer for the queue benchmark: the plainest durable queue PostgreSQL can hold, one table
// claimed with FOR UPDATE SKIP LOCKED, driven through libpq with prepared statements.
//
//   skip_locked_bench --url postgresql://... [--threads 8] [--seconds 8] [--latency-seconds 5]
//                     [--warmup 1] [--body-bytes 256] [--json FILE]
//
// A cycle: insert a batch (one INSERT), claim a batch (one UPDATE ... WHERE id IN (SELECT ...
// FOR UPDATE SKIP LOCKED) RETURNING), delete what was claimed (one DELETE). Each statement is
// its own transaction, committed as the server is configured (synchronous_commit on by
// default), as tensorfleet's three calls are. The table has its primary key and nothing else.
#include <libpq-fe.h>

#include "bench_util.h"

namespace tf::bench {
namespace {

constexpr int kBatch = 10;
constexpr const char* kTable = "skip_locked_bench_queue";

// One connection with the three statements prepared.
class SkipLockedQueue {
 public:
  static std::unique_ptr<SkipLockedQueue> Connect(const std::string& url) {
    PGconn* conn = PQconnectdb(url.c_str());
    if (PQstatus(conn) != CONNECTION_OK) {
      std::fprintf(stderr, "cannot connect: %s", PQerrorMessage(conn));
      PQfinish(conn);
      return nullptr;
    }
    auto q = std::unique_ptr<SkipLockedQueue>(new SkipLockedQueue(conn));
    std::string t = kTable;
    bool ok = q->Prepare("insert", "INSERT INTO " + t + " (body) SELECT unnest($1::text[])") &&
              q->Prepare("claim", "UPDATE " + t +
                                      " SET visible_at = now() + interval '30 seconds' "
                                      "WHERE id IN (SELECT id FROM " +
                                      t +
                                      " WHERE visible_at <= now() ORDER BY id LIMIT $1 "
                                      "FOR UPDATE SKIP LOCKED) RETURNING id, body") &&
              q->Prepare("delete", "DELETE FROM " + t + " WHERE id = ANY($1::bigint[])");
    return ok ? std::move(q) : nullptr;
  }
  ~SkipLockedQueue() { PQfinish(conn_); }

  // Runs statements without parameters; false (and a message) on failure.
  bool Exec(const std::string& sql) {
    PGresult* r = PQexec(conn_, sql.c_str());
    bool ok = PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK;
    if (!ok) std::fprintf(stderr, "%s: %s", sql.c_str(), PQerrorMessage(conn_));
    PQclear(r);
    return ok;
  }

  // Insert `n`, claim up to `n`, delete the claimed; returns how many were deleted, or -1.
  int Cycle(const std::string& body_array, int n) {
    if (!Run("insert", {body_array}, nullptr)) return -1;
    std::string limit = std::to_string(n);
    PGresult* claimed = nullptr;
    if (!Run("claim", {limit}, &claimed)) return -1;
    std::string ids = "{";
    for (int i = 0; i < PQntuples(claimed); ++i) {
      if (i > 0) ids += ',';
      ids += PQgetvalue(claimed, i, 0);
    }
    ids += '}';
    int rows = PQntuples(claimed);
    PQclear(claimed);
    if (rows == 0) return 0;
    PGresult* deleted = nullptr;
    if (!Run("delete", {ids}, &deleted)) return -1;
    int done = std::atoi(PQcmdTuples(deleted));
    PQclear(deleted);
    return done;
  }

 private:
  explicit SkipLockedQueue(PGconn* conn) : conn_(conn) {}

  bool Prepare(const char* name, const std::string& sql) {
    PGresult* r = PQprepare(conn_, name, sql.c_str(), 0, nullptr);
    bool ok = PQresultStatus(r) == PGRES_COMMAND_OK;
    if (!ok) std::fprintf(stderr, "prepare %s: %s", name, PQerrorMessage(conn_));
    PQclear(r);
    return ok;
  }

  // Runs a prepared statement with text parameters; hands the result over if `out` is set.
  bool Run(const char* name, const std::vector<std::string>& params, PGresult** out) {
    std::vector<const char*> values;
    for (const auto& p : params) values.push_back(p.c_str());
    PGresult* r = PQexecPrepared(conn_, name, static_cast<int>(values.size()), values.data(),
                                 nullptr, nullptr, 0);
    bool ok = PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK;
    if (ok && out != nullptr) {
      *out = r;
      return true;
    }
    PQclear(r);
    return ok;
  }

  PGconn* conn_;
};

// A text[] literal holding `body` `n` times.
std::string BodyArray(const std::string& body, int n) {
  std::string quoted = "\"";
  for (char c : body) {
    if (c == '"' || c == '\\') quoted += '\\';
    quoted += c;
  }
  quoted += '"';
  std::string out = "{";
  for (int i = 0; i < n; ++i) out += (i > 0 ? "," : "") + quoted;
  return out + "}";
}

int Main(int argc, char** argv) {
  Flags f(argc, argv);
  std::string url = f.Get("url", "");
  if (url.empty()) {
    std::fprintf(stderr,
                 "usage: skip_locked_bench --url postgresql://... [--threads 8] [--seconds 8] "
                 "[--latency-seconds 5] [--warmup 1] [--body-bytes 256] [--json FILE]\n");
    return 2;
  }
  int threads = static_cast<int>(f.Number("threads", 8));
  Timing throughput{f.Number("warmup", 1), f.Number("seconds", 8)};
  Timing latency{f.Number("warmup", 1) / 2, f.Number("latency-seconds", 5)};
  std::string body = Body(static_cast<size_t>(f.Number("body-bytes", 256)));
  Report report(f.Get("json", ""));

  {
    PGconn* setup = PQconnectdb(url.c_str());
    std::string t = kTable;
    std::string sql = "SET client_min_messages = warning; DROP TABLE IF EXISTS " + t +
                      "; CREATE TABLE " + t +
                      " (id bigserial PRIMARY KEY, body text NOT NULL, "
                      "visible_at timestamptz NOT NULL DEFAULT now())";
    PGresult* r = PQexec(setup, sql.c_str());
    bool ok = PQresultStatus(r) == PGRES_COMMAND_OK;
    if (!ok) std::fprintf(stderr, "setup: %s", PQerrorMessage(setup));
    PQclear(r);
    PQfinish(setup);
    if (!ok) return 1;
  }

  std::vector<std::unique_ptr<SkipLockedQueue>> conns;
  for (int i = 0; i < threads; ++i) {
    conns.push_back(SkipLockedQueue::Connect(url));
    if (!conns.back()) return 1;
  }
  const std::string batch = BodyArray(body, kBatch);
  const std::string single = BodyArray(body, 1);
  if (throughput.seconds > 0) {
    Row t = MeasureThroughput(threads, throughput, [&](int i) -> Cycle {
      return [&, i] { return conns[i]->Cycle(batch, kBatch); };
    });
    t.system = "postgresql skip locked";
    t.path = "libpq";
    t.batch = kBatch;
    report.Add(t);
  }
  if (latency.seconds > 0) {
    Row l = MeasureLatency(latency, [&] { return conns[0]->Cycle(single, 1) == 1; });
    l.system = "postgresql skip locked";
    l.path = "libpq";
    report.Add(l);
  }
  (void)conns[0]->Exec("DROP TABLE " + std::string(kTable));
  return 0;
}

}  // namespace
}  // namespace tf::bench

int main(int argc, char** argv) { return tf::bench::Main(argc, argv); }
