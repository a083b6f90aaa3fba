// What node pools need of the store (migration 13): unique names, spec updates that never
// overwrite a change made meanwhile, and a status the controller writes without touching the
// spec or its version. Run against every back end (tests/store_test_env.h).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/crypto.h"
#include "store/store.h"
#include "store_test_env.h"
#include "store_test_fixture.h"

namespace tf::store {
namespace {

using testing::StoreBackends;

constexpr TimeMs kT0 = 1'700'000'000'000;

class PoolStoreContractTest : public testing::StoreTest {
 protected:
  static PoolRecord Make(const std::string& name) {
    return PoolRecord{name, R"({"name":")" + name + R"("})", "{}", 1, kT0, kT0};
  }
  PoolStore& pools() { return store_->pools(); }
  // Back ends may keep one database across tests: each test's pool names are its own.
  const std::string a_ = "gpu-a-" + RandomHex(4);
  const std::string b_ = "gpu-b-" + RandomHex(4);
};

TEST_P(PoolStoreContractTest, PoolsAreCreatedOnceAndListedByName) {
  ASSERT_TRUE(pools().CreatePool(Make(b_)).ok());
  ASSERT_TRUE(pools().CreatePool(Make(a_)).ok());
  Status again = pools().CreatePool(Make(a_));
  EXPECT_EQ(again.code(), StatusCode::kAlreadyExists) << again.ToString();
  EXPECT_EQ(again.message(), "pool '" + a_ + "' exists");

  auto listed = pools().ListPools();
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  std::vector<PoolRecord> mine;
  for (const PoolRecord& p : *listed) {
    if (p.name == a_ || p.name == b_) mine.push_back(p);
  }
  ASSERT_EQ(mine.size(), 2u);
  EXPECT_EQ(mine[0].name, a_);
  EXPECT_EQ(mine[1].name, b_);
  EXPECT_EQ(mine[0].spec_json, R"({"name":")" + a_ + R"("})");
  EXPECT_EQ(mine[0].status_json, "{}");
  EXPECT_EQ(mine[0].version, 1);
  EXPECT_EQ(mine[0].created_at, kT0);

  Status missing = pools().GetPool("nope").status();
  EXPECT_EQ(missing.code(), StatusCode::kNotFound);
  EXPECT_EQ(missing.message(), "pool 'nope' does not exist");
}

TEST_P(PoolStoreContractTest, ASpecUpdateNamesTheVersionItRead) {
  ASSERT_TRUE(pools().CreatePool(Make(a_)).ok());
  ASSERT_TRUE(pools().UpdatePoolSpec(a_, R"({"max":4})", kT0 + 5, 1).ok());
  Status stale = pools().UpdatePoolSpec(a_, R"({"max":9})", kT0 + 6, 1);
  EXPECT_EQ(stale.code(), StatusCode::kAborted) << stale.ToString();
  EXPECT_EQ(stale.message(), "pool '" + a_ + "' changed meanwhile (version 2, expected 1)");
  EXPECT_EQ(pools().UpdatePoolSpec("gone", "{}", kT0, 1).code(), StatusCode::kNotFound);

  auto got = pools().GetPool(a_);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->spec_json, R"({"max":4})");
  EXPECT_EQ(got->version, 2);
  EXPECT_EQ(got->updated_at, kT0 + 5);
  EXPECT_EQ(got->created_at, kT0);
}

TEST_P(PoolStoreContractTest, TheStatusIsWrittenApartFromTheSpec) {
  ASSERT_TRUE(pools().CreatePool(Make(a_)).ok());
  ASSERT_TRUE(pools().SetPoolStatus(a_, R"({"machines":[]})").ok());
  auto got = pools().GetPool(a_);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->status_json, R"({"machines":[]})");
  EXPECT_EQ(got->version, 1);
  EXPECT_EQ(got->spec_json, R"({"name":")" + a_ + R"("})");
  EXPECT_EQ(pools().SetPoolStatus("gone", "{}").code(), StatusCode::kNotFound);

  ASSERT_TRUE(pools().DeletePool(a_).ok());
  EXPECT_EQ(pools().GetPool(a_).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(pools().DeletePool(a_).code(), StatusCode::kNotFound);
}

INSTANTIATE_TEST_SUITE_P(Backends, PoolStoreContractTest, ::testing::ValuesIn(StoreBackends()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace tf::store
