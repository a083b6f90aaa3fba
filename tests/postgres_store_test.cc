// What only the PostgreSQL back end has to get right: several servers sharing one database
// (concurrent receivers, NOTIFY between servers, migrations racing), surviving a server restart,
// and the mapping of PostgreSQL errors. The common semantics are in store_contract_test.cc.
//
// Needs a server: run under scripts/with-postgres.sh, which sets TENSORFLEET_TEST_POSTGRES_URL
// (and TENSORFLEET_TEST_PGCTL for the restart tests). Without it those tests are skipped.
#include "store/postgres_store.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "base/crypto.h"
#include "store/pg_connection.h"
#include "store/pg_migrations.h"

namespace tf::store {
namespace {

constexpr TimeMs kT0 = 1'700'000'000'000;
constexpr auto kPatience = std::chrono::seconds(30);

std::string EnvOrEmpty(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? "" : value;
}

// Records the queue ids a store's listener reports; lets a test wait for one.
class Heard {
 public:
  std::function<void(int64_t)> Listener() {
    return [this](int64_t id) {
      std::lock_guard lock(mu_);
      ++counts_[id];
      changed_.notify_all();
    };
  }
  bool WaitFor(int64_t id) {
    std::unique_lock lock(mu_);
    return changed_.wait_for(lock, kPatience, [&] { return counts_[id] > 0; });
  }
  int Count(int64_t id) {
    std::lock_guard lock(mu_);
    return counts_[id];
  }
  void Clear() {
    std::lock_guard lock(mu_);
    counts_.clear();
  }

 private:
  std::mutex mu_;
  std::condition_variable changed_;
  std::map<int64_t, int> counts_;
};

class PostgresStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    url_ = EnvOrEmpty("TENSORFLEET_TEST_POSTGRES_URL");
    if (url_.empty()) GTEST_SKIP() << "TENSORFLEET_TEST_POSTGRES_URL is not set";
    project_ = "prj_" + RandomHex(8);
    std::unique_ptr<Store> store = Open();
    ASSERT_TRUE(store->auth().CreateProject({project_, "p-" + project_, kT0}).ok());
  }

  // A new store on the test database, as another server would open it.
  std::unique_ptr<Store> Open(const std::string& url = "") {
    auto opened = OpenPostgresStore(url.empty() ? url_ : url);
    EXPECT_TRUE(opened.ok()) << opened.status().ToString();
    return opened.ok() ? std::move(opened).value() : nullptr;
  }

  Queue MakeQueue(Store& store, const std::string& name, bool fifo = false) {
    Queue q;
    q.project_id = project_;
    q.name = name;
    q.config.fifo = fifo;
    q.created_at = q.updated_at = kT0;
    auto created = store.queues().CreateQueue(q);
    EXPECT_TRUE(created.ok()) << created.status().ToString();
    return created.ok() ? *created : q;
  }

  static NewMessage Msg(const std::string& body, const std::string& group = "") {
    NewMessage m;
    m.message_id = RandomHex(16);
    m.body = body;
    m.body_md5 = Md5Hex(body);
    m.visible_at = kT0;
    m.expires_at = kT0 + kDayMs;
    m.group_id = group;
    return m;
  }

  static ReceiveOptions Options(const Queue& q, int max = 10, TimeMs visibility = kHourMs) {
    ReceiveOptions o;
    o.queue_id = q.id;
    o.fifo = q.config.fifo;
    o.max_messages = max;
    o.visibility_timeout_ms = visibility;
    return o;
  }

  // Runs pg_ctl with `verb` (and waits for it) on the test server.
  void PgCtl(const std::string& verb) {
    std::string pgctl = EnvOrEmpty("TENSORFLEET_TEST_PGCTL");
    ASSERT_FALSE(pgctl.empty());
    ASSERT_EQ(std::system((pgctl + " " + verb + " >/dev/null").c_str()), 0) << verb;
  }

  std::string url_;
  std::string project_;
};

TEST(PostgresErrorsTest, SqlStatesMapToCodesCallersCanActOn) {
  EXPECT_EQ(StatusFromSqlState("08006", "connection failure").code(), StatusCode::kUnavailable);
  EXPECT_EQ(StatusFromSqlState("57P01", "admin shutdown").code(), StatusCode::kUnavailable);
  EXPECT_EQ(StatusFromSqlState("57P03", "starting up").code(), StatusCode::kUnavailable);
  EXPECT_EQ(StatusFromSqlState("53300", "too many connections").code(), StatusCode::kUnavailable);
  EXPECT_EQ(StatusFromSqlState("25006", "read-only transaction").code(), StatusCode::kUnavailable);
  EXPECT_EQ(StatusFromSqlState("23505", "duplicate key").code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(StatusFromSqlState("40001", "could not serialize").code(), StatusCode::kAborted);
  EXPECT_EQ(StatusFromSqlState("40P01", "deadlock detected").code(), StatusCode::kAborted);
  Status other = StatusFromSqlState("42P01", "relation \"nope\" does not exist");
  EXPECT_EQ(other.code(), StatusCode::kInternal);
  EXPECT_NE(other.message().find("relation \"nope\" does not exist"), std::string::npos);
  EXPECT_TRUE(IsConflictSqlState("40P01"));
  EXPECT_FALSE(IsConflictSqlState("23505"));
}

TEST(PostgresErrorsTest, UnreachableServerIsUnavailable) {
  // A port nobody listens on: bind one, then let it go.
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), len), 0);
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  close(fd);
  auto opened = OpenPostgresStore(
      "postgresql://nobody@127.0.0.1:" + std::to_string(ntohs(addr.sin_port)) + "/nothing");
  EXPECT_EQ(opened.status().code(), StatusCode::kUnavailable) << opened.status().ToString();
}

TEST_F(PostgresStoreTest, MigrationsAreIdempotentAndSafeToRace) {
  // A schema of its own, so that the migrations really run here rather than finding the shared
  // test schema already done.
  const std::string schema = "tf_migrations_" + RandomHex(4);
  auto admin = PgConnection::Connect(url_);
  ASSERT_TRUE(admin.ok()) << admin.status().ToString();
  ASSERT_TRUE((*admin)->Run("CREATE SCHEMA " + schema).ok());
  const std::string url = url_ + (url_.find('?') == std::string::npos ? "?" : "&") +
                          "options=-csearch_path%3D" + schema;

  // Four servers start at once.
  std::vector<std::unique_ptr<Store>> stores(4);
  std::vector<std::thread> threads;
  for (auto& store : stores) threads.emplace_back([&] { store = Open(url); });
  for (auto& t : threads) t.join();
  for (auto& store : stores) {
    ASSERT_NE(store, nullptr);
    EXPECT_EQ(store->schema_version(), PostgresSchemaVersion());
  }
  // And once more, later: nothing left to do.
  std::unique_ptr<Store> again = Open(url);
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(again->schema_version(), PostgresSchemaVersion());
  auto applied =
      (*admin)->Exec("SELECT count(*), max(version) FROM " + schema + ".schema_migrations");
  ASSERT_TRUE(applied.ok()) << applied.status().ToString();
  EXPECT_EQ(applied->Int(0, 0), PostgresSchemaVersion());
  EXPECT_EQ(applied->Int(0, 1), PostgresSchemaVersion());

  // A database migrated by a newer build is refused rather than misread.
  ASSERT_TRUE((*admin)->Run("INSERT INTO " + schema + ".schema_migrations VALUES (999, 0)").ok());
  auto newer = OpenPostgresStore(url);
  EXPECT_EQ(newer.status().code(), StatusCode::kFailedPrecondition) << newer.status().ToString();

  stores.clear();
  again.reset();
  EXPECT_TRUE((*admin)->Run("DROP SCHEMA " + schema + " CASCADE").ok());
}

TEST_F(PostgresStoreTest, BodiesKeepEveryByte) {
  std::unique_ptr<Store> store = Open();
  Queue q = MakeQueue(*store, "bytes");
  std::string body("\0\x01\xff\xfe not utf-8 \xc3\x28 \\x00 '\"", 22);
  body += std::string(300'000, 'b');
  ASSERT_TRUE(store->queues().SendMessages(q.id, {Msg(body)}, kT0, 0).ok());
  auto got = store->queues().ReceiveMessages(Options(q), kT0);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_EQ(got->size(), 1u);
  EXPECT_EQ((*got)[0].body, body);
}

TEST_F(PostgresStoreTest, LargeBatchesKeepTheirOrder) {
  std::unique_ptr<Store> store = Open();
  Queue q = MakeQueue(*store, "large");
  std::vector<NewMessage> batch;
  for (int i = 0; i < 1200; ++i) batch.push_back(Msg(std::to_string(i)));
  auto sent = store->queues().SendMessages(q.id, batch, kT0, 0);
  ASSERT_TRUE(sent.ok()) << sent.status().ToString();
  ASSERT_EQ(sent->size(), batch.size());
  for (size_t i = 1; i < sent->size(); ++i) {
    ASSERT_LT((*sent)[i - 1].sequence, (*sent)[i].sequence);
    ASSERT_EQ((*sent)[i].message_id, batch[i].message_id);
  }
  auto got = store->queues().ReceiveMessages(Options(q, 10), kT0);
  ASSERT_TRUE(got.ok());
  ASSERT_EQ(got->size(), 10u);
  for (int i = 0; i < 10; ++i) EXPECT_EQ((*got)[i].body, std::to_string(i));
}

TEST_F(PostgresStoreTest, ReceiversOnTwoServersNeverShareAMessage) {
  std::unique_ptr<Store> a = Open();
  std::unique_ptr<Store> b = Open();
  Queue q = MakeQueue(*a, "shared");
  constexpr int kMessages = 600;
  for (int i = 0; i < kMessages; i += 100) {
    std::vector<NewMessage> batch;
    for (int j = 0; j < 100; ++j) batch.push_back(Msg(std::to_string(i + j)));
    ASSERT_TRUE(a->queues().SendMessages(q.id, batch, kT0, 0).ok());
  }
  std::mutex mu;
  std::multiset<std::string> seen;
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t) {
    QueueStore& queues = (t % 2 == 0 ? a : b)->queues();
    threads.emplace_back([&, receive_max = 1 + t * 2] {
      for (;;) {
        auto got = queues.ReceiveMessages(Options(q, receive_max), kT0);
        ASSERT_TRUE(got.ok()) << got.status().ToString();
        if (got->empty()) return;
        std::vector<Receipt> receipts;
        for (const auto& m : *got) receipts.push_back({m.sequence, m.receipt});
        auto deleted = queues.DeleteMessages(q.id, receipts);
        ASSERT_TRUE(deleted.ok());
        for (const Status& s : *deleted) EXPECT_TRUE(s.ok()) << s.ToString();
        std::lock_guard lock(mu);
        for (const auto& m : *got) seen.insert(m.body);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(seen.size(), static_cast<size_t>(kMessages));
  for (const auto& body : seen) EXPECT_EQ(seen.count(body), 1u) << body;
  EXPECT_EQ(a->queues().CountMessages(q.id, kT0)->visible, 0);
}

TEST_F(PostgresStoreTest, FifoReceiversOnTwoServersNeverHoldOneGroupTwice) {
  std::unique_ptr<Store> a = Open();
  std::unique_ptr<Store> b = Open();
  Queue q = MakeQueue(*a, "orders.fifo", /*fifo=*/true);
  constexpr int kGroups = 6;
  constexpr int kPerGroup = 30;
  for (int i = 0; i < kPerGroup; ++i) {
    std::vector<NewMessage> batch;
    for (int g = 0; g < kGroups; ++g)
      batch.push_back(Msg(std::to_string(i), "g" + std::to_string(g)));
    ASSERT_TRUE(a->queues().SendMessages(q.id, batch, kT0, 0).ok());
  }
  std::mutex mu;
  std::set<std::string> held;                         // groups some receiver holds now
  std::map<std::string, std::vector<int>> delivered;  // group -> bodies in delivery order
  std::atomic<int> done{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t) {
    QueueStore& queues = (t % 2 == 0 ? a : b)->queues();
    threads.emplace_back([&, max = 1 + t * 2] {
      while (done < kGroups * kPerGroup) {
        auto got = queues.ReceiveMessages(Options(q, max), kT0);
        if (!got.ok()) {
          ADD_FAILURE() << got.status().ToString();
          done = kGroups * kPerGroup;  // let the other threads stop too
          return;
        }
        if (got->empty()) continue;
        std::set<std::string> mine;
        std::vector<Receipt> receipts;
        {
          std::lock_guard lock(mu);
          for (const auto& m : *got) {
            if (!mine.contains(m.group_id)) {
              EXPECT_FALSE(held.contains(m.group_id)) << "group " << m.group_id << " held twice";
            }
            mine.insert(m.group_id);
            delivered[m.group_id].push_back(std::stoi(m.body));
            receipts.push_back({m.sequence, m.receipt});
          }
          held.insert(mine.begin(), mine.end());
        }
        // Work on the messages for a moment (one round trip), as a consumer would.
        EXPECT_TRUE(queues.CountMessages(q.id, kT0).ok());
        {
          // Let go before deleting: until the delete commits nobody else can get these groups.
          std::lock_guard lock(mu);
          for (const auto& g : mine) held.erase(g);
        }
        auto deleted = queues.DeleteMessages(q.id, receipts);
        EXPECT_TRUE(deleted.ok()) << deleted.status().ToString();
        done += static_cast<int>(receipts.size());
      }
    });
  }
  for (auto& t : threads) t.join();
  ASSERT_EQ(delivered.size(), static_cast<size_t>(kGroups));
  for (const auto& [group, bodies] : delivered) {
    ASSERT_EQ(bodies.size(), static_cast<size_t>(kPerGroup)) << group;
    for (int i = 0; i < kPerGroup; ++i) EXPECT_EQ(bodies[i], i) << group;
  }
}

TEST_F(PostgresStoreTest, ListenerHearsOtherServersOnceEach) {
  std::unique_ptr<Store> a = Open();
  std::unique_ptr<Store> b = Open();
  Heard heard;
  a->SetQueueListener(heard.Listener());
  Queue q = MakeQueue(*a, "loud");
  Queue dlq = MakeQueue(*a, "loud-dlq");
  Queue marker = MakeQueue(*a, "marker");

  // A send through another server reaches this one's listener.
  ASSERT_TRUE(b->queues().SendMessages(q.id, {Msg("x")}, kT0, 0).ok());
  ASSERT_TRUE(heard.WaitFor(q.id));

  // So do a visibility change that releases a message, and a redrive.
  auto got = b->queues().ReceiveMessages(Options(q), kT0);
  ASSERT_TRUE(got.ok() && got->size() == 1u);
  heard.Clear();
  auto changed =
      b->queues().ChangeVisibility(q.id, {{{(*got)[0].sequence, (*got)[0].receipt}, kT0}}, kT0);
  ASSERT_TRUE(changed.ok() && (*changed)[0].ok());
  ASSERT_TRUE(heard.WaitFor(q.id));
  ASSERT_TRUE(b->queues().SendMessages(dlq.id, {Msg("dead")}, kT0, 0).ok());
  heard.Clear();
  ASSERT_EQ(*b->queues().RedriveMessages(dlq.id, q.id, kT0, 10), 1);
  ASSERT_TRUE(heard.WaitFor(q.id));

  // This server's own send is reported once, right away, and its echo through NOTIFY is skipped.
  // Notifications arrive in commit order, so once the marker (sent later) is heard, an echo
  // would have been too.
  heard.Clear();
  ASSERT_TRUE(a->queues().SendMessages(q.id, {Msg("mine")}, kT0, 0).ok());
  EXPECT_EQ(heard.Count(q.id), 1);
  ASSERT_TRUE(b->queues().SendMessages(marker.id, {Msg("m")}, kT0, 0).ok());
  ASSERT_TRUE(heard.WaitFor(marker.id));
  EXPECT_EQ(heard.Count(q.id), 1);
}

TEST_F(PostgresStoreTest, RecoversWhenTheServerRestarts) {
  if (EnvOrEmpty("TENSORFLEET_TEST_PGCTL").empty()) GTEST_SKIP() << "TENSORFLEET_TEST_PGCTL unset";
  std::unique_ptr<Store> a = Open();
  std::unique_ptr<Store> b = Open();
  Heard heard;
  a->SetQueueListener(heard.Listener());
  Queue q = MakeQueue(*a, "survivor");
  ASSERT_TRUE(a->queues().SendMessages(q.id, {Msg("before")}, kT0, 0).ok());
  heard.Clear();

  PgCtl("restart -m fast");

  // The listener reconnects and, since notifications may have been lost meanwhile, reports every
  // queue once.
  ASSERT_TRUE(heard.WaitFor(q.id));
  // The pools notice their connections were closed and reconnect: the first call succeeds.
  auto sent = a->queues().SendMessages(q.id, {Msg("after")}, kT0, 0);
  ASSERT_TRUE(sent.ok()) << sent.status().ToString();
  auto got = b->queues().ReceiveMessages(Options(q), kT0);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->size(), 2u);
  // And the listener hears other servers again.
  heard.Clear();
  ASSERT_TRUE(b->queues().SendMessages(q.id, {Msg("later")}, kT0, 0).ok());
  EXPECT_TRUE(heard.WaitFor(q.id));
}

TEST_F(PostgresStoreTest, UnavailableWhileTheServerIsDownThenBack) {
  if (EnvOrEmpty("TENSORFLEET_TEST_PGCTL").empty()) GTEST_SKIP() << "TENSORFLEET_TEST_PGCTL unset";
  std::unique_ptr<Store> store = Open();
  Queue q = MakeQueue(*store, "patient");

  PgCtl("stop -m fast");
  auto down = store->queues().SendMessages(q.id, {Msg("lost")}, kT0, 0);
  EXPECT_EQ(down.status().code(), StatusCode::kUnavailable) << down.status().ToString();
  EXPECT_EQ(store->queues().GetQueueById(q.id).status().code(), StatusCode::kUnavailable);
  PgCtl("start");

  auto sent = store->queues().SendMessages(q.id, {Msg("kept")}, kT0, 0);
  ASSERT_TRUE(sent.ok()) << sent.status().ToString();
  EXPECT_EQ(store->queues().CountMessages(q.id, kT0)->visible, 1);
}

}  // namespace
}  // namespace tf::store
