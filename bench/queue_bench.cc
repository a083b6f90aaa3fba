// Queue throughput and latency of tensorfleet, against one store: directly through the
// QueueStore API, and through an in-process server's HTTP APIs: the native one (/v1/queues) and
// the SQS API (its JSON protocol, signed with an access key), on the same queue.
//
//   queue_bench --store PATH_OR_URL [--threads 8] [--seconds 8] [--latency-seconds 5]
//               [--warmup 1] [--body-bytes 256] [--json FILE] [--only direct|http|sqs]
//               [--io-threads 2]
//               [--fsync-probe DIR [--probe-label TEXT]]
//
// --store: an SQLite file path (created if absent) or a postgresql:// URL. Every write is
// committed durably as the store always does it (SQLite: WAL, synchronous=FULL, group commit;
// PostgreSQL: synchronous_commit as the server is configured, on by default).
// --fsync-probe DIR: also measures write(4 KiB)+fdatasync in DIR, the cost every commit pays.
// See bench/bench_util.h for what the numbers mean.
#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "api/app.h"
#include "base/crypto.h"
#include "base/log.h"
#include "bench_util.h"
#include "http/http.h"
#include "queues/message.h"
#include "s3/request_signer.h"
#include "store/store.h"

namespace tf::bench {
namespace {

using Json = nlohmann::json;
constexpr int kBatch = 10;
constexpr TimeMs kVisibilityMs = 30 * kSecondMs;

struct Options {
  std::string store_url;
  int threads = 8;
  int io_threads = 2;  // the server's (AppOptions::io_threads)
  Timing throughput;
  Timing latency;
  std::string body;
  std::string only;
  std::string probe_label;
};

std::string SystemName(const std::string& backend) { return "tensorfleet " + backend; }

// Which back end OpenStore picks for `url` (store/open_store.cc).
std::string BackendOf(const std::string& url) {
  bool pg = url.rfind("postgresql://", 0) == 0 || url.rfind("postgres://", 0) == 0 ||
            url.find("dbname=") != std::string::npos;
  return pg ? "postgresql" : "sqlite";
}

// --- Directly against the store -------------------------------------------------------------

std::vector<store::NewMessage> NewMessages(const std::string& body, int n) {
  TimeMs now = SystemClock::Get().Now();
  std::vector<store::NewMessage> out(n);
  for (auto& m : out) {
    m.message_id = queues::NewMessageId();
    m.body = body;
    m.body_md5 = Md5Hex(body);
    m.visible_at = now;
    m.expires_at = now + 4 * kDayMs;
  }
  return out;
}

// Send `n`, receive up to `n`, delete what came; returns how many were deleted, -1 on failure.
int StoreCycle(store::QueueStore& qs, int64_t queue_id, const std::string& body, int n) {
  auto sent = qs.SendMessages(queue_id, NewMessages(body, n), SystemClock::Get().Now(), 0);
  if (!sent.ok()) return -1;
  store::ReceiveOptions o;
  o.queue_id = queue_id;
  o.max_messages = n;
  o.visibility_timeout_ms = kVisibilityMs;
  auto got = qs.ReceiveMessages(o, SystemClock::Get().Now());
  if (!got.ok()) return -1;
  if (got->empty()) return 0;
  std::vector<store::Receipt> receipts;
  for (const auto& m : *got) receipts.push_back({m.sequence, m.receipt});
  auto deleted = qs.DeleteMessages(queue_id, receipts);
  if (!deleted.ok()) return -1;
  int ok = 0;
  for (const Status& s : *deleted) ok += s.ok() ? 1 : 0;
  return ok;
}

Status RunDirect(const Options& o, Report& report) {
  TF_ASSIGN_OR_RETURN(auto store, store::OpenStore(o.store_url));
  store::QueueStore& qs = store->queues();
  store::Queue q;
  q.project_id = "prj_bench";
  q.name = "bench-direct-" + RandomHex(4);
  q.created_at = q.updated_at = SystemClock::Get().Now();
  TF_ASSIGN_OR_RETURN(q, qs.CreateQueue(q));
  const std::string name = SystemName(store->backend());

  if (o.throughput.seconds > 0) {
    Row t = MeasureThroughput(o.threads, o.throughput, [&](int) -> Cycle {
      return [&] { return StoreCycle(qs, q.id, o.body, kBatch); };
    });
    t.system = name;
    t.path = "direct";
    t.batch = kBatch;
    report.Add(t);
  }
  if (o.latency.seconds > 0) {
    Row l = MeasureLatency(o.latency, [&] { return StoreCycle(qs, q.id, o.body, 1) == 1; });
    l.system = name;
    l.path = "direct";
    report.Add(l);
  }

  (void)qs.PurgeQueue(q.id);
  return qs.DeleteQueue(q.id);
}

// --- Through the HTTP API -------------------------------------------------------------------

class ApiCaller {
 public:
  ApiCaller(const std::string& url, std::string token, std::string queue)
      : token_(std::move(token)), queue_(std::move(queue)) {
    client_ = std::move(http::Client::Create(url)).value();
  }

  // The JSON of a 2xx answer, or null.
  Json Post(const std::string& target, const std::string& body) {
    auto r =
        client_->Send("POST", target,
                      {{"Authorization", "Bearer " + token_}, {"Content-Type", "application/json"}},
                      body, std::chrono::seconds(30));
    if (!r.ok() || r->status / 100 != 2) return nullptr;
    return Json::parse(r->body, nullptr, false);
  }

  int Cycle(const std::string& body, int n) {
    Json messages = Json::array();
    for (int i = 0; i < n; ++i) messages.push_back({{"body", body}});
    Json sent = Post("/v1/queues/" + queue_ + "/messages", Json{{"messages", messages}}.dump());
    if (sent.is_null()) return -1;
    Json got = Post("/v1/queues/" + queue_ + "/receive", Json{{"max_messages", n}}.dump());
    if (got.is_null() || !got.contains("messages")) return -1;
    Json handles = Json::array();
    for (const Json& m : got["messages"]) handles.push_back(m["receipt_handle"]);
    if (handles.empty()) return 0;
    Json deleted =
        Post("/v1/queues/" + queue_ + "/delete", Json{{"receipt_handles", handles}}.dump());
    if (deleted.is_null()) return -1;
    int ok = 0;
    for (const Json& r : deleted["results"]) ok += r.value("ok", false) ? 1 : 0;
    return ok;
  }

 private:
  std::string token_, queue_;
  std::unique_ptr<http::Client> client_;
};

// The same cycle through the SQS API: SendMessageBatch, ReceiveMessage, DeleteMessageBatch in
// the JSON protocol, each request signed (SigV4, service sqs) as the AWS SDKs sign them.
class SqsCaller {
 public:
  SqsCaller(const std::string& url, const std::string& key_id, const std::string& secret,
            const std::string& queue)
      : queue_url_(url + "/" + queue) {
    client_ = std::move(http::Client::Create(url)).value();
    location_.endpoint = url;
    location_.host = url.substr(url.find("://") + 3);
    location_.access_key_id = key_id;
    location_.secret_access_key = secret;
  }

  void SetAccount(const std::string& account) {
    const size_t slash = queue_url_.rfind('/');
    queue_url_ = queue_url_.substr(0, slash) + "/" + account + queue_url_.substr(slash);
  }

  // The JSON of a 2xx answer, or null.
  Json Call(const std::string& action, const Json& params) {
    const std::string body = params.dump();
    http::Headers headers = {{"Content-Type", "application/x-amz-json-1.0"},
                             {"X-Amz-Target", "AmazonSQS." + action}};
    s3::SignRequest(location_, "POST", "/", "", Sha256Hex(body), SystemClock::Get().Now(), &headers,
                    "sqs");
    auto r = client_->Send("POST", "/", headers, body, std::chrono::seconds(30));
    if (!r.ok() || r->status / 100 != 2) return nullptr;
    return Json::parse(r->body, nullptr, false);
  }

  int Cycle(const std::string& body, int n) {
    Json entries = Json::array();
    for (int i = 0; i < n; ++i) {
      entries.push_back({{"Id", std::to_string(i)}, {"MessageBody", body}});
    }
    Json sent = Call("SendMessageBatch", {{"QueueUrl", queue_url_}, {"Entries", entries}});
    if (sent.is_null()) return -1;
    Json got = Call("ReceiveMessage", {{"QueueUrl", queue_url_}, {"MaxNumberOfMessages", n}});
    if (got.is_null()) return -1;
    if (!got.contains("Messages")) return 0;
    Json handles = Json::array();
    int i = 0;
    for (const Json& m : got["Messages"]) {
      handles.push_back({{"Id", std::to_string(i++)}, {"ReceiptHandle", m["ReceiptHandle"]}});
    }
    Json deleted = Call("DeleteMessageBatch", {{"QueueUrl", queue_url_}, {"Entries", handles}});
    if (deleted.is_null()) return -1;
    return static_cast<int>(deleted.value("Successful", Json::array()).size());
  }

 private:
  std::string queue_url_;
  s3::BucketLocation location_;
  std::unique_ptr<http::Client> client_;
};

Status RunHttp(const Options& o, Report& report) {
  auto dir = std::filesystem::temp_directory_path() / ("tensorfleet-bench-" + RandomHex(6));
  api::AppOptions ao;
  ao.data_dir = dir;
  ao.store_url = o.store_url;
  ao.http.port = 0;
  ao.handle_signals = false;
  ao.io_threads = o.io_threads;
  ao.shutdown_grace = std::chrono::milliseconds(2000);
  auto app = api::App::Start(ao);
  if (!app.ok()) return app.status();
  std::string token;
  std::getline(std::ifstream(api::AdminTokenPath(dir)), token);
  const std::string queue = "bench-http-" + RandomHex(4);
  const std::string name = SystemName(BackendOf(o.store_url));
  Status result = OkStatus();
  {
    ApiCaller admin((*app)->url(), token, queue);
    if (admin.Post("/v1/queues", Json{{"name", queue}}.dump()).is_null()) {
      result = Internal("could not create the queue over HTTP");
    } else {
      std::vector<std::unique_ptr<ApiCaller>> callers;
      for (int i = 0; i < o.threads; ++i) {
        callers.push_back(std::make_unique<ApiCaller>((*app)->url(), token, queue));
      }
      if (o.only != "sqs") {
        if (o.throughput.seconds > 0) {
          Row t = MeasureThroughput(o.threads, o.throughput, [&](int i) -> Cycle {
            return [&, i] { return callers[i]->Cycle(o.body, kBatch); };
          });
          t.system = name;
          t.path = "http";
          t.batch = kBatch;
          report.Add(t);
        }
        if (o.latency.seconds > 0) {
          Row l = MeasureLatency(o.latency, [&] { return admin.Cycle(o.body, 1) == 1; });
          l.system = name;
          l.path = "http";
          report.Add(l);
        }
      }
      if (o.only != "http") {
        // An access key of the admin token's project, whose account the queue's URL names.
        Json key = admin.Post("/v1/s3-keys", Json{{"name", "bench"}}.dump());
        Json purged = admin.Post("/v1/queues/" + queue + "/purge", "{}");
        if (key.is_null() || purged.is_null()) {
          result = Internal("could not make an access key for the SQS API");
        } else {
          std::vector<std::unique_ptr<SqsCaller>> sqs;
          for (int i = 0; i <= o.threads; ++i) {
            sqs.push_back(
                std::make_unique<SqsCaller>((*app)->url(), key["id"], key["secret"], queue));
          }
          Json url = sqs[0]->Call("GetQueueUrl", {{"QueueName", queue}});
          if (url.is_null()) {
            result = Internal("the SQS API does not find the queue");
          } else {
            std::string u = url["QueueUrl"];
            u = u.substr(0, u.rfind('/'));
            for (auto& c : sqs) c->SetAccount(u.substr(u.rfind('/') + 1));
            if (o.throughput.seconds > 0) {
              Row t = MeasureThroughput(o.threads, o.throughput, [&](int i) -> Cycle {
                return [&, i] { return sqs[i + 1]->Cycle(o.body, kBatch); };
              });
              t.system = name;
              t.path = "sqs api";
              t.batch = kBatch;
              report.Add(t);
            }
            if (o.latency.seconds > 0) {
              Row l = MeasureLatency(o.latency, [&] { return sqs[0]->Cycle(o.body, 1) == 1; });
              l.system = name;
              l.path = "sqs api";
              report.Add(l);
            }
          }
        }
      }
      (void)admin.Post("/v1/queues/" + queue + "/purge", "{}");
    }
  }
  (*app)->Stop();
  app->reset();
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return result;
}

// --- The disk -------------------------------------------------------------------------------

Status RunFsyncProbe(const std::string& dir, const Options& o, Report& report) {
  std::string path = dir + "/fsync-probe-" + RandomHex(4);
  int fd = ::open(path.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0600);
  if (fd < 0) return Unavailable("cannot create " + path);
  std::string block(4096, 'f');
  off_t offset = 0;
  Row r = MeasureLatency(o.latency, [&] {
    bool ok = ::pwrite(fd, block.data(), block.size(), offset) == 4096 && ::fdatasync(fd) == 0;
    offset = (offset + 4096) % (16 << 20);
    return ok;
  });
  ::close(fd);
  ::unlink(path.c_str());
  r.system = "disk: 4KiB+fdatasync";
  r.path = o.probe_label;
  report.Add(r);
  return OkStatus();
}

int Main(int argc, char** argv) {
  Flags f(argc, argv);
  InitLogging(f.Get("log-level", "warn"));
  Options o;
  o.store_url = f.Get("store", "");
  if (o.store_url.empty() && !f.Has("fsync-probe")) {
    std::fprintf(
        stderr,
        "usage: queue_bench --store PATH_OR_URL [--threads 8] [--seconds 8] "
        "[--latency-seconds 5] [--warmup 1] [--body-bytes 256] [--json FILE] "
        "[--only direct|http|sqs] [--io-threads 2] [--fsync-probe DIR [--probe-label TEXT]]\n");
    return 2;
  }
  o.threads = static_cast<int>(f.Number("threads", 8));
  o.io_threads = static_cast<int>(f.Number("io-threads", 2));
  o.throughput = {f.Number("warmup", 1), f.Number("seconds", 8)};
  o.latency = {f.Number("warmup", 1) / 2, f.Number("latency-seconds", 5)};
  o.body = Body(static_cast<size_t>(f.Number("body-bytes", 256)));
  o.only = f.Get("only", "");
  o.probe_label = f.Get("probe-label", "");
  Report report(f.Get("json", ""));

  std::vector<std::pair<std::string, std::function<Status()>>> cases;
  if (f.Has("fsync-probe")) {
    cases.emplace_back("fsync probe",
                       [&] { return RunFsyncProbe(f.Get("fsync-probe", "."), o, report); });
  }
  if (!o.store_url.empty() && (o.only.empty() || o.only == "direct")) {
    cases.emplace_back("direct", [&] { return RunDirect(o, report); });
  }
  if (!o.store_url.empty() && o.only != "direct") {
    cases.emplace_back("http and sqs api", [&] { return RunHttp(o, report); });
  }
  int failures = 0;
  for (auto& [what, run] : cases) {
    Status s = run();
    if (!s.ok()) {
      std::fprintf(stderr, "queue_bench: %s failed: %s\n", what.c_str(), s.ToString().c_str());
      ++failures;
    }
  }
  return failures == 0 ? 0 : 1;
}

}  // namespace
}  // namespace tf::bench

int main(int argc, char** argv) { return tf::bench::Main(argc, argv); }
