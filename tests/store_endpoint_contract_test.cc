// What endpoints need of the store (migrations 11 and 12): names unique per project, versioned
// updates and deletes that never overwrite a change made meanwhile, and projects that do not see
// each other's endpoints. Run against every back end (tests/store_test_env.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "base/crypto.h"
#include "store/store.h"
#include "store_test_env.h"
#include "store_test_fixture.h"

namespace tf::store {
namespace {

using testing::StoreBackends;

constexpr TimeMs kT0 = 1'700'000'000'000;

class EndpointStoreContractTest : public testing::StoreTest {
 protected:
  EndpointRecord Make(const std::string& project, const std::string& name) {
    EndpointRecord e;
    e.id = "ep_" + RandomHex(8);
    e.project_id = project;
    e.name = name;
    e.state = "active";
    e.version = 1;
    e.created_at = kT0;
    e.updated_at = kT0;
    e.doc_json = R"({"spec":{"name":")" + name + R"("}})";
    return e;
  }
  EndpointStore& endpoints() { return store_->endpoints(); }
};

TEST_P(EndpointStoreContractTest, NamesAreUniqueWithinAProjectOnly) {
  EndpointRecord chat = Make(project_, "chat");
  ASSERT_TRUE(endpoints().CreateEndpoint(chat).ok());
  Status again = endpoints().CreateEndpoint(Make(project_, "chat"));
  EXPECT_EQ(again.code(), StatusCode::kAlreadyExists) << again.ToString();
  EXPECT_EQ(again.message(), "endpoint 'chat' exists");
  std::string other = "prj_" + RandomHex(8);
  EXPECT_TRUE(endpoints().CreateEndpoint(Make(other, "chat")).ok());

  auto got = endpoints().GetEndpoint(project_, "chat");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->id, chat.id);
  EXPECT_EQ(got->state, "active");
  EXPECT_EQ(got->version, 1);
  EXPECT_EQ(got->created_at, kT0);
  EXPECT_EQ(got->doc_json, chat.doc_json);
  EXPECT_EQ(endpoints().GetEndpoint(project_, "missing").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(endpoints().GetEndpoint("prj_" + RandomHex(8), "chat").status().code(),
            StatusCode::kNotFound);
}

TEST_P(EndpointStoreContractTest, ListedByNameWithinTheirProject) {
  for (const char* name : {"zeta", "alpha", "mid"}) {
    ASSERT_TRUE(endpoints().CreateEndpoint(Make(project_, name)).ok());
  }
  ASSERT_TRUE(endpoints().CreateEndpoint(Make("prj_" + RandomHex(8), "other")).ok());
  auto listed = endpoints().ListEndpoints(project_);
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  ASSERT_EQ(listed->size(), 3u);
  EXPECT_EQ((*listed)[0].name, "alpha");
  EXPECT_EQ((*listed)[1].name, "mid");
  EXPECT_EQ((*listed)[2].name, "zeta");
  auto all = endpoints().ListEndpoints("");
  ASSERT_TRUE(all.ok());
  EXPECT_GE(all->size(), 4u);
}

TEST_P(EndpointStoreContractTest, AnUpdateNamesTheVersionItRead) {
  EndpointRecord e = Make(project_, "chat");
  ASSERT_TRUE(endpoints().CreateEndpoint(e).ok());
  EndpointRecord next = e;
  next.version = 2;
  next.state = "deleting";
  next.updated_at = kT0 + 5;
  next.doc_json = R"({"spec":{"name":"chat"},"generation":2})";
  ASSERT_TRUE(endpoints().UpdateEndpoint(next, 1).ok());
  Status stale = endpoints().UpdateEndpoint(next, 1);
  EXPECT_EQ(stale.code(), StatusCode::kAborted) << stale.ToString();
  EXPECT_EQ(stale.message(), "endpoint 'chat' changed meanwhile (version 2, expected 1)");
  auto got = endpoints().GetEndpoint(project_, "chat");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->version, 2);
  EXPECT_EQ(got->state, "deleting");
  EXPECT_EQ(got->updated_at, kT0 + 5);
  EXPECT_EQ(got->created_at, kT0);
  EXPECT_EQ(got->doc_json, next.doc_json);

  EndpointRecord ghost = Make(project_, "ghost");
  EXPECT_EQ(endpoints().UpdateEndpoint(ghost, 1).code(), StatusCode::kNotFound);
}

TEST_P(EndpointStoreContractTest, ConcurrentUpdatesFromOneVersionLetExactlyOneThrough) {
  EndpointRecord e = Make(project_, "chat");
  ASSERT_TRUE(endpoints().CreateEndpoint(e).ok());
  std::atomic<int> won{0}, aborted{0};
  std::vector<std::thread> writers;
  for (int i = 0; i < 4; ++i) {
    writers.emplace_back([&, i] {
      EndpointRecord mine = e;
      mine.version = 2;
      mine.doc_json = R"({"writer":)" + std::to_string(i) + "}";
      Status s = endpoints().UpdateEndpoint(mine, 1);
      if (s.ok()) ++won;
      if (s.code() == StatusCode::kAborted) ++aborted;
    });
  }
  for (auto& t : writers) t.join();
  EXPECT_EQ(won.load(), 1);
  EXPECT_EQ(aborted.load(), 3);
}

TEST_P(EndpointStoreContractTest, ADeleteNamesTheVersionItRead) {
  EndpointRecord e = Make(project_, "chat");
  ASSERT_TRUE(endpoints().CreateEndpoint(e).ok());
  EXPECT_EQ(endpoints().DeleteEndpoint(e.id, 7).code(), StatusCode::kAborted);
  ASSERT_TRUE(endpoints().DeleteEndpoint(e.id, 1).ok());
  EXPECT_EQ(endpoints().GetEndpoint(project_, "chat").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(endpoints().DeleteEndpoint(e.id, 1).code(), StatusCode::kNotFound);
  EXPECT_TRUE(endpoints().CreateEndpoint(Make(project_, "chat")).ok());  // the name is free
}

// Migration 12: what each server's gateway saw of each endpoint's load, for the leader.
TEST_P(EndpointStoreContractTest, EachServerReplacesItsOwnLoadRowsAndStaleOnesAreForgotten) {
  const std::string a = "srv_" + RandomHex(8), b = "srv_" + RandomHex(8);
  auto load = [](const std::string& endpoint, int64_t arrived, TimeMs at) {
    return EndpointLoadRecord{"",          endpoint,
                              arrived,     arrived + 1,
                              arrived + 2, R"({"r_1":)" + std::to_string(arrived) + "}",
                              at};
  };
  // Only the rows of this test's servers (the store may be shared with other tests).
  auto rows = [&](TimeMs since) {
    auto listed = endpoints().ListEndpointLoads(since);
    std::vector<std::string> out;
    EXPECT_TRUE(listed.ok()) << listed.status().ToString();
    if (!listed.ok()) return out;
    for (const EndpointLoadRecord& l : *listed) {
      if (l.server_id != a && l.server_id != b) continue;
      out.push_back((l.server_id == a ? "a/" : "b/") + l.endpoint_id + " " +
                    std::to_string(l.arrived) + " " + std::to_string(l.queued) + " " +
                    std::to_string(l.in_flight) + " " + l.replicas_json + " " +
                    std::to_string(l.updated_at - kT0));
    }
    return out;
  };
  ASSERT_TRUE(
      endpoints().PublishEndpointLoads(a, {load("ep_2", 3, kT0), load("ep_1", 5, kT0)}, 0).ok());
  ASSERT_TRUE(endpoints().PublishEndpointLoads(b, {load("ep_1", 1, kT0 + 10)}, 0).ok());
  std::vector<std::string> first = {R"(a/ep_1 5 6 7 {"r_1":5} 0)", R"(a/ep_2 3 4 5 {"r_1":3} 0)",
                                    R"(b/ep_1 1 2 3 {"r_1":1} 10)"};
  if (a > b) std::rotate(first.begin(), first.begin() + 2, first.end());  // by server id
  EXPECT_EQ(rows(kT0), first);

  // A server's publication replaces all of its rows, and leaves the others'.
  ASSERT_TRUE(endpoints().PublishEndpointLoads(a, {load("ep_2", 4, kT0 + 20)}, 0).ok());
  EXPECT_EQ(rows(kT0 + 15), std::vector<std::string>{R"(a/ep_2 4 5 6 {"r_1":4} 20)"});
  // Rows older than forget_before go, whoever published them: a server that stopped.
  ASSERT_TRUE(endpoints().PublishEndpointLoads(a, {}, kT0 + 15).ok());
  EXPECT_TRUE(rows(0).empty());
}

// Migration 15: what each server's gateway answered of an endpoint, by interval.
TEST_P(EndpointStoreContractTest, TrafficIntervalsAreAddedReplacedListedAndForgotten) {
  const std::string a = "srv_" + RandomHex(8), b = "srv_" + RandomHex(8);
  const std::string ep = "ep_" + RandomHex(8);  // the store may be shared with other tests
  auto row = [&](const std::string& server, TimeMs start, const std::string& summary) {
    return EndpointTrafficRecord{server, ep, start, summary};
  };
  auto listed = [&](TimeMs since) {
    auto rows = endpoints().ListEndpointTraffic(ep, since);
    std::vector<std::string> out;
    EXPECT_TRUE(rows.ok()) << rows.status().ToString();
    if (!rows.ok()) return out;
    for (const EndpointTrafficRecord& r : *rows) {
      EXPECT_EQ(r.endpoint_id, ep);
      out.push_back((r.server_id == a ? "a/" : "b/") + std::to_string(r.bucket_start - kT0) + " " +
                    r.summary_json);
    }
    return out;
  };
  ASSERT_TRUE(endpoints()
                  .AddEndpointTraffic({row(a, kT0, "1"),
                                       row(a, kT0 + 5000, "2"),
                                       row(b, kT0, "3"),
                                       {"srv_x", "ep_other", kT0, "9"}},
                                      0)
                  .ok());
  std::vector<std::string> want = {"a/0 1", "a/5000 2", "b/0 3"};
  if (a > b) std::rotate(want.begin(), want.begin() + 2, want.end());  // by server id
  EXPECT_EQ(listed(kT0), want);
  EXPECT_EQ(listed(kT0 + 1), std::vector<std::string>{"a/5000 2"});
  // The same server and interval again replaces its row.
  ASSERT_TRUE(endpoints().AddEndpointTraffic({row(a, kT0 + 5000, "4")}, 0).ok());
  EXPECT_EQ(listed(kT0 + 1), std::vector<std::string>{"a/5000 4"});
  // Intervals that began before forget_before go, whoever wrote them.
  ASSERT_TRUE(endpoints().AddEndpointTraffic({}, kT0 + 1).ok());
  EXPECT_EQ(listed(0), std::vector<std::string>{"a/5000 4"});
}

INSTANTIATE_TEST_SUITE_P(Backends, EndpointStoreContractTest, ::testing::ValuesIn(StoreBackends()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace tf::store
