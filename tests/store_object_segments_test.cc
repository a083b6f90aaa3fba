// What objects kept as segments (a completed multipart upload's parts, migration 8) need of the
// store, on SQLite and on PostgreSQL when the test command starts one: the segments come and go
// with their object in one transaction, their blobs are never pending while they are the
// object's and all pending when it is replaced or deleted; and a database made before migration
// 8 keeps its objects as they were.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/crypto.h"
#include "store/store.h"
#include "store_test_env.h"
#include "store_upgrade_util.h"

namespace tf::store {
namespace {

using testing::RunSql;
using testing::StoreBackends;
using testing::StoreUrl;
using testing::TempDir;
using ::testing::UnorderedElementsAre;
using testing::UpgradeDatabase;

constexpr TimeMs kT0 = 1'700'000'000'000;

class SegmentStoreTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    TF_SKIP_UNLESS_STORE_REACHABLE(GetParam());
    store_ = Open(StoreUrl(GetParam(), dir_));
    ASSERT_NE(store_, nullptr);
    project_ = "prj_" + RandomHex(8);
  }

  static std::unique_ptr<Store> Open(const std::string& url) {
    auto opened = OpenStore(url);
    EXPECT_TRUE(opened.ok()) << opened.status().ToString();
    return opened.ok() ? std::move(opened).value() : nullptr;
  }

  ObjectStore& objects() { return store_->objects(); }

  // A new blob id, recorded as pending as an upload records it.
  std::string NewPending() {
    std::string id = "blob-" + RandomHex(8);
    EXPECT_TRUE(objects().AddPendingBlob({id, owner_, kT0}).ok());
    return id;
  }

  std::vector<std::string> PendingIds() {
    auto pending = objects().ListPendingBlobs(owner_);
    EXPECT_TRUE(pending.ok()) << pending.status().ToString();
    std::vector<std::string> ids;
    if (pending.ok()) {
      for (const PendingBlob& p : *pending) ids.push_back(p.blob_id);
    }
    return ids;
  }

  ObjectRecord Record(int64_t bucket_id, const std::string& key, std::string blob_id,
                      std::vector<BlobSegment> segments) {
    ObjectRecord o{bucket_id,          key, 0, "etag", "sha", "text/plain", "{}",
                   std::move(blob_id), kT0, {}};
    o.segments = std::move(segments);
    for (const BlobSegment& s : o.segments) o.size += s.size;
    return o;
  }

  TempDir dir_;
  std::unique_ptr<Store> store_;
  std::string project_;
  std::string owner_ = "owner-" + RandomHex(4);
};

TEST_P(SegmentStoreTest, SegmentsComeAndGoWithTheirObject) {
  auto b = objects().CreateBucket({0, project_, "data", kT0});
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  const std::string id = "up-" + RandomHex(8), key = "dir/\xff key";
  ASSERT_TRUE(
      objects().AddMultipartUpload({id, owner_, project_, "data", key, "", "", kT0, {}}).ok());
  const std::string p1 = NewPending(), p2 = NewPending(), p3 = NewPending();
  ASSERT_TRUE(objects().PutMultipartPart({id, 1, 5, "e1", p1, kT0}).ok());
  ASSERT_TRUE(objects().PutMultipartPart({id, 2, 7, "e2", p2, kT0}).ok());
  ASSERT_TRUE(objects().PutMultipartPart({id, 3, 9, "e3", p3, kT0}).ok());
  EXPECT_TRUE(PendingIds().empty());

  // Parts 2 and 1, in that order, make the object; part 3, left out, is pending again. Each
  // segment keeps its part's checksum (none for part 1).
  ObjectRecord made = Record(b->id, key, "", {{p2, 7, "mYb+3w=="}, {p1, 5, ""}});
  auto replaced = objects().PutObjectCompletingUpload(made, owner_, id);
  ASSERT_TRUE(replaced.ok()) << replaced.status().ToString();
  EXPECT_TRUE(replaced->empty());
  EXPECT_EQ(PendingIds(), std::vector<std::string>{p3});
  EXPECT_TRUE(objects().ListMultipartUploads(owner_)->empty());
  auto got = objects().GetObject(b->id, key);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->blob_id, "");
  EXPECT_EQ(got->size, 12);
  EXPECT_EQ(got->segments, (std::vector<BlobSegment>{{p2, 7, "mYb+3w=="}, {p1, 5, ""}}));
  auto listed = objects().ListObjects(b->id, {});
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->objects.size(), 1u);
  EXPECT_EQ(listed->objects[0].size, 12);

  // A pending row naming a segment's blob (which nothing writes) does not make it reclaimable.
  ASSERT_TRUE(objects().AddPendingBlob({p1, owner_, kT0}).ok());
  EXPECT_EQ(PendingIds(), std::vector<std::string>{p3});
  ASSERT_TRUE(objects().RemovePendingBlob(p1).ok());

  // Replaced by an object of one blob: both segments' blobs are handed back, pending.
  const std::string single = NewPending();
  replaced = objects().PutObject(Record(b->id, key, single, {}), owner_);
  ASSERT_TRUE(replaced.ok()) << replaced.status().ToString();
  EXPECT_THAT(*replaced, UnorderedElementsAre(p1, p2));
  EXPECT_THAT(PendingIds(), UnorderedElementsAre(p1, p2, p3));
  got = objects().GetObject(b->id, key);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->blob_id, single);
  EXPECT_TRUE(got->segments.empty());

  // Replaced by segments again, then deleted: every segment's blob is handed back.
  const std::string q1 = NewPending(), q2 = NewPending();
  replaced = objects().PutObject(Record(b->id, key, "", {{q1, 3}, {q2, 4}}), owner_);
  ASSERT_TRUE(replaced.ok()) << replaced.status().ToString();
  EXPECT_EQ(*replaced, std::vector<std::string>{single});
  EXPECT_EQ(objects().GetObject(b->id, key)->segments.size(), 2u);
  auto deleted = objects().DeleteObject(b->id, key, owner_, kT0);
  ASSERT_TRUE(deleted.ok()) << deleted.status().ToString();
  EXPECT_THAT(*deleted, UnorderedElementsAre(q1, q2));
  EXPECT_THAT(PendingIds(), UnorderedElementsAre(p1, p2, p3, single, q1, q2));
  EXPECT_EQ(objects().GetObject(b->id, key).status().code(), StatusCode::kNotFound);
  ASSERT_TRUE(objects().DeleteBucket(b->id).ok());
}

TEST_P(SegmentStoreTest, ARecordNamesOneBlobOrSegmentsNotBothNorNeither) {
  auto b = objects().CreateBucket({0, project_, "data", kT0});
  ASSERT_TRUE(b.ok());
  const std::string x = NewPending();
  EXPECT_EQ(objects().PutObject(Record(b->id, "k", x, {{x, 1}}), owner_).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(objects().PutObject(Record(b->id, "k", "", {}), owner_).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(objects().GetObject(b->id, "k").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(PendingIds(), std::vector<std::string>{x});
}

// A database at schema 7 holding an object (whose row is what every version wrote) is opened by
// this version: migration 8 runs, the object reads as it was, and segments work beside it.
TEST_P(SegmentStoreTest, ADatabaseFromBeforeSegmentsKeepsItsObjects) {
  UpgradeDatabase database(GetParam(), dir_, "tf_segments_");
  ASSERT_TRUE(database.created().ok()) << database.created().ToString();
  const std::string& url = database.url();
  const std::string blob = "blob-" + RandomHex(8);
  int64_t bucket_id = 0;
  int latest = 0;
  {
    std::unique_ptr<Store> fresh = Open(url);
    ASSERT_NE(fresh, nullptr);
    latest = fresh->schema_version();
    EXPECT_GE(latest, 8);
    auto b = fresh->objects().CreateBucket({0, project_, "data", kT0});
    ASSERT_TRUE(b.ok());
    bucket_id = b->id;
    ASSERT_TRUE(fresh->objects().AddPendingBlob({blob, owner_, kT0}).ok());
    ASSERT_TRUE(fresh->objects().PutObject(Record(bucket_id, "old", blob, {}), owner_).ok());
  }
  Status down =
      RunSql(GetParam(), url,
             "DROP TABLE object_segments; "
             "ALTER TABLE objects DROP COLUMN headers; "
             "ALTER TABLE objects DROP COLUMN checksum; "
             "ALTER TABLE multipart_uploads DROP COLUMN headers; "
             "ALTER TABLE multipart_uploads DROP COLUMN checksum_algorithm; "
             "ALTER TABLE multipart_uploads DROP COLUMN checksum_type; "
             "ALTER TABLE multipart_parts DROP COLUMN checksum; "
             "DROP TABLE endpoints; DROP TABLE endpoint_loads; DROP TABLE pools; "
             "DROP TABLE join_tokens; DROP TABLE node_credentials; DROP TABLE endpoint_traffic; "
             "DROP TABLE documents; "
             "DELETE FROM schema_migrations WHERE version >= 8;");
  ASSERT_TRUE(down.ok()) << down.ToString();

  {
    std::unique_ptr<Store> upgraded = Open(url);
    ASSERT_NE(upgraded, nullptr);
    EXPECT_EQ(upgraded->schema_version(), latest);
    auto got = upgraded->objects().GetObject(bucket_id, "old");
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_EQ(got->blob_id, blob);
    EXPECT_TRUE(got->segments.empty());
    const std::string s1 = "blob-" + RandomHex(8);
    ASSERT_TRUE(upgraded->objects().AddPendingBlob({s1, owner_, kT0}).ok());
    auto replaced = upgraded->objects().PutObject(Record(bucket_id, "old", "", {{s1, 4}}), owner_);
    ASSERT_TRUE(replaced.ok()) << replaced.status().ToString();
    EXPECT_EQ(*replaced, std::vector<std::string>{blob});
    EXPECT_EQ(upgraded->objects().GetObject(bucket_id, "old")->segments.size(), 1u);
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, SegmentStoreTest, ::testing::ValuesIn(StoreBackends()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace tf::store
