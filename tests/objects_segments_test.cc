// Objects made of their multipart upload's parts (objects/segmented_reader.h) over a real store
// (SQLite, and PostgreSQL when the test command starts one) and a local blob directory: they
// read back byte for byte, whole and by ranges across the parts' boundaries, through both
// reading paths (pieces, and checked spans of files as a GET sends them); copies, deletes and
// replacements reclaim every part's blob; damage in one part is reported naming its blob; and a
// reader keeps reading an object replaced underneath it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "base/crypto.h"
#include "object_content.h"
#include "objects/blob_format.h"
#include "objects/multipart.h"
#include "store_test_env.h"
#include "store_test_fixture.h"

namespace tf::objects {
namespace {

namespace fs = std::filesystem;
using tf::testing::Content;
using tf::testing::StoreBackends;

class SegmentsTest : public tf::testing::StoreTest {
 protected:
  void SetUp() override {
    StoreTest::SetUp();
    if (HasFatalFailure() || IsSkipped()) return;
    auto blobs = OpenLocalBlobStore(dir_.path() / "objects");
    ASSERT_TRUE(blobs.ok()) << blobs.status().ToString();
    blobs_ = std::move(blobs).value();
    objects_ = std::make_unique<ObjectService>(*store_, *blobs_, clock_);
    uploads_ = std::make_unique<MultipartUploads>(*objects_);
    ASSERT_TRUE(objects_->CreateBucket(project_, "data").ok());
  }

  // Uploads `parts` (numbered from 1) as one multipart upload of `key` and completes it.
  Result<ObjectInfo> PutMultipart(const std::string& key, const std::vector<std::string>& parts) {
    TF_ASSIGN_OR_RETURN(std::string id, uploads_->Create(project_, "data", key, {}));
    std::vector<std::pair<int, std::string>> named;
    for (size_t i = 0; i < parts.size(); ++i) {
      const int number = static_cast<int>(i) + 1;
      TF_ASSIGN_OR_RETURN(auto writer, uploads_->BeginPart(project_, "data", key, id, number, {}));
      TF_RETURN_IF_ERROR(writer->Write(parts[i]));
      TF_ASSIGN_OR_RETURN(PartInfo info, writer->Commit());
      named.emplace_back(number, info.etag);
    }
    return uploads_->Complete(project_, "data", key, id, named,
                              "etag-" + std::to_string(parts.size()));
  }

  Status PutPlain(const std::string& key, const std::string& content) {
    TF_ASSIGN_OR_RETURN(auto upload, objects_->BeginPut(project_, "data", key, {}));
    TF_RETURN_IF_ERROR(upload->Write(content));
    return upload->Commit().status();
  }

  // Bytes [first, last] of `key` read piece by piece (as a copy or a plain GET reads them).
  Result<std::string> ReadRange(const std::string& key, uint64_t first, uint64_t last) {
    TF_ASSIGN_OR_RETURN(auto reader, objects_->Open(project_, "data", key));
    TF_RETURN_IF_ERROR(reader->SetRange(first, last));
    std::string out;
    for (;;) {
      TF_ASSIGN_OR_RETURN(std::string piece, reader->Next());
      if (piece.empty()) return out;
      out += piece;
    }
  }

  // Bytes [first, last] of `key` as a GET sends them: checked spans, each read from its file.
  Result<std::string> SendRange(const std::string& key, uint64_t first, uint64_t last,
                                uint64_t max_piece) {
    TF_ASSIGN_OR_RETURN(auto reader, objects_->Open(project_, "data", key));
    if (!reader->sends_from_files()) return Internal("the object is not in files");
    TF_RETURN_IF_ERROR(reader->SetRange(first, last));
    std::string out;
    for (;;) {
      TF_ASSIGN_OR_RETURN(ObjectReader::Span span, reader->NextChecked(max_piece));
      if (span.length == 0) return out;
      if (span.offset != first + out.size()) return Internal("a span out of order");
      std::string piece(span.length, '\0');
      ssize_t n =
          ::pread(span.fd, piece.data(), piece.size(), static_cast<off_t>(span.file_offset));
      if (n != static_cast<ssize_t>(piece.size())) return Internal("a short read of a span");
      out += piece;
    }
  }

  // Blob files on disk.
  size_t BlobFiles() {
    size_t n = 0;
    for (const auto& e : fs::recursive_directory_iterator(dir_.path() / "objects")) {
      if (e.is_regular_file() && e.path().filename() != "owner") ++n;
    }
    return n;
  }

  fs::path BlobPath(const std::string& id) {
    return dir_.path() / "objects" / id.substr(0, 2) / id.substr(2, 2) / id;
  }

  size_t Pending() { return store_->objects().ListPendingBlobs(blobs_->owner())->size(); }

  std::vector<store::BlobSegment> Segments(const std::string& key) {
    auto bucket = store_->objects().GetBucket(project_, "data");
    auto record = store_->objects().GetObject(bucket->id, key);
    EXPECT_TRUE(record.ok()) << record.status().ToString();
    return record.ok() ? record->segments : std::vector<store::BlobSegment>{};
  }

  FakeClock clock_;
  std::unique_ptr<BlobStore> blobs_;
  std::unique_ptr<ObjectService> objects_;
  std::unique_ptr<MultipartUploads> uploads_;
};

TEST_P(SegmentsTest, AMultipartObjectReadsBackWholeAndByRangesAcrossItsParts) {
  // Parts whose boundaries fall inside blocks of the content, and a short last part.
  const std::vector<std::string> parts = {Content(kMinPartBytes + 123, 1),
                                          Content(kMinPartBytes + kBlockBytes - 7, 2),
                                          Content(1000, 3)};
  const std::string all = parts[0] + parts[1] + parts[2];
  auto info = PutMultipart("big", parts);
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->size, all.size());
  EXPECT_EQ(info->sha256, Sha256Hex(all));
  EXPECT_EQ(Segments("big").size(), 3u);
  auto head = objects_->Head(project_, "data", "big");
  ASSERT_TRUE(head.ok());
  EXPECT_EQ(head->size, all.size());
  EXPECT_EQ(head->sha256, Sha256Hex(all));

  const uint64_t n = all.size(), b1 = parts[0].size(), b2 = b1 + parts[1].size();
  std::vector<std::pair<uint64_t, uint64_t>> ranges = {
      {0, n - 1}, {n - 1, n - 1}, {0, 0}, {1, n - 2}, {kBlockBytes - 1, kBlockBytes}};
  for (uint64_t b : {b1, b2}) {
    ranges.insert(ranges.end(), {{b - 1, b - 1},
                                 {b, b},
                                 {b - 1, b},
                                 {b - 3000, b + 3000},
                                 {0, b - 1},
                                 {b, n - 1},
                                 {b - kBlockBytes, b + kBlockBytes}});
  }
  ranges.push_back({b1 - 10, b2 + 10});  // all of the middle part and a little on either side
  for (auto [first, last] : ranges) {
    last = std::min(last, n - 1);  // the last part is shorter than the spans around boundaries
    SCOPED_TRACE("bytes " + std::to_string(first) + "-" + std::to_string(last));
    const std::string want = all.substr(first, last - first + 1);
    auto read = ReadRange("big", first, last);
    ASSERT_TRUE(read.ok()) << read.status().ToString();
    EXPECT_TRUE(*read == want);
    for (uint64_t max : {uint64_t{8} << 20, uint64_t{300'000}}) {
      auto sent = SendRange("big", first, last, max);
      ASSERT_TRUE(sent.ok()) << sent.status().ToString();
      EXPECT_TRUE(*sent == want) << "pieces of at most " << max;
    }
  }
}

TEST_P(SegmentsTest, ACopyOfAMultipartObjectHasItsContentAndDigest) {
  const std::vector<std::string> parts = {Content(kMinPartBytes + 1, 4), Content(5000, 5)};
  auto source = PutMultipart("src", parts);
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  // As CopyObject does: read the source piece by piece into a new object.
  auto reader = objects_->Open(project_, "data", "src");
  ASSERT_TRUE(reader.ok());
  auto copy = objects_->BeginPut(project_, "data", "copy", {});
  ASSERT_TRUE(copy.ok());
  for (;;) {
    auto piece = (*reader)->Next();
    ASSERT_TRUE(piece.ok()) << piece.status().ToString();
    if (piece->empty()) break;
    ASSERT_TRUE((*copy)->Write(*piece).ok());
  }
  auto made = (*copy)->Commit();
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  EXPECT_EQ(made->sha256, source->sha256);
  EXPECT_EQ(*ReadRange("copy", 0, made->size - 1), parts[0] + parts[1]);
}

TEST_P(SegmentsTest, DeletingOrReplacingAMultipartObjectReclaimsEveryPart) {
  ASSERT_TRUE(
      PutMultipart("k", {Content(kMinPartBytes, 6), Content(kMinPartBytes, 7), Content(10, 8)})
          .ok());
  EXPECT_EQ(BlobFiles(), 3u);
  ASSERT_TRUE(PutPlain("k", "one blob").ok());  // replaces the three parts
  EXPECT_EQ(BlobFiles(), 1u);
  EXPECT_EQ(Pending(), 0u);
  ASSERT_TRUE(PutMultipart("k", {Content(kMinPartBytes, 9), Content(20, 10)}).ok());
  EXPECT_EQ(BlobFiles(), 2u);
  ASSERT_TRUE(PutMultipart("k", {Content(kMinPartBytes, 11), Content(30, 12)}).ok());
  EXPECT_EQ(BlobFiles(), 2u);  // a multipart object replacing one
  EXPECT_EQ(*ReadRange("k", 0, kMinPartBytes + 29), Content(kMinPartBytes, 11) + Content(30, 12));
  ASSERT_TRUE(objects_->Delete(project_, "data", "k").ok());
  EXPECT_EQ(BlobFiles(), 0u);
  EXPECT_EQ(Pending(), 0u);
}

TEST_P(SegmentsTest, ADamagedByteInOnePartIsReportedNamingItsBlob) {
  const std::vector<std::string> parts = {Content(kMinPartBytes + 5, 13),
                                          Content(kMinPartBytes + 6, 14)};
  ASSERT_TRUE(PutMultipart("k", parts).ok());
  const std::string damaged = Segments("k").at(1).blob_id;
  {
    std::fstream f(BlobPath(damaged), std::ios::in | std::ios::out | std::ios::binary);
    ASSERT_TRUE(f.good());
    f.seekp(3 * kBlockBytes + 17);  // in the second part's fourth block
    f.put(static_cast<char>(parts[1][3 * kBlockBytes + 17] ^ 0x01));
  }
  const uint64_t b = parts[0].size();
  // The first part, and the second's blocks before the damage, read as they are.
  EXPECT_TRUE(*ReadRange("k", 0, b + 2 * kBlockBytes) ==
              (parts[0] + parts[1]).substr(0, b + 2 * kBlockBytes + 1));
  for (bool send : {false, true}) {
    auto read = send ? SendRange("k", 0, b + parts[1].size() - 1, 8 << 20)
                     : ReadRange("k", 0, b + parts[1].size() - 1);
    ASSERT_FALSE(read.ok());
    EXPECT_EQ(read.status().code(), StatusCode::kInternal);
    EXPECT_NE(read.status().message().find(damaged), std::string::npos) << read.status().message();
  }
}

TEST_P(SegmentsTest, CompletingWithADamagedPartFailsAndKeepsTheUpload) {
  auto id = uploads_->Create(project_, "data", "k", {});
  ASSERT_TRUE(id.ok());
  const std::string content = Content(kMinPartBytes, 15);
  auto writer = uploads_->BeginPart(project_, "data", "k", *id, 1, {});
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE((*writer)->Write(content).ok());
  auto part = (*writer)->Commit();
  ASSERT_TRUE(part.ok());
  writer->reset();
  auto stored = store_->objects().ListMultipartUploads(blobs_->owner());
  ASSERT_TRUE(stored.ok() && stored->size() == 1u);
  const std::string blob = (*stored)[0].parts.at(0).blob_id;
  {
    std::fstream f(BlobPath(blob), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(100);
    f.put(static_cast<char>(content[100] ^ 0x40));
  }
  auto made = uploads_->Complete(project_, "data", "k", *id, {{1, part->etag}}, "e-1");
  ASSERT_FALSE(made.ok());
  EXPECT_EQ(made.status().code(), StatusCode::kInternal);
  EXPECT_NE(made.status().message().find(blob), std::string::npos) << made.status().message();
  EXPECT_EQ(objects_->Head(project_, "data", "k").status().code(), StatusCode::kNotFound);
  ASSERT_TRUE(uploads_->Abort(project_, "data", "k", *id).ok());  // the upload is still there
  EXPECT_EQ(BlobFiles(), 0u);
}

// A reader opens the parts' blobs as it reaches them; an object replaced or deleted meanwhile
// leaves them to it, and they are reclaimed once it is gone.
TEST_P(SegmentsTest, AReaderKeepsReadingAnObjectReplacedUnderneathIt) {
  const std::vector<std::string> parts = {Content(kMinPartBytes, 16), Content(kMinPartBytes, 17),
                                          Content(kMinPartBytes, 18)};
  ASSERT_TRUE(PutMultipart("k", parts).ok());
  auto reader = objects_->Open(project_, "data", "k");
  ASSERT_TRUE(reader.ok());
  std::string got = *(*reader)->Next();
  ASSERT_TRUE(PutPlain("k", "new").ok());
  EXPECT_EQ(BlobFiles(), 4u);  // the old parts stay while the reader lives
  auto reclaimed = objects_->ReclaimPending();
  ASSERT_TRUE(reclaimed.ok());
  EXPECT_EQ(*reclaimed, 0);
  for (;;) {
    auto piece = (*reader)->Next();
    ASSERT_TRUE(piece.ok()) << piece.status().ToString();
    if (piece->empty()) break;
    got += *piece;
  }
  EXPECT_TRUE(got == parts[0] + parts[1] + parts[2]);
  reader->reset();
  reclaimed = objects_->ReclaimPending();
  ASSERT_TRUE(reclaimed.ok());
  EXPECT_EQ(*reclaimed, 3);
  EXPECT_EQ(BlobFiles(), 1u);
  EXPECT_EQ(*ReadRange("k", 0, 2), "new");
}

INSTANTIATE_TEST_SUITE_P(Backends, SegmentsTest, ::testing::ValuesIn(StoreBackends()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace tf::objects
