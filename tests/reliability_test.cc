// Crash tests against the real `tensorfleet server` binary:
//  - Ledger: messages are sent while the server is killed with SIGKILL and restarted, several
//    times. Every acknowledged message must be received afterwards, and nothing that was never
//    sent may appear. Runs on SQLite and on PostgreSQL.
//  - PostgreSQL restarted under load: producers and consumers keep going through the restart;
//    every message is completed, none twice.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "child_process.h"
#include "http/http.h"
#include "server_process.h"
#include "store_test_env.h"

namespace tf::testing {
namespace {

using Json = nlohmann::json;

// A small JSON client that reports failures instead of asserting: the server may be down.
struct Api {
  std::string url, token;
  std::unique_ptr<http::Client> client;

  Api(std::string u, std::string t) : url(std::move(u)), token(std::move(t)) {
    client = std::move(http::Client::Create(url)).value();
  }
  // Returns the JSON of a 2xx answer, or null on any failure.
  Json Call(const std::string& method, const std::string& target, const Json& body) {
    auto r =
        client->Send(method, target,
                     {{"Authorization", "Bearer " + token}, {"Content-Type", "application/json"}},
                     body.dump(), std::chrono::seconds(30));
    if (!r.ok() || r->status / 100 != 2) return nullptr;
    return Json::parse(r->body, nullptr, false);
  }
};

class ReliabilityTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { TF_SKIP_UNLESS_STORE_REACHABLE(GetParam()); }

  // The server's flags for the store under test (SQLite in its data directory by default).
  std::vector<std::string> StoreFlags() {
    if (GetParam() != "postgresql") return {};
    return {"--store", TestPostgresUrl()};
  }
  TempDir dir_;
};

TEST_P(ReliabilityTest, AcknowledgedMessagesSurviveKillNine) {
  TensorfleetServer server(dir_.path().string(), FreePort(), StoreFlags());
  server.Start();
  Api admin(server.url(), server.token());
  std::string queue = "ledger-" + RandomHex(4);
  ASSERT_FALSE(admin.Call("POST", "/v1/queues", {{"name", queue}}).is_null());

  std::mutex mu;
  std::set<std::string> attempted, acknowledged;  // guarded by mu
  std::atomic<bool> stop{false};
  std::atomic<int> acked_count{0};
  std::thread sender([&] {
    Api api(server.url(), server.token());
    for (int n = 0; !stop; ++n) {
      Json batch = Json::array();
      std::vector<std::string> bodies;
      for (int k = 0; k < 5; ++k)
        bodies.push_back("m-" + std::to_string(n) + "-" + std::to_string(k));
      for (auto& b : bodies) batch.push_back({{"body", b}});
      {
        std::lock_guard lock(mu);
        attempted.insert(bodies.begin(), bodies.end());
      }
      Json r = api.Call("POST", "/v1/queues/" + queue + "/messages", {{"messages", batch}});
      if (r.is_null()) continue;  // the server is down: unknown outcome, not acknowledged
      std::lock_guard lock(mu);
      for (size_t i = 0; i < bodies.size(); ++i) {
        if (r["results"][i].value("ok", false)) acknowledged.insert(bodies[i]);
      }
      acked_count = static_cast<int>(acknowledged.size());
    }
  });

  constexpr int kCrashes = 4;
  for (int c = 0; c < kCrashes; ++c) {
    int target = acked_count + 100;
    while (acked_count < target) std::this_thread::yield();
    server.Crash();
    server.Start();
  }
  int target = acked_count + 50;
  while (acked_count < target) std::this_thread::yield();
  stop = true;
  sender.join();

  std::multiset<std::string> received;
  for (;;) {
    Json r = admin.Call("POST", "/v1/queues/" + queue + "/receive",
                        {{"max_messages", 10}, {"visibility_timeout_seconds", 3600}});
    ASSERT_FALSE(r.is_null());
    if (r["messages"].empty()) break;
    for (auto& m : r["messages"]) received.insert(m["body"].get<std::string>());
  }
  ASSERT_GE(acknowledged.size(), 450u);
  for (const auto& body : acknowledged) {
    EXPECT_EQ(received.count(body), 1u) << "acknowledged message lost: " << body;
  }
  for (const auto& body : received) {
    EXPECT_TRUE(attempted.count(body)) << "a message appeared that was never sent: " << body;
  }
  std::cout << "[ ledger ] " << attempted.size() << " attempted, " << acknowledged.size()
            << " acknowledged, " << received.size() << " received after " << kCrashes
            << " kill -9s\n";
}

TEST_P(ReliabilityTest, PostgresRestartUnderLoadCompletesEveryMessageOnce) {
  const char* pgctl = std::getenv("TENSORFLEET_TEST_PGCTL");
  if (GetParam() != "postgresql") GTEST_SKIP() << "PostgreSQL only";
  if (pgctl == nullptr) GTEST_SKIP() << "TENSORFLEET_TEST_PGCTL not set";
  TensorfleetServer server(dir_.path().string(), FreePort(), StoreFlags());
  server.Start();
  Api admin(server.url(), server.token());
  std::string queue = "restart-" + RandomHex(4);
  ASSERT_FALSE(
      admin.Call("POST", "/v1/queues", {{"name", queue}, {"visibility_timeout_seconds", 5}})
          .is_null());

  constexpr int kMessages = 600;
  std::atomic<int> sent{0};
  std::mutex mu;
  // message id -> the receipts under which it was deleted: more than one is a second completion.
  std::map<std::string, std::set<std::string>> completions;
  std::set<std::string> done_bodies;

  std::thread producer([&] {
    Api api(server.url(), server.token());
    int n = 0;
    while (n < kMessages) {
      Json batch = Json::array();
      for (int k = 0; k < 10; ++k) batch.push_back({{"body", "job-" + std::to_string(n + k)}});
      Json r = api.Call("POST", "/v1/queues/" + queue + "/messages", {{"messages", batch}});
      if (r.is_null()) continue;  // retried: may duplicate a send, which the check tolerates
      n += 10;
      sent = n;
    }
  });
  std::vector<std::thread> consumers;
  for (int c = 0; c < 3; ++c) {
    consumers.emplace_back([&] {
      Api api(server.url(), server.token());
      // Until every job is done: a receive whose answer was lost in the restart leaves its
      // messages in flight until their visibility timeout, then they come back.
      auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
      for (;;) {
        {
          std::lock_guard lock(mu);
          if (static_cast<int>(done_bodies.size()) == kMessages) break;
        }
        if (std::chrono::steady_clock::now() > deadline) break;
        Json r = api.Call("POST", "/v1/queues/" + queue + "/receive",
                          {{"max_messages", 10}, {"wait_seconds", 1}});
        if (r.is_null()) continue;
        if (r["messages"].empty()) continue;
        for (auto& m : r["messages"]) {
          // Retry the delete until the server answers: a lost answer must not cause a repeat.
          for (int attempt = 0; attempt < 1000; ++attempt) {
            Json d = api.Call("POST", "/v1/queues/" + queue + "/delete",
                              {{"receipt_handles", {m["receipt_handle"]}}});
            if (d.is_null()) continue;
            if (d["results"][0].value("ok", false)) {
              std::lock_guard lock(mu);
              completions[m["message_id"].get<std::string>()].insert(m["receipt_handle"]);
              done_bodies.insert(m["body"].get<std::string>());
            }
            break;
          }
        }
      }
    });
  }

  while (sent < kMessages / 3) std::this_thread::yield();
  ASSERT_EQ(std::system((std::string(pgctl) + " restart -m fast >/dev/null 2>&1").c_str()), 0);

  producer.join();
  for (auto& t : consumers) t.join();
  for (int n = 0; n < kMessages; ++n) {
    EXPECT_TRUE(done_bodies.count("job-" + std::to_string(n))) << "job-" << n << " never completed";
  }
  for (const auto& [id, receipts] : completions) {
    EXPECT_EQ(receipts.size(), 1u) << "message " << id << " was completed twice";
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, ReliabilityTest, ::testing::ValuesIn(StoreBackends()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace tf::testing
