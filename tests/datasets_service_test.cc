// The dataset service (src/datasets/dataset_service.h) over a real store and object service:
// an index checked against its shard objects, and a read that meets a delete half way.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "base/clock.h"
#include "datasets/dataset_service.h"
#include "objects/object_service.h"
#include "store_test_env.h"
#include "store_test_fixture.h"

namespace tf::datasets {
namespace {

using tf::testing::StoreBackends;

// The store's datasets, but a dataset is deleted right before its shards are listed: what a
// DELETE landing between a GET's two reads does.
class DeletingBeforeShardsAreListed final : public store::DatasetStore {
 public:
  explicit DeletingBeforeShardsAreListed(store::DatasetStore& real) : real_(real) {}
  Status CreateDataset(const store::DatasetRecord& d,
                       const std::vector<store::DatasetShardRecord>& shards) override {
    return real_.CreateDataset(d, shards);
  }
  Result<store::DatasetRecord> GetDataset(const std::string& project_id,
                                          const std::string& name) override {
    return real_.GetDataset(project_id, name);
  }
  Result<std::vector<store::DatasetRecord>> ListDatasets(const std::string& project_id) override {
    return real_.ListDatasets(project_id);
  }
  Result<std::vector<store::DatasetShardRecord>> ListDatasetShards(
      const std::string& dataset_id) override {
    auto deleted = real_.DeleteDataset(dataset_id);
    if (!deleted.ok()) return deleted.status();
    return real_.ListDatasetShards(dataset_id);
  }
  Result<std::vector<store::DatasetShardRecord>> DeleteDataset(const std::string& id) override {
    return real_.DeleteDataset(id);
  }

 private:
  store::DatasetStore& real_;
};

class DatasetServiceTest : public tf::testing::StoreWithProjectTest {
 protected:
  void SetUp() override {
    StoreWithProjectTest::SetUp();
    if (HasFatalFailure() || IsSkipped()) return;
    auto blobs = objects::OpenLocalBlobStore(dir_.path() / "objects");
    ASSERT_TRUE(blobs.ok()) << blobs.status().ToString();
    blobs_ = std::move(blobs).value();
    objects_ = std::make_unique<objects::ObjectService>(*store_, *blobs_, clock_);
    ASSERT_TRUE(objects_->CreateBucket(project_, "datasets").ok());
  }

  // A dataset `name` of one shard object holding `content`.
  NewDataset OneShard(const std::string& name, const std::string& content) {
    auto upload = objects_->BeginPut(project_, "datasets", name + "/shard-0.tfs", {});
    EXPECT_TRUE(upload.ok()) << upload.status().ToString();
    if (!upload.ok()) return {};
    EXPECT_TRUE((*upload)->Write(content).ok());
    auto info = (*upload)->Commit();
    EXPECT_TRUE(info.ok()) << info.status().ToString();
    if (!info.ok()) return {};
    return NewDataset{.name = name,
                      .bucket = "datasets",
                      .shard_size = 4096,
                      .format = "text",
                      .shards = {NewShard{.key = name + "/shard-0.tfs",
                                          .samples = 3,
                                          .bytes = static_cast<int64_t>(content.size()),
                                          .sha256 = info->sha256}}};
  }

  FakeClock clock_;
  std::unique_ptr<objects::BlobStore> blobs_;
  std::unique_ptr<objects::ObjectService> objects_;
};

TEST_P(DatasetServiceTest, AnIndexIsCheckedAgainstItsShardObjects) {
  DatasetService service(*store_, *objects_, clock_);
  NewDataset d = OneShard("lines", "three samples' worth");
  auto made = service.Create(project_, d);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  EXPECT_EQ(made->samples, 3);
  auto got = service.Get(project_, "lines");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_EQ(got->shards.size(), 1u);
  EXPECT_EQ(got->shards[0].key, "lines/shard-0.tfs");

  NewDataset wrong_size = OneShard("sized", "content");
  wrong_size.shards[0].bytes += 1;
  EXPECT_EQ(service.Create(project_, wrong_size).status().code(), StatusCode::kFailedPrecondition);
  NewDataset elsewhere = OneShard("other", "content");
  elsewhere.name = "thief";
  auto stolen = service.Create(project_, elsewhere);
  EXPECT_EQ(stolen.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(stolen.status().message().find("is not under 'thief/'"), std::string::npos)
      << stolen.status().message();
}

TEST_P(DatasetServiceTest, AGetThatMeetsADeleteFindsNoDataset) {
  NewDataset d = OneShard("lines", "three samples' worth");
  ASSERT_TRUE(DatasetService(*store_, *objects_, clock_).Create(project_, d).ok());
  DeletingBeforeShardsAreListed racing(store_->datasets());
  DatasetService service(racing, *objects_, clock_);
  auto got = service.Get(project_, "lines");
  ASSERT_EQ(got.status().code(), StatusCode::kNotFound) << got.status().ToString();
  EXPECT_NE(got.status().message().find("dataset 'lines' does not exist"), std::string::npos)
      << got.status().message();
}

INSTANTIATE_TEST_SUITE_P(Backends, DatasetServiceTest, ::testing::ValuesIn(StoreBackends()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace tf::datasets
