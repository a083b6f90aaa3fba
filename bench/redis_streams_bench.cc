// A peer for the queue benchmark: a Redis stream used as a work queue with a consumer group.
//
//   redis_streams_bench --port PORT [--host 127.0.0.1] [--label "appendfsync always"]
//                       [--threads 8] [--seconds 8] [--latency-seconds 5] [--warmup 1]
//                       [--body-bytes 256] [--json FILE]
//
// A cycle: XADD a batch (pipelined, one round trip), XREADGROUP COUNT batch (one round trip),
// then XACK and XDEL of what was read (pipelined, one round trip). How durable that is depends
// on the server's appendonly/appendfsync settings, which the caller chooses and names in
// --label (bench/run_queue_bench.sh starts servers with appendfsync always and everysec).
#include <hiredis/hiredis.h>

#include "bench_util.h"

namespace tf::bench {
namespace {

constexpr int kBatch = 10;
constexpr const char* kStream = "bench-stream";
constexpr const char* kGroup = "bench-group";

using Reply = std::unique_ptr<redisReply, void (*)(void*)>;

class StreamQueue {
 public:
  static std::unique_ptr<StreamQueue> Connect(const std::string& host, int port,
                                              std::string consumer) {
    redisContext* c = redisConnect(host.c_str(), port);
    if (c == nullptr || c->err != 0) {
      std::fprintf(stderr, "cannot connect to redis at %s:%d: %s\n", host.c_str(), port,
                   c ? c->errstr : "out of memory");
      if (c) redisFree(c);
      return nullptr;
    }
    return std::unique_ptr<StreamQueue>(new StreamQueue(c, std::move(consumer)));
  }
  ~StreamQueue() { redisFree(ctx_); }

  // One command and its reply; null on a connection error.
  Reply Command(const std::vector<std::string>& args) {
    Append(args);
    return Next();
  }

  // XADD `n`, XREADGROUP up to `n`, XACK+XDEL them; returns how many were acknowledged, or -1.
  int Cycle(const std::string& body, int n) {
    for (int i = 0; i < n; ++i) Append({"XADD", kStream, "*", "body", body});
    for (int i = 0; i < n; ++i) {
      Reply r = Next();
      if (!r || r->type != REDIS_REPLY_STRING) return -1;
    }
    Reply read = Command({"XREADGROUP", "GROUP", kGroup, consumer_, "COUNT", std::to_string(n),
                          "STREAMS", kStream, ">"});
    if (!read) return -1;
    if (read->type == REDIS_REPLY_NIL) return 0;
    if (read->type != REDIS_REPLY_ARRAY || read->elements != 1) return -1;
    const redisReply* entries = read->element[0]->element[1];
    if (entries->elements == 0) return 0;
    std::vector<std::string> ack = {"XACK", kStream, kGroup};
    std::vector<std::string> del = {"XDEL", kStream};
    for (size_t i = 0; i < entries->elements; ++i) {
      std::string id(entries->element[i]->element[0]->str, entries->element[i]->element[0]->len);
      ack.push_back(id);
      del.push_back(id);
    }
    Append(ack);
    Append(del);
    Reply acked = Next();
    Reply deleted = Next();
    if (!acked || !deleted || acked->type != REDIS_REPLY_INTEGER) return -1;
    return static_cast<int>(acked->integer);
  }

 private:
  StreamQueue(redisContext* c, std::string consumer) : ctx_(c), consumer_(std::move(consumer)) {}

  void Append(const std::vector<std::string>& args) {
    std::vector<const char*> argv;
    std::vector<size_t> lens;
    for (const auto& a : args) {
      argv.push_back(a.data());
      lens.push_back(a.size());
    }
    redisAppendCommandArgv(ctx_, static_cast<int>(argv.size()), argv.data(), lens.data());
  }
  Reply Next() {
    void* raw = nullptr;
    if (redisGetReply(ctx_, &raw) != REDIS_OK) return Reply(nullptr, freeReplyObject);
    Reply r(static_cast<redisReply*>(raw), freeReplyObject);
    if (r->type == REDIS_REPLY_ERROR) {
      std::fprintf(stderr, "redis: %s\n", r->str);
      return Reply(nullptr, freeReplyObject);
    }
    return r;
  }

  redisContext* ctx_;
  std::string consumer_;
};

int Main(int argc, char** argv) {
  Flags f(argc, argv);
  if (!f.Has("port")) {
    std::fprintf(stderr,
                 "usage: redis_streams_bench --port PORT [--host 127.0.0.1] [--label TEXT] "
                 "[--threads 8] [--seconds 8] [--latency-seconds 5] [--warmup 1] "
                 "[--body-bytes 256] [--json FILE]\n");
    return 2;
  }
  std::string host = f.Get("host", "127.0.0.1");
  int port = static_cast<int>(f.Number("port", 6379));
  std::string label = f.Get("label", "");
  int threads = static_cast<int>(f.Number("threads", 8));
  Timing throughput{f.Number("warmup", 1), f.Number("seconds", 8)};
  Timing latency{f.Number("warmup", 1) / 2, f.Number("latency-seconds", 5)};
  std::string body = Body(static_cast<size_t>(f.Number("body-bytes", 256)));
  Report report(f.Get("json", ""));

  auto admin = StreamQueue::Connect(host, port, "latency");
  if (!admin) return 1;
  (void)admin->Command({"DEL", kStream});
  if (!admin->Command({"XGROUP", "CREATE", kStream, kGroup, "$", "MKSTREAM"})) return 1;
  Reply fsync = admin->Command({"CONFIG", "GET", "appendfsync"});
  Reply aof = admin->Command({"CONFIG", "GET", "appendonly"});
  std::string note;
  if (fsync && aof && fsync->elements == 2 && aof->elements == 2) {
    note = std::string("server: appendonly ") + aof->element[1]->str + ", appendfsync " +
           fsync->element[1]->str;
  }

  std::vector<std::unique_ptr<StreamQueue>> conns;
  for (int i = 0; i < threads; ++i) {
    conns.push_back(StreamQueue::Connect(host, port, "worker-" + std::to_string(i)));
    if (!conns.back()) return 1;
  }
  if (throughput.seconds > 0) {
    Row t = MeasureThroughput(threads, throughput, [&](int i) -> Cycle {
      return [&, i] { return conns[i]->Cycle(body, kBatch); };
    });
    t.system = "redis streams";
    t.path = label;
    t.batch = kBatch;
    t.note = note;
    report.Add(t);
  }
  if (latency.seconds > 0) {
    Row l = MeasureLatency(latency, [&] { return admin->Cycle(body, 1) == 1; });
    l.system = "redis streams";
    l.path = label;
    report.Add(l);
  }
  (void)admin->Command({"DEL", kStream});
  return 0;
}

}  // namespace
}  // namespace tf::bench

int main(int argc, char** argv) { return tf::bench::Main(argc, argv); }
