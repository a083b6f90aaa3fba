// Multipart uploads over a real store (SQLite, and PostgreSQL when the test command starts one)
// and a local blob directory: parts in any order make one object atomically; aborts, replaced
// parts, failed digests, the background sweep and a restart leave no blob behind.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "base/crypto.h"
#include "object_content.h"
#include "objects/multipart.h"
#include "store_test_env.h"
#include "store_test_fixture.h"

namespace tf::objects {
namespace {

namespace fs = std::filesystem;
using tf::testing::Content;
using tf::testing::StoreBackends;

class MultipartTest : public tf::testing::StoreTest {
 protected:
  void SetUp() override {
    StoreTest::SetUp();
    if (HasFatalFailure() || IsSkipped()) return;
    Reopen();
    ASSERT_TRUE(objects_->CreateBucket(project_, "data").ok());
  }

  // Everything above the store made afresh over the same directories, as after a restart.
  void Reopen() {
    uploads_.reset();
    objects_.reset();
    auto blobs = OpenLocalBlobStore(dir_.path() / "objects");
    ASSERT_TRUE(blobs.ok()) << blobs.status().ToString();
    blobs_ = std::move(blobs).value();
    objects_ = std::make_unique<ObjectService>(*store_, *blobs_, clock_);
    uploads_ = std::make_unique<MultipartUploads>(*objects_);
  }

  std::string Begin(const std::string& key = "big") {
    auto id = uploads_->Create(project_, "data", key, {"text/plain", {{"k", "v"}}});
    EXPECT_TRUE(id.ok()) << id.status().ToString();
    return id.ok() ? *id : "";
  }

  Result<PartInfo> Part(const std::string& id, int number, const std::string& content,
                        PutOptions expected = {}, const std::string& key = "big") {
    TF_ASSIGN_OR_RETURN(auto writer,
                        uploads_->BeginPart(project_, "data", key, id, number, expected));
    for (size_t at = 0; at < content.size(); at += 700'000) {
      TF_RETURN_IF_ERROR(writer->Write(std::string_view(content).substr(at, 700'000)));
    }
    return writer->Commit();
  }

  Result<std::string> Read(const std::string& key) {
    TF_ASSIGN_OR_RETURN(auto reader, objects_->Open(project_, "data", key));
    std::string out;
    for (;;) {
      TF_ASSIGN_OR_RETURN(std::string piece, reader->Next());
      if (piece.empty()) return out;
      out += piece;
    }
  }

  // Blob files on disk (committed ones and unsealed ones alike).
  size_t BlobFiles() {
    size_t n = 0;
    for (const auto& e : fs::recursive_directory_iterator(dir_.path() / "objects")) {
      if (e.is_regular_file() && e.path().filename() != "owner") ++n;
    }
    return n;
  }

  size_t Pending() { return store_->objects().ListPendingBlobs(blobs_->owner())->size(); }

  FakeClock clock_;
  std::unique_ptr<BlobStore> blobs_;
  std::unique_ptr<ObjectService> objects_;
  std::unique_ptr<MultipartUploads> uploads_;
};

TEST_P(MultipartTest, PartsInAnyOrderCompleteIntoOneObjectAndLeaveNoBlob) {
  const std::string id = Begin();
  const std::string a = Content(kMinPartBytes + 123, 1), b = Content(40'000, 2);
  auto pb = Part(id, 2, b);  // the second part first
  auto pa = Part(id, 1, a);
  ASSERT_TRUE(pa.ok() && pb.ok()) << pa.status().ToString() << pb.status().ToString();
  EXPECT_EQ(pa->etag, Md5Hex(a));
  EXPECT_EQ(pa->size, a.size());
  EXPECT_FALSE(objects_->Head(project_, "data", "big").ok());  // nothing visible yet
  EXPECT_EQ(BlobFiles(), 2u);
  EXPECT_EQ(Pending(), 0u);  // stored parts are not for reclaiming

  auto parts = uploads_->ListParts(project_, "data", "big", id);
  ASSERT_TRUE(parts.ok());
  ASSERT_EQ(parts->size(), 2u);
  EXPECT_EQ((*parts)[0].number, 1);

  auto info = uploads_->Complete(project_, "data", "big", id, {{1, pa->etag}, {2, pb->etag}},
                                 "etag-of-parts-2");
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->etag, "etag-of-parts-2");
  EXPECT_EQ(info->sha256, Sha256Hex(a + b));
  EXPECT_EQ(info->content_type, "text/plain");
  EXPECT_EQ(info->metadata.at("k"), "v");
  EXPECT_EQ(*Read("big"), a + b);
  EXPECT_EQ(BlobFiles(), 2u);  // the parts' blobs, which the object is made of, not copied
  EXPECT_EQ(Pending(), 0u);
  EXPECT_EQ(uploads_->ListParts(project_, "data", "big", id).status().code(),
            StatusCode::kNotFound);
  EXPECT_EQ(uploads_->size(), 0u);
}

TEST_P(MultipartTest, CompleteNamingAMissingPartChangesNothingAndCanBeRetried) {
  const std::string id = Begin();
  auto p1 = Part(id, 1, "one");
  ASSERT_TRUE(p1.ok());
  auto bad = uploads_->Complete(project_, "data", "big", id, {{1, p1->etag}, {2, "x"}}, "e-2");
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  auto wrong = uploads_->Complete(project_, "data", "big", id, {{1, Md5Hex("other")}}, "e-1");
  EXPECT_EQ(wrong.status().code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(objects_->Head(project_, "data", "big").ok());
  auto good = uploads_->Complete(project_, "data", "big", id, {{1, p1->etag}}, "e-1");
  ASSERT_TRUE(good.ok()) << good.status().ToString();
  EXPECT_EQ(*Read("big"), "one");
}

TEST_P(MultipartTest, AReuploadedPartReplacesTheFirstAndAbortRemovesEverything) {
  const std::string id = Begin();
  ASSERT_TRUE(Part(id, 1, "first").ok());
  auto again = Part(id, 1, "second");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(BlobFiles(), 1u);
  auto parts = uploads_->ListParts(project_, "data", "big", id);
  ASSERT_EQ(parts->size(), 1u);
  EXPECT_EQ((*parts)[0].etag, Md5Hex("second"));

  ASSERT_TRUE(Part(id, 7, "seventh").ok());
  ASSERT_TRUE(uploads_->Abort(project_, "data", "big", id).ok());
  EXPECT_EQ(BlobFiles(), 0u);
  EXPECT_EQ(Pending(), 0u);
  EXPECT_EQ(uploads_->Abort(project_, "data", "big", id).code(), StatusCode::kNotFound);
  EXPECT_EQ(Part(id, 2, "late").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(BlobFiles(), 0u);
}

TEST_P(MultipartTest, UploadsAreFoundOnlyByTheirProjectBucketAndKey) {
  const std::string id = Begin("k1");
  EXPECT_EQ(Part(id, 1, "x", {}, "k2").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(uploads_->ListParts("prj_other", "data", "k1", id).status().code(),
            StatusCode::kNotFound);
  EXPECT_EQ(uploads_->ListParts(project_, "data", "k1", "no-such-upload").status().code(),
            StatusCode::kNotFound);
  EXPECT_EQ(Part(id, 0, "x", {}, "k1").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Part(id, kMaxPartNumber + 1, "x", {}, "k1").status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(uploads_->Create(project_, "nope", "k", {}).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(uploads_->Create(project_, "data", std::string(2000, 'k'), {}).status().code(),
            StatusCode::kInvalidArgument);
  auto listed = uploads_->ListUploads(project_, "data");
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].key, "k1");
}

TEST_P(MultipartTest, APartWhoseDigestDoesNotMatchIsNotKept) {
  const std::string id = Begin();
  PutOptions expected;
  expected.expected_md5 = Md5Hex("something else");
  EXPECT_EQ(Part(id, 1, "content", expected).status().code(), StatusCode::kInvalidArgument);
  expected = {};
  expected.expected_sha256 = Sha256Hex("something else");
  EXPECT_EQ(Part(id, 1, "content", expected).status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(uploads_->ListParts(project_, "data", "big", id)->empty());
  EXPECT_EQ(BlobFiles(), 0u);
  EXPECT_EQ(Pending(), 0u);
}

TEST_P(MultipartTest, AnUploadAndItsPartsSurviveARestartAndCompleteAfterIt) {
  const std::string id = Begin();
  const std::string a = Content(kMinPartBytes + 10, 3), b = Content(100, 4);
  ASSERT_TRUE(Part(id, 1, Content(100'000, 5)).ok());
  auto pa = Part(id, 1, a);  // replaces the first part 1
  auto pb = Part(id, 2, b);
  ASSERT_TRUE(pa.ok() && pb.ok());
  auto reclaimed = objects_->ReclaimPending();
  ASSERT_TRUE(reclaimed.ok());
  EXPECT_EQ(*reclaimed, 0);
  EXPECT_EQ(BlobFiles(), 2u);

  Reopen();  // the server restarts
  auto recovered = objects_->Recover();
  ASSERT_TRUE(recovered.ok());
  EXPECT_EQ(*recovered, 0);
  EXPECT_EQ(BlobFiles(), 2u);
  auto parts = uploads_->ListParts(project_, "data", "big", id);
  ASSERT_TRUE(parts.ok()) << parts.status().ToString();
  ASSERT_EQ(parts->size(), 2u);
  EXPECT_EQ((*parts)[0].etag, Md5Hex(a));
  EXPECT_EQ((*parts)[0].size, a.size());
  EXPECT_EQ((*parts)[1].etag, Md5Hex(b));
  auto listed = uploads_->ListUploads(project_, "data");
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].upload_id, id);

  // A part written again after the restart replaces the stored one.
  const std::string b2 = Content(200, 6);
  auto again = Part(id, 2, b2);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(BlobFiles(), 2u);
  auto info =
      uploads_->Complete(project_, "data", "big", id, {{1, pa->etag}, {2, again->etag}}, "etag-2");
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->content_type, "text/plain");
  EXPECT_EQ(info->metadata.at("k"), "v");
  EXPECT_EQ(*Read("big"), a + b2);
  EXPECT_EQ(BlobFiles(), 2u);
  EXPECT_EQ(Pending(), 0u);

  Reopen();  // completed uploads stay completed
  EXPECT_EQ(uploads_->ListParts(project_, "data", "big", id).status().code(),
            StatusCode::kNotFound);
}

// Complete's commit forgets the upload in the same transaction that makes the object of its
// parts' blobs. A crash right after it (before the parts left out and the replaced object's blob
// are removed) leaves those pending, for Recover, and the upload cannot be completed again.
// With a checksum algorithm, each part's checksum is kept (checked when sent, computed when
// not), across a restart, and the object's is the checksum of the parts' checksums.
TEST_P(MultipartTest, PartsChecksumsMakeTheObjectsCompositeChecksum) {
  PutOptions options;
  options.checksum_algorithm = ChecksumAlgorithm::kCrc32;
  auto id = uploads_->Create(project_, "data", "summed", options);
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  const std::string a(kMinPartBytes, 'a'), b = "tail";
  auto crc32 = [](std::string_view data) {
    ContentChecksum sum(ChecksumAlgorithm::kCrc32);
    sum.Update(data);
    return sum.Finish();
  };
  PutOptions sent;
  sent.checksum_algorithm = ChecksumAlgorithm::kCrc32;
  sent.expected_checksum = crc32(a);
  auto p1 = Part(*id, 1, a, sent, "summed");
  ASSERT_TRUE(p1.ok()) << p1.status().ToString();
  EXPECT_EQ(p1->checksum, crc32(a));
  PutOptions other;  // another algorithm than the upload's
  other.checksum_algorithm = ChecksumAlgorithm::kSha1;
  EXPECT_EQ(Part(*id, 2, b, other, "summed").status().code(), StatusCode::kInvalidArgument);
  auto p2 = Part(*id, 2, b, {}, "summed");  // computed
  ASSERT_TRUE(p2.ok()) << p2.status().ToString();
  EXPECT_EQ(p2->checksum, crc32(b));

  Reopen();
  auto parts = uploads_->ListParts(project_, "data", "summed", *id);
  ASSERT_TRUE(parts.ok() && parts->size() == 2u);
  EXPECT_EQ((*parts)[1].checksum, crc32(b));
  EXPECT_EQ((*parts)[1].checksum_algorithm, ChecksumAlgorithm::kCrc32);
  auto info =
      uploads_->Complete(project_, "data", "summed", *id, {{1, p1->etag}, {2, p2->etag}}, "e-2");
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->checksum_algorithm, ChecksumAlgorithm::kCrc32);
  EXPECT_EQ(info->checksum, crc32(crc32(a) + crc32(b)));
  EXPECT_EQ(info->checksum_parts, 2);
  auto head = objects_->Head(project_, "data", "summed");
  ASSERT_TRUE(head.ok());
  EXPECT_EQ(head->checksum, info->checksum);
  EXPECT_EQ(head->checksum_parts, 2);
}

// FULL_OBJECT: the object's checksum is the CRC of its whole content, combined from the parts'
// CRCs at Complete (content not read for it), and the upload keeps its type across a restart.
TEST_P(MultipartTest, PartsCrcsMakeTheObjectsFullObjectChecksum) {
  PutOptions options;
  options.checksum_algorithm = ChecksumAlgorithm::kCrc64Nvme;
  options.checksum_type = ChecksumType::kFullObject;
  auto id = uploads_->Create(project_, "data", "whole", options);
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  const std::string a = Content(kMinPartBytes + 3, 4), b = Content(kMinPartBytes, 5), c = "end";
  auto crc64 = [](std::string_view data) {
    ContentChecksum sum(ChecksumAlgorithm::kCrc64Nvme);
    sum.Update(data);
    return sum.Finish();
  };
  auto p1 = Part(*id, 1, a, {}, "whole");
  auto p2 = Part(*id, 2, b, {}, "whole");
  auto p3 = Part(*id, 3, c, {}, "whole");
  ASSERT_TRUE(p1.ok() && p2.ok() && p3.ok());
  EXPECT_EQ(p2->checksum, crc64(b));

  Reopen();
  auto upload = uploads_->Get(project_, "data", "whole", *id);
  ASSERT_TRUE(upload.ok()) << upload.status().ToString();
  EXPECT_EQ(upload->checksum_algorithm, ChecksumAlgorithm::kCrc64Nvme);
  EXPECT_EQ(upload->checksum_type, ChecksumType::kFullObject);
  // Parts 1 and 3: the object is what they hold, in that order.
  auto info =
      uploads_->Complete(project_, "data", "whole", *id, {{1, p1->etag}, {3, p3->etag}}, "e-2");
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->checksum_algorithm, ChecksumAlgorithm::kCrc64Nvme);
  EXPECT_EQ(HexEncode(info->checksum), HexEncode(crc64(a + c)));
  EXPECT_EQ(info->checksum_parts, 0);
  auto head = objects_->Head(project_, "data", "whole");
  ASSERT_TRUE(head.ok());
  EXPECT_EQ(head->checksum, crc64(a + c));
  EXPECT_EQ(head->checksum_parts, 0);
  // The object keeps its parts' sizes and checksums (GetObjectAttributes, GET by partNumber).
  ASSERT_EQ(head->parts.size(), 2u);
  EXPECT_EQ(head->parts[0].size, a.size());
  EXPECT_EQ(head->parts[0].checksum, crc64(a));
  EXPECT_EQ(head->parts[1].size, c.size());
  EXPECT_EQ(head->parts[1].checksum, crc64(c));
}

TEST_P(MultipartTest, AFullObjectChecksumNeedsACrc) {
  PutOptions options;
  options.checksum_algorithm = ChecksumAlgorithm::kSha256;
  options.checksum_type = ChecksumType::kFullObject;
  auto sha = uploads_->Create(project_, "data", "k", options);
  EXPECT_EQ(sha.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(sha.status().message().find("not sha256"), std::string::npos)
      << sha.status().ToString();
  options.checksum_algorithm = ChecksumAlgorithm::kNone;
  EXPECT_EQ(uploads_->Create(project_, "data", "k", options).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(uploads_->size(), 0u);
}

TEST_P(MultipartTest, ACrashAfterCompletesCommitLeavesNoUploadToCompleteAgain) {
  auto old = objects_->BeginPut(project_, "data", "big", {});
  ASSERT_TRUE(old.ok());
  ASSERT_TRUE((*old)->Write("the object replaced").ok());
  ASSERT_TRUE((*old)->Commit().ok());
  old->reset();
  const std::string id = Begin();
  const std::string a = Content(kMinPartBytes + 1, 7), b = Content(300, 8);
  auto pa = Part(id, 1, a);
  auto pb = Part(id, 2, b);
  ASSERT_TRUE(pa.ok() && pb.ok());
  ASSERT_TRUE(Part(id, 3, "left out").ok());
  EXPECT_EQ(BlobFiles(), 4u);
  // What Complete does up to its commit, and no further: the server dies there.
  auto stored = store_->objects().ListMultipartUploads(blobs_->owner());
  ASSERT_TRUE(stored.ok() && stored->size() == 1u);
  const std::vector<store::MultipartPartRecord>& parts = (*stored)[0].parts;
  auto bucket = store_->objects().GetBucket(project_, "data");
  ASSERT_TRUE(bucket.ok());
  store::ObjectRecord record{bucket->id,
                             "big",
                             static_cast<int64_t>(a.size() + b.size()),
                             "etag-2",
                             Sha256Hex(a + b),
                             "text/plain",
                             "{}",
                             "",
                             clock_.Now(),
                             {}};
  record.segments = {{parts[0].blob_id, parts[0].size}, {parts[1].blob_id, parts[1].size}};
  auto replaced = store_->objects().PutObjectCompletingUpload(record, blobs_->owner(), id);
  ASSERT_TRUE(replaced.ok()) << replaced.status().ToString();
  EXPECT_EQ(replaced->size(), 1u);
  EXPECT_EQ(BlobFiles(), 4u);  // the object's two, part 3's and the replaced object's
  EXPECT_EQ(Pending(), 2u);

  Reopen();  // the restart
  auto recovered = objects_->Recover();
  ASSERT_TRUE(recovered.ok());
  EXPECT_EQ(*recovered, 2);
  EXPECT_EQ(BlobFiles(), 2u);
  EXPECT_EQ(Pending(), 0u);
  EXPECT_EQ(*Read("big"), a + b);
  EXPECT_EQ(uploads_->ListParts(project_, "data", "big", id).status().code(),
            StatusCode::kNotFound);
  auto again =
      uploads_->Complete(project_, "data", "big", id, {{1, pa->etag}, {2, pb->etag}}, "etag-2");
  EXPECT_EQ(again.status().code(), StatusCode::kNotFound) << again.status().ToString();
  EXPECT_EQ(BlobFiles(), 2u);
  EXPECT_EQ(*Read("big"), a + b);
}

// A crash while Complete reads the parts back (before its commit) changes nothing: after the
// restart the upload is there with its parts and completes.
TEST_P(MultipartTest, ACrashBeforeCompletesCommitLeavesTheUploadToComplete) {
  const std::string id = Begin();
  const std::string a = Content(kMinPartBytes + 5, 10), b = Content(70, 11);
  auto pa = Part(id, 1, a);
  auto pb = Part(id, 2, b);
  ASSERT_TRUE(pa.ok() && pb.ok());
  Reopen();  // the restart, with Complete cut short before its commit
  ASSERT_TRUE(objects_->Recover().ok());
  EXPECT_EQ(BlobFiles(), 2u);
  auto info =
      uploads_->Complete(project_, "data", "big", id, {{1, pa->etag}, {2, pb->etag}}, "etag-2");
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->sha256, Sha256Hex(a + b));
  EXPECT_EQ(*Read("big"), a + b);
}

// Two completions of one upload: the first makes the object, the second finds no upload and
// changes nothing.
TEST_P(MultipartTest, AnUploadIsCompletedOnce) {
  const std::string id = Begin();
  auto pa = Part(id, 1, Content(1000, 9));
  ASSERT_TRUE(pa.ok());
  ASSERT_TRUE(uploads_->Complete(project_, "data", "big", id, {{1, pa->etag}}, "e-1").ok());
  auto second = uploads_->Complete(project_, "data", "big", id, {{1, pa->etag}}, "e-1");
  EXPECT_EQ(second.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(*Read("big"), Content(1000, 9));
  EXPECT_EQ(BlobFiles(), 1u);
  EXPECT_EQ(Pending(), 0u);
}

TEST_P(MultipartTest, AnAbortedUploadIsGoneAfterARestart) {
  const std::string id = Begin();
  ASSERT_TRUE(Part(id, 1, "one").ok());
  ASSERT_TRUE(uploads_->Abort(project_, "data", "big", id).ok());
  Reopen();
  ASSERT_TRUE(objects_->Recover().ok());
  EXPECT_EQ(uploads_->ListParts(project_, "data", "big", id).status().code(),
            StatusCode::kNotFound);
  EXPECT_TRUE(uploads_->ListUploads(project_, "data")->empty());
  EXPECT_EQ(BlobFiles(), 0u);
  EXPECT_EQ(Pending(), 0u);
}

TEST_P(MultipartTest, AnUploadLeftIdleForAWeekIsAbortedWhenAnotherBegins) {
  const std::string old_id = Begin("old");
  ASSERT_TRUE(Part(old_id, 1, "stale", {}, "old").ok());
  clock_.Advance(kIdleUploadMs + kSecondMs);
  const std::string new_id = Begin("new");
  EXPECT_EQ(uploads_->ListParts(project_, "data", "old", old_id).status().code(),
            StatusCode::kNotFound);
  EXPECT_TRUE(uploads_->ListParts(project_, "data", "new", new_id).ok());
  EXPECT_EQ(BlobFiles(), 0u);
}

INSTANTIATE_TEST_SUITE_P(Backends, MultipartTest, ::testing::ValuesIn(StoreBackends()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace tf::objects
