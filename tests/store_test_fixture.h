// The fixture the tests over a real store share (the store's contract tests, the object
// service's): a store of the test's back end (the parameter, one of StoreBackends()), opened for
// each test, and a project id of the test's own, since the PostgreSQL database is shared by
// every test.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "base/crypto.h"
#include "store/store.h"
#include "store_test_env.h"

namespace tf::testing {

class StoreTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    TF_SKIP_UNLESS_STORE_REACHABLE(GetParam());
    auto opened = store::OpenStore(StoreUrl(GetParam(), dir_));
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    store_ = std::move(opened).value();
    project_ = "prj_" + RandomHex(8);
  }

  TempDir dir_;
  std::unique_ptr<store::Store> store_;
  std::string project_;
};

// StoreTest whose project also exists in the store, for what refers to it.
class StoreWithProjectTest : public StoreTest {
 protected:
  void SetUp() override {
    StoreTest::SetUp();
    if (HasFatalFailure() || IsSkipped()) return;
    ASSERT_TRUE(store_->auth().CreateProject({project_, "p-" + project_, 1'700'000'000'000}).ok());
  }
};

}  // namespace tf::testing
