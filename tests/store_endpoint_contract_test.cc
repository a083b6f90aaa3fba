// What endpoints need of the store (migration 11): names unique per project, versioned
// updates and deletes that never overwrite a change made meanwhile, and projects that do not see
// each other's endpoints. Run against every back end (tests/store_test_env.h).
#include <gtest/gtest.h>

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

INSTANTIATE_TEST_SUITE_P(Backends, EndpointStoreContractTest, ::testing::ValuesIn(StoreBackends()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace tf::store
