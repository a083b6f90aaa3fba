// The object store's contract (store.h, ObjectStore), on SQLite and on PostgreSQL when the test
// command starts one: buckets, objects and their atomic replacement, pending blobs, multipart
// uploads, listings, conditional puts, and what an object keeps beside its content.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>

#include "base/crypto.h"
#include "store/store.h"
#include "store_test_env.h"
#include "store_test_fixture.h"
#include "store_upgrade_util.h"

namespace tf::store {
namespace {

using tf::testing::RunSql;
using tf::testing::StoreBackends;
using tf::testing::UpgradeDatabase;

constexpr TimeMs kT0 = 1'700'000'000'000;

// Objects: a bucket of this test's project, and objects whose blobs were first pending.
class ObjectContractTest : public testing::StoreWithProjectTest {
 protected:
  ObjectStore& objects() { return store_->objects(); }

  Bucket MakeBucket(const std::string& name) {
    auto b = objects().CreateBucket({0, project_, name, kT0});
    EXPECT_TRUE(b.ok()) << b.status().ToString();
    return b.ok() ? *b : Bucket{};
  }

  // Writes `key` as an upload would: pending blob first, then the object. Returns the blob the
  // put replaced, "" if none.
  std::string Put(const Bucket& b, const std::string& key, const std::string& blob,
                  int64_t size = 1) {
    EXPECT_TRUE(objects().AddPendingBlob({blob, owner_, kT0}).ok());
    ObjectRecord o{b.id, key, size, Md5Hex(key), Sha256Hex(key), "text/plain", "{}", blob, kT0, {}};
    auto replaced = objects().PutObject(o, owner_);
    EXPECT_TRUE(replaced.ok()) << replaced.status().ToString();
    return replaced.ok() && !replaced->empty() ? replaced->front() : "";
  }

  std::vector<std::string> PendingIds() {
    auto pending = objects().ListPendingBlobs(owner_);
    EXPECT_TRUE(pending.ok());
    std::vector<std::string> ids;
    for (const auto& p : pending.ok() ? *pending : std::vector<PendingBlob>{})
      ids.push_back(p.blob_id);
    return ids;
  }

  // Every page of a listing, joined: "k:key" for objects, "p:prefix" for common prefixes.
  std::vector<std::string> ListAll(const Bucket& b, ListObjectsOptions o) {
    std::vector<std::string> out;
    for (int page = 0; page < 100; ++page) {
      auto l = objects().ListObjects(b.id, o);
      EXPECT_TRUE(l.ok()) << l.status().ToString();
      if (!l.ok()) break;
      // Within a page, objects and prefixes interleave by key; keep that order.
      std::vector<std::string> entries;
      for (const auto& obj : l->objects) entries.push_back("k:" + obj.key);
      for (const auto& p : l->common_prefixes) entries.push_back("p:" + p);
      std::sort(entries.begin(), entries.end(),
                [](const auto& x, const auto& y) { return x.substr(2) < y.substr(2); });
      EXPECT_LE(static_cast<int>(entries.size()), o.limit);
      out.insert(out.end(), entries.begin(), entries.end());
      if (!l->truncated) return out;
      o.start_after = l->next_start_after;
    }
    ADD_FAILURE() << "listing never ended";
    return out;
  }

  std::string owner_ = "owner-" + RandomHex(4);
};

TEST_P(ObjectContractTest, BucketsAreNamedPerProjectAndDeletedOnlyWhenEmpty) {
  Bucket b = MakeBucket("data");
  MakeBucket("aaa");
  EXPECT_EQ(objects().CreateBucket({0, project_, "data", kT0}).status().code(),
            StatusCode::kAlreadyExists);
  ASSERT_TRUE(objects().CreateBucket({0, "prj_other" + RandomHex(4), "data", kT0}).ok());
  EXPECT_EQ(objects().GetBucket(project_, "data")->id, b.id);
  EXPECT_EQ(objects().GetBucket(project_, "nope").status().code(), StatusCode::kNotFound);
  auto listed = objects().ListBuckets(project_);
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 2u);
  EXPECT_EQ((*listed)[0].name, "aaa");

  Put(b, "k", "blob-" + RandomHex(8));
  EXPECT_EQ(objects().DeleteBucket(b.id).code(), StatusCode::kFailedPrecondition);
  ASSERT_TRUE(objects().DeleteObject(b.id, "k", owner_, kT0).ok());
  ASSERT_TRUE(objects().DeleteBucket(b.id).ok());
  EXPECT_EQ(objects().DeleteBucket(b.id).code(), StatusCode::kNotFound);
  EXPECT_EQ(objects().GetBucket(project_, "data").status().code(), StatusCode::kNotFound);
}

TEST_P(ObjectContractTest, PutReplacesAtomicallyAndHandsBackTheOldBlob) {
  Bucket b = MakeBucket("b");
  std::string first = "blob-" + RandomHex(8), second = "blob-" + RandomHex(8);
  EXPECT_EQ(Put(b, "../etc/passwd", first, 5), "");
  EXPECT_TRUE(PendingIds().empty()) << "a committed blob is no longer pending";
  EXPECT_EQ(Put(b, "../etc/passwd", second, 7), first);
  EXPECT_EQ(PendingIds(), std::vector<std::string>{first});
  auto got = objects().GetObject(b.id, "../etc/passwd");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->blob_id, second);
  EXPECT_EQ(got->size, 7);
  EXPECT_EQ(got->etag, Md5Hex("../etc/passwd"));
  EXPECT_EQ(got->content_type, "text/plain");
  EXPECT_EQ(objects().GetObject(b.id, "../etc").status().code(), StatusCode::kNotFound);

  auto deleted = objects().DeleteObject(b.id, "../etc/passwd", owner_, kT0);
  ASSERT_TRUE(deleted.ok());
  EXPECT_EQ(*deleted, std::vector<std::string>{second});
  EXPECT_EQ(PendingIds().size(), 2u);
  EXPECT_EQ(objects().DeleteObject(b.id, "../etc/passwd", owner_, kT0).status().code(),
            StatusCode::kNotFound);
  ASSERT_TRUE(objects().RemovePendingBlob(first).ok());
  ASSERT_TRUE(objects().RemovePendingBlob(first).ok());  // already gone: fine
  EXPECT_EQ(PendingIds(), std::vector<std::string>{second});
}

TEST_P(ObjectContractTest, AConditionalDeleteTakesOnlyTheObjectWithThatEtag) {
  Bucket b = MakeBucket("b");
  const std::string blob = "blob-" + RandomHex(8);
  Put(b, "k", blob, 5);
  auto refused = objects().DeleteObject(b.id, "k", owner_, kT0, "not-its-etag");
  ASSERT_EQ(refused.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.status().message().find("has ETag " + Md5Hex("k")), std::string::npos)
      << refused.status().message();
  EXPECT_TRUE(objects().GetObject(b.id, "k").ok()) << "a refused delete changed nothing";
  EXPECT_TRUE(PendingIds().empty());

  auto deleted = objects().DeleteObject(b.id, "k", owner_, kT0, Md5Hex("k"));
  ASSERT_TRUE(deleted.ok()) << deleted.status().ToString();
  EXPECT_EQ(*deleted, std::vector<std::string>{blob});
  EXPECT_EQ(objects().DeleteObject(b.id, "k", owner_, kT0, "*").status().code(),
            StatusCode::kNotFound);
  Put(b, "any", "blob-" + RandomHex(8), 1);
  EXPECT_TRUE(objects().DeleteObject(b.id, "any", owner_, kT0, "*").ok());  // any ETag
}

TEST_P(ObjectContractTest, PendingBlobsBelongToTheirOwner) {
  std::string blob = "blob-" + RandomHex(8);
  ASSERT_TRUE(objects().AddPendingBlob({blob, "other-" + RandomHex(4), kT0}).ok());
  EXPECT_EQ(objects().AddPendingBlob({blob, owner_, kT0}).code(), StatusCode::kAlreadyExists);
  EXPECT_TRUE(PendingIds().empty());
  Bucket gone = MakeBucket("gone");
  ASSERT_TRUE(objects().DeleteBucket(gone.id).ok());
  ObjectRecord o{gone.id, "k", 1, "e", "s", "t", "{}", "blob-x", kT0, {}};
  EXPECT_EQ(objects().PutObject(o, owner_).status().code(), StatusCode::kNotFound);
}

TEST_P(ObjectContractTest, MultipartUploadsKeepTheirPartsOutOfThePendingBlobs) {
  const std::string id = "up-" + RandomHex(8), key = "dir/\xff key";
  MultipartUploadRecord u{id, owner_, project_, "data", key, "text/plain", R"({"k":"v"})", kT0, {}};
  ASSERT_TRUE(objects().AddMultipartUpload(u).ok());
  EXPECT_EQ(objects().AddMultipartUpload(u).code(), StatusCode::kAlreadyExists);
  const std::string b1 = "blob-" + RandomHex(8), b2 = "blob-" + RandomHex(8),
                    b3 = "blob-" + RandomHex(8);
  for (const auto& b : {b1, b2, b3}) ASSERT_TRUE(objects().AddPendingBlob({b, owner_, kT0}).ok());
  auto first = objects().PutMultipartPart({id, 1, 5, "e1", b1, kT0 + 1});
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(*first, "");
  ASSERT_TRUE(objects().PutMultipartPart({id, 2, 7, "e2", b2, kT0 + 2}).ok());
  EXPECT_EQ(PendingIds(), std::vector<std::string>{b3});  // b3: a part being written
  auto replaced = objects().PutMultipartPart({id, 1, 6, "e1b", b3, kT0 + 3});
  ASSERT_TRUE(replaced.ok());
  EXPECT_EQ(*replaced, b1);
  EXPECT_EQ(PendingIds(), std::vector<std::string>{b1});  // the replaced part's blob
  EXPECT_EQ(objects().PutMultipartPart({"no-such", 1, 1, "e", "blob-x", kT0}).status().code(),
            StatusCode::kNotFound);

  auto other = objects().ListMultipartUploads("other-" + RandomHex(4));
  ASSERT_TRUE(other.ok());
  EXPECT_TRUE(other->empty());
  auto listed = objects().ListMultipartUploads(owner_);
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  ASSERT_EQ(listed->size(), 1u);
  const MultipartUploadRecord& got = (*listed)[0];
  EXPECT_EQ(got.upload_id, id);
  EXPECT_EQ(got.project_id, project_);
  EXPECT_EQ(got.bucket, "data");
  EXPECT_EQ(got.key, key);
  EXPECT_EQ(got.content_type, "text/plain");
  EXPECT_EQ(got.user_metadata, R"({"k":"v"})");
  EXPECT_EQ(got.initiated_at, kT0);
  ASSERT_EQ(got.parts.size(), 2u);
  EXPECT_EQ(got.parts[0].number, 1);
  EXPECT_EQ(got.parts[0].size, 6);
  EXPECT_EQ(got.parts[0].etag, "e1b");
  EXPECT_EQ(got.parts[0].blob_id, b3);
  EXPECT_EQ(got.parts[0].modified_at, kT0 + 3);
  EXPECT_EQ(got.parts[1].blob_id, b2);

  ASSERT_TRUE(objects().RemoveMultipartUpload(id).ok());
  ASSERT_TRUE(objects().RemoveMultipartUpload(id).ok());  // already gone: fine
  EXPECT_TRUE(objects().ListMultipartUploads(owner_)->empty());
  auto pending = PendingIds();
  std::sort(pending.begin(), pending.end());
  std::vector<std::string> all = {b1, b2, b3};
  std::sort(all.begin(), all.end());
  EXPECT_EQ(pending, all);  // every part's blob is to be reclaimed
}

TEST_P(ObjectContractTest, CompletingAnUploadForgetsItWithTheObjectsCommit) {
  Bucket b = MakeBucket("done");
  const std::string id = "up-" + RandomHex(8), p1 = "blob-" + RandomHex(8),
                    made = "blob-" + RandomHex(8), later = "blob-" + RandomHex(8);
  ASSERT_TRUE(
      objects().AddMultipartUpload({id, owner_, project_, "done", "k", "", "", kT0, {}}).ok());
  for (const auto& x : {p1, made, later})
    ASSERT_TRUE(objects().AddPendingBlob({x, owner_, kT0}).ok());
  ASSERT_TRUE(objects().PutMultipartPart({id, 1, 5, "e1", p1, kT0}).ok());
  ObjectRecord o{b.id, "k", 10, "e-1", "s", "t", "{}", made, kT0 + 1, {}};
  auto replaced = objects().PutObjectCompletingUpload(o, owner_, id);
  ASSERT_TRUE(replaced.ok()) << replaced.status().ToString();
  EXPECT_EQ(objects().GetObject(b.id, "k")->blob_id, made);
  EXPECT_TRUE(objects().ListMultipartUploads(owner_)->empty());
  // The part's blob is pending, for removal; the object's is not.
  EXPECT_THAT(PendingIds(), ::testing::UnorderedElementsAre(p1, later));
  o.blob_id = later;  // a second completion finds no upload and changes nothing
  EXPECT_EQ(objects().PutObjectCompletingUpload(o, owner_, id).status().code(),
            StatusCode::kNotFound);
  EXPECT_EQ(objects().GetObject(b.id, "k")->blob_id, made);
}

TEST_P(ObjectContractTest, ListingsFollowPrefixDelimiterAndStartAfterAcrossPages) {
  Bucket b = MakeBucket("list");
  for (const char* key :
       {"a", "b/1", "b/2", "b/c/3", "c", "d/x", "d/y/z", "e", "\xc3\xa9/1", "z~"}) {
    Put(b, key, "blob-" + RandomHex(8));
  }
  const std::vector<std::string> all = {"k:a",   "k:b/1",   "k:b/2", "k:b/c/3", "k:c",
                                        "k:d/x", "k:d/y/z", "k:e",   "k:z~",    "k:\xc3\xa9/1"};
  const std::vector<std::string> top = {"k:a", "p:b/", "k:c", "p:d/", "k:e", "k:z~", "p:\xc3\xa9/"};
  for (int limit = 1; limit <= 11; ++limit) {
    SCOPED_TRACE("limit " + std::to_string(limit));
    EXPECT_EQ(ListAll(b, {"", "", "", limit}), all);
    EXPECT_EQ(ListAll(b, {"", "/", "", limit}), top);
    EXPECT_EQ(ListAll(b, {"b/", "/", "", limit}),
              (std::vector<std::string>{"k:b/1", "k:b/2", "p:b/c/"}));
  }
  EXPECT_EQ(ListAll(b, {"", "/", "b/", 10}),  // a common prefix as start_after skips its keys
            (std::vector<std::string>{"k:c", "p:d/", "k:e", "k:z~", "p:\xc3\xa9/"}));
  EXPECT_EQ(ListAll(b, {"", "", "b/2", 10}).front(), "k:b/c/3");
  EXPECT_EQ(ListAll(b, {"d", "", "", 10}), (std::vector<std::string>{"k:d/x", "k:d/y/z"}));
  EXPECT_TRUE(ListAll(b, {"q", "/", "", 10}).empty());
  EXPECT_EQ(objects().ListObjects(b.id, {"", "", "", 0}).status().code(),
            StatusCode::kInvalidArgument);
}

TEST_P(ObjectContractTest, ConcurrentPutsOfOneKeyLeakNoBlob) {
  Bucket b = MakeBucket("race");
  constexpr int kThreads = 4, kPuts = 10;
  std::mutex mu;
  std::multiset<std::string> written, replaced;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kPuts; ++i) {
        std::string blob = "blob-" + RandomHex(8);
        std::string old = Put(b, "hot", blob);
        std::lock_guard lock(mu);
        written.insert(blob);
        if (!old.empty()) replaced.insert(old);
      }
    });
  }
  for (auto& t : threads) t.join();
  // Every blob but the last one standing was handed back exactly once, and is pending.
  std::string last = objects().GetObject(b.id, "hot")->blob_id;
  replaced.insert(last);
  EXPECT_EQ(replaced, written);
  EXPECT_EQ(PendingIds().size(), written.size() - 1);
}

// S3's conditional writes: the condition is checked in the put's transaction.
TEST_P(ObjectContractTest, ConditionalPutsChangeNothingWhenTheirConditionFails) {
  Bucket b = MakeBucket("cond");
  auto put = [&](const std::string& key, const std::string& blob, const PutCondition& condition) {
    EXPECT_TRUE(objects().AddPendingBlob({blob, owner_, kT0}).ok());
    ObjectRecord o{b.id, key, 1, "etag-" + blob, Sha256Hex(blob), "text/plain", "{}",
                   blob, kT0, {}};
    return objects().PutObject(o, owner_, condition).status();
  };
  PutCondition absent;
  absent.must_be_absent = true;
  auto etag_is = [](const std::string& etag) {
    PutCondition c;
    c.etag = etag;
    return c;
  };
  const std::string first = "blob-" + RandomHex(8);
  ASSERT_TRUE(put("k", first, absent).ok());  // absent: created

  Status exists = put("k", "blob-" + RandomHex(8), absent);
  EXPECT_EQ(exists.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(exists.message().find("already exists"), std::string::npos) << exists.ToString();
  Status wrong = put("k", "blob-" + RandomHex(8), etag_is("etag-other"));
  EXPECT_EQ(wrong.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(wrong.message().find("has ETag etag-" + first), std::string::npos) << wrong.ToString();
  Status missing = put("nope", "blob-" + RandomHex(8), etag_is("etag-" + first));
  EXPECT_EQ(missing.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(missing.message().find("does not exist"), std::string::npos) << missing.ToString();
  EXPECT_EQ(objects().GetObject(b.id, "k")->blob_id, first);
  EXPECT_EQ(objects().GetObject(b.id, "nope").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(PendingIds().size(), 3u);  // the refused blobs are still pending, for removal

  const std::string second = "blob-" + RandomHex(8);
  ASSERT_TRUE(put("k", second, etag_is("etag-" + first)).ok());  // the ETag matches
  EXPECT_EQ(objects().GetObject(b.id, "k")->blob_id, second);
}

TEST_P(ObjectContractTest, OfConcurrentCreateOnlyPutsExactlyOneWins) {
  Bucket b = MakeBucket("lock");
  constexpr int kThreads = 6;
  std::atomic<int> won{0}, refused{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      const std::string blob = "blob-" + RandomHex(8);
      EXPECT_TRUE(objects().AddPendingBlob({blob, owner_, kT0}).ok());
      ObjectRecord o{b.id, "lock", 1, "e", "s", "text/plain", "{}", blob, kT0, {}};
      PutCondition absent;
      absent.must_be_absent = true;
      Status s = objects().PutObject(o, owner_, absent).status();
      if (s.ok()) ++won;
      if (s.code() == StatusCode::kFailedPrecondition) ++refused;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(won.load(), 1);
  EXPECT_EQ(refused.load(), kThreads - 1);
}

// A lease released by a conditional delete: of racing deletes of the ETag they read, one
// deletes it and the others find it gone; a delete of an ETag it no longer has changes nothing.
TEST_P(ObjectContractTest, OfConcurrentConditionalDeletesExactlyOneDeletes) {
  Bucket b = MakeBucket("lease");
  const std::string blob = "blob-" + RandomHex(8);
  ASSERT_TRUE(objects().AddPendingBlob({blob, owner_, kT0}).ok());
  ObjectRecord o{b.id, "lease", 1, "etag-1", "s", "text/plain", "{}", blob, kT0, {}};
  ASSERT_TRUE(objects().PutObject(o, owner_).ok());
  constexpr int kThreads = 6;
  std::atomic<int> deleted{0}, gone{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      Status s = objects().DeleteObject(b.id, "lease", owner_, kT0, "etag-1").status();
      if (s.ok()) ++deleted;
      if (s.code() == StatusCode::kNotFound) ++gone;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(deleted.load(), 1);
  EXPECT_EQ(gone.load(), kThreads - 1);
  EXPECT_EQ(PendingIds(), std::vector<std::string>{blob});  // handed back once
}

// What an object keeps beside its content type and metadata: its representation headers and
// the checksum a client sent, read back as written, and replaced with the object.
TEST_P(ObjectContractTest, AnObjectKeepsItsHeadersAndChecksum) {
  Bucket b = MakeBucket("kept");
  const std::string blob = "blob-" + RandomHex(8);
  ASSERT_TRUE(objects().AddPendingBlob({blob, owner_, kT0}).ok());
  ObjectRecord o{b.id, "k", 1, "etag", "sha", "text/plain", "{}", blob, kT0, {}};
  o.headers = R"({"Cache-Control":"no-cache","Content-Encoding":"gzip"})";
  o.checksum = "crc32 y/Q5Jg==";
  ASSERT_TRUE(objects().PutObject(o, owner_).ok());
  auto got = objects().GetObject(b.id, "k");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->headers, o.headers);
  EXPECT_EQ(got->checksum, o.checksum);
  auto listed = objects().ListObjects(b.id, {});
  ASSERT_TRUE(listed.ok() && listed->objects.size() == 1u);
  EXPECT_EQ(listed->objects[0].headers, o.headers);

  // A replacing put without them leaves none.
  Put(b, "k", "blob-" + RandomHex(8));
  got = objects().GetObject(b.id, "k");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->headers, "{}");
  EXPECT_EQ(got->checksum, "");
}

TEST_P(ObjectContractTest, AMultipartUploadKeepsItsHeadersAndItsPartsChecksums) {
  MakeBucket("parts");
  MultipartUploadRecord u{"up-" + RandomHex(8), owner_, project_, "parts", "k",
                          "text/plain",         "{}",   kT0,      {}};
  u.headers = R"({"Content-Disposition":"attachment"})";
  u.checksum_algorithm = "sha256";
  ASSERT_TRUE(objects().AddMultipartUpload(u).ok());
  MultipartUploadRecord full{
      "up-" + RandomHex(8), owner_, project_, "parts", "whole", "", "{}", kT0, {}};
  full.checksum_algorithm = "crc64nvme";
  full.checksum_type = "FULL_OBJECT";
  ASSERT_TRUE(objects().AddMultipartUpload(full).ok());
  const std::string blob = "blob-" + RandomHex(8);
  ASSERT_TRUE(objects().AddPendingBlob({blob, owner_, kT0}).ok());
  MultipartPartRecord part{
      u.upload_id, 1, 5, "etag", blob, kT0, "n4bQgYhMfWWaL+qgxVrQFaO/TxsrC4Is0V1sFbDwCgg="};
  ASSERT_TRUE(objects().PutMultipartPart(part).ok());
  auto listed = objects().ListMultipartUploads(owner_);
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  ASSERT_EQ(listed->size(), 2u);
  const bool in_order = listed->front().upload_id == u.upload_id;
  const MultipartUploadRecord& got = in_order ? listed->front() : listed->back();
  const MultipartUploadRecord& got_full = in_order ? listed->back() : listed->front();
  EXPECT_EQ(got.headers, u.headers);
  EXPECT_EQ(got.checksum_algorithm, "sha256");
  EXPECT_EQ(got.checksum_type, "");
  ASSERT_EQ(got.parts.size(), 1u);
  EXPECT_EQ(got.parts[0].checksum, part.checksum);
  EXPECT_EQ(got_full.checksum_algorithm, "crc64nvme");
  EXPECT_EQ(got_full.checksum_type, "FULL_OBJECT");
  EXPECT_TRUE(got_full.parts.empty());
}

// A database at schema 8 (before objects kept headers and checksums) is opened by this version:
// migrations 9 and 10 run, its objects and uploads read as having none, and new ones keep theirs.
TEST_P(ObjectContractTest, ADatabaseFromBeforeStoredHeadersKeepsItsObjectsAndUploads) {
  UpgradeDatabase database(GetParam(), dir_, "tf_headers_");
  ASSERT_TRUE(database.created().ok()) << database.created().ToString();
  const std::string blob = "blob-" + RandomHex(8), upload = "up-" + RandomHex(8);
  int64_t bucket_id = 0;
  int latest = 0;
  {
    auto fresh = OpenStore(database.url());
    ASSERT_TRUE(fresh.ok()) << fresh.status().ToString();
    latest = (*fresh)->schema_version();
    EXPECT_GE(latest, 9);
    auto b = (*fresh)->objects().CreateBucket({0, project_, "old", kT0});
    ASSERT_TRUE(b.ok());
    bucket_id = b->id;
    ASSERT_TRUE((*fresh)->objects().AddPendingBlob({blob, owner_, kT0}).ok());
    ObjectRecord o{bucket_id, "old", 1, "etag", "sha", "text/plain", "{}", blob, kT0, {}};
    ASSERT_TRUE((*fresh)->objects().PutObject(o, owner_).ok());
    ASSERT_TRUE((*fresh)
                    ->objects()
                    .AddMultipartUpload({upload, owner_, project_, "old", "k", "", "{}", kT0, {}})
                    .ok());
  }
  Status down =
      RunSql(GetParam(), database.url(),
             "ALTER TABLE objects DROP COLUMN headers; "
             "ALTER TABLE objects DROP COLUMN checksum; "
             "ALTER TABLE multipart_uploads DROP COLUMN headers; "
             "ALTER TABLE multipart_uploads DROP COLUMN checksum_algorithm; "
             "ALTER TABLE multipart_uploads DROP COLUMN checksum_type; "
             "ALTER TABLE object_segments DROP COLUMN checksum; "
             "ALTER TABLE multipart_parts DROP COLUMN checksum; "
             "DROP TABLE endpoints; DROP TABLE endpoint_loads; DROP TABLE pools; "
             "DROP TABLE join_tokens; DROP TABLE node_credentials; DROP TABLE endpoint_traffic; "
             "DROP TABLE documents; "
             "DELETE FROM schema_migrations WHERE version >= 9;");
  ASSERT_TRUE(down.ok()) << down.ToString();

  auto upgraded = OpenStore(database.url());
  ASSERT_TRUE(upgraded.ok()) << upgraded.status().ToString();
  EXPECT_EQ((*upgraded)->schema_version(), latest);
  auto got = (*upgraded)->objects().GetObject(bucket_id, "old");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->blob_id, blob);
  EXPECT_EQ(got->headers, "{}");
  EXPECT_EQ(got->checksum, "");
  auto uploads = (*upgraded)->objects().ListMultipartUploads(owner_);
  ASSERT_TRUE(uploads.ok() && uploads->size() == 1u);
  EXPECT_EQ(uploads->front().headers, "{}");
  EXPECT_EQ(uploads->front().checksum_type, "");
  const std::string next = "blob-" + RandomHex(8);
  ASSERT_TRUE((*upgraded)->objects().AddPendingBlob({next, owner_, kT0}).ok());
  ObjectRecord o{bucket_id, "new", 1, "etag", "sha", "text/plain", "{}", next, kT0, {}};
  o.checksum = "sha1 AAAAAAAAAAAAAAAAAAAAAAAAAAA=";
  ASSERT_TRUE((*upgraded)->objects().PutObject(o, owner_).ok());
  EXPECT_EQ((*upgraded)->objects().GetObject(bucket_id, "new")->checksum, o.checksum);
}

INSTANTIATE_TEST_SUITE_P(Backends, ObjectContractTest, ::testing::ValuesIn(StoreBackends()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace tf::store
