// What datasets need of the store (migration 6): a dataset and its shards are written in one
// transaction and deleted whole, names are unique per project, and projects do not see each
// other's datasets. Run against every back end (tests/store_test_env.h); the PostgreSQL
// database is shared by every test, so each test uses projects of its own.
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

class DatasetStoreContractTest : public testing::StoreTest {
 protected:
  void SetUp() override {
    StoreTest::SetUp();
    other_ = "prj_" + RandomHex(8);
  }

  DatasetRecord MakeDataset(const std::string& project, const std::string& name) {
    DatasetRecord d;
    d.id = "ds_" + RandomHex(8);
    d.project_id = project;
    d.name = name;
    d.created_at = kT0;
    d.sample_count = 30;
    d.bytes = 3000;
    d.shard_size = 1024;
    d.source_format = "jsonl";
    return d;
  }

  std::vector<DatasetShardRecord> MakeShards(const DatasetRecord& d, int n) {
    std::vector<DatasetShardRecord> out;
    for (int i = 0; i < n; ++i) {
      DatasetShardRecord s;
      s.dataset_id = d.id;
      s.ordinal = i;
      s.bucket = "datasets";
      s.key = d.name + "/run/shard-" + std::to_string(i) + ".tfs";
      s.samples = 10;
      s.bytes = 1000 + i;
      s.sha256 = std::string(64, static_cast<char>('a' + i));
      s.first_sample = 10 * i;
      out.push_back(s);
    }
    return out;
  }

  std::string other_;
};

TEST_P(DatasetStoreContractTest, CreateGetListShardsAndDelete) {
  DatasetStore& ds = store_->datasets();
  DatasetRecord d = MakeDataset(project_, "tiny-text");
  auto shards = MakeShards(d, 3);
  ASSERT_TRUE(ds.CreateDataset(d, shards).ok());

  auto got = ds.GetDataset(project_, "tiny-text");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->id, d.id);
  EXPECT_EQ(got->created_at, kT0);
  EXPECT_EQ(got->sample_count, 30);
  EXPECT_EQ(got->bytes, 3000);
  EXPECT_EQ(got->shard_size, 1024);
  EXPECT_EQ(got->source_format, "jsonl");

  auto listed = ds.ListDatasetShards(d.id);
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  ASSERT_EQ(listed->size(), 3u);
  for (int i = 0; i < 3; ++i) {
    const DatasetShardRecord& s = (*listed)[i];
    EXPECT_EQ(s.dataset_id, d.id);
    EXPECT_EQ(s.ordinal, i);
    EXPECT_EQ(s.bucket, "datasets");
    EXPECT_EQ(s.key, shards[i].key);
    EXPECT_EQ(s.samples, 10);
    EXPECT_EQ(s.bytes, 1000 + i);
    EXPECT_EQ(s.sha256, shards[i].sha256);
    EXPECT_EQ(s.first_sample, 10 * i);
  }

  auto deleted = ds.DeleteDataset(d.id);
  ASSERT_TRUE(deleted.ok()) << deleted.status().ToString();
  ASSERT_EQ(deleted->size(), 3u);
  EXPECT_EQ((*deleted)[2].key, shards[2].key);
  EXPECT_EQ(ds.GetDataset(project_, "tiny-text").status().code(), StatusCode::kNotFound);
  auto after = ds.ListDatasetShards(d.id);
  ASSERT_TRUE(after.ok());
  EXPECT_TRUE(after->empty());
  EXPECT_EQ(ds.DeleteDataset(d.id).status().code(), StatusCode::kNotFound);
}

TEST_P(DatasetStoreContractTest, NamesAreUniquePerProjectAndProjectsAreApart) {
  DatasetStore& ds = store_->datasets();
  DatasetRecord a = MakeDataset(project_, "shared-name");
  ASSERT_TRUE(ds.CreateDataset(a, MakeShards(a, 1)).ok());
  DatasetRecord again = MakeDataset(project_, "shared-name");
  Status taken = ds.CreateDataset(again, MakeShards(again, 2));
  EXPECT_EQ(taken.code(), StatusCode::kAlreadyExists);
  EXPECT_NE(taken.message().find("shared-name"), std::string::npos) << taken.ToString();
  // The refused dataset left no shards behind.
  auto orphans = ds.ListDatasetShards(again.id);
  ASSERT_TRUE(orphans.ok());
  EXPECT_TRUE(orphans->empty());

  DatasetRecord theirs = MakeDataset(other_, "shared-name");
  ASSERT_TRUE(ds.CreateDataset(theirs, MakeShards(theirs, 1)).ok());
  auto mine = ds.GetDataset(project_, "shared-name");
  ASSERT_TRUE(mine.ok());
  EXPECT_EQ(mine->id, a.id);

  DatasetRecord b = MakeDataset(project_, "another");
  ASSERT_TRUE(ds.CreateDataset(b, MakeShards(b, 1)).ok());
  auto list = ds.ListDatasets(project_);
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[0].name, "another");
  EXPECT_EQ((*list)[1].name, "shared-name");
  auto other_list = ds.ListDatasets(other_);
  ASSERT_TRUE(other_list.ok());
  ASSERT_EQ(other_list->size(), 1u);
  EXPECT_EQ((*other_list)[0].id, theirs.id);
  EXPECT_EQ(ds.GetDataset(other_, "another").status().code(), StatusCode::kNotFound);
}

TEST_P(DatasetStoreContractTest, AShardThatCannotBeWrittenLeavesNoDataset) {
  DatasetStore& ds = store_->datasets();
  DatasetRecord d = MakeDataset(project_, "half");
  auto shards = MakeShards(d, 3);
  shards[2].ordinal = 1;  // a duplicate primary key: the third insert fails
  Status st = ds.CreateDataset(d, shards);
  EXPECT_FALSE(st.ok());
  EXPECT_EQ(ds.GetDataset(project_, "half").status().code(), StatusCode::kNotFound);
  auto left = ds.ListDatasetShards(d.id);
  ASSERT_TRUE(left.ok());
  EXPECT_TRUE(left->empty());
  // The name is free for a good attempt.
  DatasetRecord retry = MakeDataset(project_, "half");
  EXPECT_TRUE(ds.CreateDataset(retry, MakeShards(retry, 3)).ok());
}

TEST_P(DatasetStoreContractTest, ManyShardsKeepTheirOrder) {
  DatasetStore& ds = store_->datasets();
  DatasetRecord d = MakeDataset(project_, "many");
  auto shards = MakeShards(d, 1);
  for (int i = 1; i < 500; ++i) {
    DatasetShardRecord s = shards[0];
    s.ordinal = i;
    s.key = "many/k/" + std::to_string(i);
    s.first_sample = 10 * i;
    shards.push_back(s);
  }
  ASSERT_TRUE(ds.CreateDataset(d, shards).ok());
  auto listed = ds.ListDatasetShards(d.id);
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 500u);
  for (int i = 0; i < 500; ++i) EXPECT_EQ((*listed)[i].ordinal, i);
}

INSTANTIATE_TEST_SUITE_P(Backends, DatasetStoreContractTest, ::testing::ValuesIn(StoreBackends()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace tf::store
