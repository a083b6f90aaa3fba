// What services that own whole documents (sweeps) need of the store (migration 16): names
// unique within a project and kind, versioned updates and deletes that never overwrite a change
// made meanwhile, listing by kind and state, and projects that do not see each other's
// documents. Run against every back end (tests/store_test_env.h).
#include <gtest/gtest.h>

#include <algorithm>
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

class DocumentStoreContractTest : public testing::StoreTest {
 protected:
  DocumentRecord Make(const std::string& kind, const std::string& project, const std::string& name,
                      const std::string& state = "running") {
    DocumentRecord d;
    d.kind = kind;
    d.id = "sw_" + RandomHex(8);
    d.project_id = project;
    d.name = name;
    d.state = state;
    d.version = 1;
    d.created_at = kT0;
    d.updated_at = kT0;
    d.doc_json = R"({"name":")" + name + R"("})";
    return d;
  }
  DocumentStore& documents() { return store_->documents(); }

  std::vector<std::string> Names(const std::string& kind, const std::string& project,
                                 const std::vector<std::string>& states = {}) {
    auto listed = documents().ListDocuments(kind, project, states);
    EXPECT_TRUE(listed.ok()) << listed.status().ToString();
    std::vector<std::string> names;
    if (listed.ok()) {
      for (const DocumentRecord& d : *listed) names.push_back(d.name);
    }
    return names;
  }
};

TEST_P(DocumentStoreContractTest, NamesAreUniqueWithinAProjectAndKindOnly) {
  DocumentRecord lr = Make("sweep", project_, "lr");
  ASSERT_TRUE(documents().CreateDocument(lr).ok());
  Status again = documents().CreateDocument(Make("sweep", project_, "lr"));
  EXPECT_EQ(again.code(), StatusCode::kAlreadyExists) << again.ToString();
  EXPECT_EQ(again.message(), "sweep 'lr' exists");
  EXPECT_TRUE(documents().CreateDocument(Make("workflow", project_, "lr")).ok());
  EXPECT_TRUE(documents().CreateDocument(Make("sweep", "prj_" + RandomHex(8), "lr")).ok());

  auto got = documents().GetDocument("sweep", project_, "lr");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->id, lr.id);
  EXPECT_EQ(got->kind, "sweep");
  EXPECT_EQ(got->project_id, project_);
  EXPECT_EQ(got->state, "running");
  EXPECT_EQ(got->version, 1);
  EXPECT_EQ(got->created_at, kT0);
  EXPECT_EQ(got->doc_json, lr.doc_json);
  Status missing = documents().GetDocument("sweep", project_, "missing").status();
  EXPECT_EQ(missing.code(), StatusCode::kNotFound);
  EXPECT_EQ(missing.message(), "sweep 'missing' does not exist");
  EXPECT_EQ(documents().GetDocument("sweep", "prj_" + RandomHex(8), "lr").status().code(),
            StatusCode::kNotFound);
}

TEST_P(DocumentStoreContractTest, ListedByKindProjectAndState) {
  std::string other = "prj_" + RandomHex(8);
  ASSERT_TRUE(documents().CreateDocument(Make("sweep", project_, "b", "stopped")).ok());
  ASSERT_TRUE(documents().CreateDocument(Make("sweep", project_, "a")).ok());
  ASSERT_TRUE(documents().CreateDocument(Make("sweep", project_, "c", "finished")).ok());
  ASSERT_TRUE(documents().CreateDocument(Make("workflow", project_, "w")).ok());
  ASSERT_TRUE(documents().CreateDocument(Make("sweep", other, "z")).ok());

  EXPECT_EQ(Names("sweep", project_), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(Names("sweep", project_, {"running"}), (std::vector<std::string>{"a"}));
  EXPECT_EQ(Names("sweep", project_, {"stopped", "finished"}),
            (std::vector<std::string>{"b", "c"}));
  EXPECT_EQ(Names("workflow", project_), (std::vector<std::string>{"w"}));
  // "" is every project's, which the leader's controller reads.
  std::vector<std::string> running = Names("sweep", "", {"running"});
  EXPECT_NE(std::find(running.begin(), running.end(), "a"), running.end());
  EXPECT_NE(std::find(running.begin(), running.end(), "z"), running.end());
  EXPECT_EQ(std::find(running.begin(), running.end(), "b"), running.end());
}

TEST_P(DocumentStoreContractTest, AnUpdateOrDeleteNamesTheVersionItRead) {
  DocumentRecord d = Make("sweep", project_, "lr");
  ASSERT_TRUE(documents().CreateDocument(d).ok());
  d.state = "stopping";
  d.updated_at = kT0 + 5;
  d.doc_json = R"({"trials":[1]})";
  ASSERT_TRUE(documents().UpdateDocument(d, 1).ok());

  auto got = documents().GetDocument("sweep", project_, "lr");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->version, 2);
  EXPECT_EQ(got->state, "stopping");
  EXPECT_EQ(got->updated_at, kT0 + 5);
  EXPECT_EQ(got->created_at, kT0);
  EXPECT_EQ(got->doc_json, d.doc_json);

  d.doc_json = R"({"lost":true})";
  Status stale = documents().UpdateDocument(d, 1);
  EXPECT_EQ(stale.code(), StatusCode::kAborted) << stale.ToString();
  EXPECT_EQ(stale.message(), "sweep 'lr' changed meanwhile (version 2, expected 1)");
  EXPECT_EQ(documents().DeleteDocument(d.id, 1).code(), StatusCode::kAborted);
  EXPECT_EQ(documents().GetDocument("sweep", project_, "lr")->doc_json, R"({"trials":[1]})");

  ASSERT_TRUE(documents().DeleteDocument(d.id, 2).ok());
  EXPECT_EQ(documents().GetDocument("sweep", project_, "lr").status().code(),
            StatusCode::kNotFound);
  EXPECT_EQ(documents().UpdateDocument(d, 2).code(), StatusCode::kNotFound);
  EXPECT_EQ(documents().DeleteDocument(d.id, 2).code(), StatusCode::kNotFound);
}

INSTANTIATE_TEST_SUITE_P(Backends, DocumentStoreContractTest, ::testing::ValuesIn(StoreBackends()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace tf::store
