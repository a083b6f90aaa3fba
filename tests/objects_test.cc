// The object service over a real store (SQLite, and PostgreSQL when the test command starts one)
// and a local blob directory: round trips, replacement, path-like keys, corruption, crash
// leftovers and their recovery.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>

#include "base/crypto.h"
#include "object_content.h"
#include "objects/blob_format.h"
#include "objects/object_service.h"
#include "store_test_env.h"
#include "store_test_fixture.h"

namespace tf::objects {
namespace {

namespace fs = std::filesystem;
using tf::testing::Content;
using tf::testing::StoreBackends;

// Every regular file under `dir`, relative to it.
std::set<std::string> FilesUnder(const fs::path& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) out.insert(fs::relative(e.path(), dir).string());
  }
  return out;
}

class ObjectServiceTest : public tf::testing::StoreTest {
 protected:
  void SetUp() override {
    StoreTest::SetUp();
    if (HasFatalFailure() || IsSkipped()) return;
    Reopen();
    ASSERT_TRUE(service_->CreateBucket(project_, "data").ok());
  }

  // A fresh blob store and service over the same directory, as after a restart.
  void Reopen() {
    service_.reset();
    auto blobs = OpenLocalBlobStore(blob_dir());
    ASSERT_TRUE(blobs.ok()) << blobs.status().ToString();
    blobs_ = std::move(blobs).value();
    service_ = std::make_unique<ObjectService>(*store_, *blobs_, clock_);
  }

  fs::path blob_dir() const { return dir_.path() / "objects"; }

  Result<ObjectInfo> Put(const std::string& key, const std::string& content,
                         PutOptions options = {}) {
    TF_ASSIGN_OR_RETURN(auto upload, service_->BeginPut(project_, "data", key, std::move(options)));
    for (size_t at = 0; at < content.size(); at += 300'000) {
      TF_RETURN_IF_ERROR(upload->Write(std::string_view(content).substr(at, 300'000)));
    }
    return upload->Commit();
  }

  Result<std::string> ReadAll(ObjectReader& reader) {
    std::string out;
    for (;;) {
      TF_ASSIGN_OR_RETURN(std::string piece, reader.Next());
      if (piece.empty()) return out;
      out += piece;
    }
  }

  Result<std::string> Get(const std::string& key) {
    TF_ASSIGN_OR_RETURN(auto reader, service_->Open(project_, "data", key));
    return ReadAll(*reader);
  }

  // The blob files of committed objects (fan-out paths), without tmp/ and the owner file.
  std::set<std::string> BlobFiles() {
    std::set<std::string> out;
    for (const auto& f : FilesUnder(blob_dir())) {
      if (f != "owner") out.insert(f);
    }
    return out;
  }

  FakeClock clock_;
  std::unique_ptr<BlobStore> blobs_;
  std::unique_ptr<ObjectService> service_;
};

TEST_P(ObjectServiceTest, RoundTripAcrossBlocksWithDigestsAndMetadata) {
  std::string content = Content(3 * kBlockBytes + 12345, 1);
  PutOptions options;
  options.content_type = "application/x-tar";
  options.metadata = {{"run", "42"}};
  auto put = Put("checkpoints/step-100.tar", content, options);
  ASSERT_TRUE(put.ok()) << put.status().ToString();
  EXPECT_EQ(put->size, content.size());
  EXPECT_EQ(put->etag, Md5Hex(content));
  EXPECT_EQ(put->sha256, Sha256Hex(content));

  auto head = service_->Head(project_, "data", "checkpoints/step-100.tar");
  ASSERT_TRUE(head.ok()) << head.status().ToString();
  EXPECT_EQ(head->content_type, "application/x-tar");
  EXPECT_EQ(head->metadata.at("run"), "42");
  EXPECT_EQ(*Get("checkpoints/step-100.tar"), content);

  auto reader = service_->Open(project_, "data", "checkpoints/step-100.tar");
  ASSERT_TRUE(reader.ok());
  ASSERT_TRUE((*reader)->SetRange(kBlockBytes - 10, 2 * kBlockBytes + 9).ok());
  EXPECT_EQ(*ReadAll(**reader), content.substr(kBlockBytes - 10, kBlockBytes + 20));
  EXPECT_FALSE((*reader)->SetRange(5, content.size()).ok());

  auto empty = Put("empty", "");
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->etag, Md5Hex(""));
  EXPECT_EQ(*Get("empty"), "");
}

TEST_P(ObjectServiceTest, CopiesCarryContentTypeAndMetadataUpToTheirLimit) {
  const std::string content = Content(2 * kBlockBytes + 5, 3);
  PutOptions options;
  options.content_type = "application/x-model";
  options.metadata = {{"step", "100"}};
  ASSERT_TRUE(Put("src", content, options).ok());
  auto copied = service_->Copy(project_, "data", "src", "data", "copies/dst");
  ASSERT_TRUE(copied.ok()) << copied.status().ToString();
  EXPECT_EQ(copied->sha256, Sha256Hex(content));
  auto got = Get("copies/dst");
  ASSERT_TRUE(got.ok());
  EXPECT_TRUE(*got == content);
  auto head = service_->Head(project_, "data", "copies/dst");
  ASSERT_TRUE(head.ok());
  EXPECT_EQ(head->content_type, "application/x-model");
  EXPECT_EQ(head->metadata, options.metadata);
  // Over the limit: refused before anything is written.
  ObjectService limited(*store_, *blobs_, clock_, {.max_copy_bytes = content.size() - 1});
  EXPECT_EQ(limited.max_copy_bytes(), content.size() - 1);
  auto too_big = limited.Copy(project_, "data", "src", "data", "big");
  EXPECT_EQ(too_big.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(too_big.status().message().find("takes objects of up to"), std::string::npos);
  EXPECT_EQ(service_->Head(project_, "data", "big").status().code(), StatusCode::kNotFound);
  ObjectService at_limit(*store_, *blobs_, clock_, {.max_copy_bytes = content.size()});
  EXPECT_TRUE(at_limit.Copy(project_, "data", "src", "data", "at-the-limit").ok());
  EXPECT_EQ(service_->Copy(project_, "data", "nope", "data", "x").status().code(),
            StatusCode::kNotFound);
  EXPECT_EQ(service_->Copy(project_, "data", "src", "nobucket", "x").status().code(),
            StatusCode::kNotFound);
}

// A source whose blocks all pass their CRCs yet whose content is not what its metadata recorded
// (here: another object's blob file put in its place) is reported damaged, and the copy commits
// nothing: no object, no blob file, no pending blob.
TEST_P(ObjectServiceTest, ACopyOfContentThatDoesNotHashAsRecordedCommitsNothing) {
  const std::string content = Content(kBlockBytes + 17, 5), other = Content(kBlockBytes + 17, 6);
  ASSERT_TRUE(Put("src", content).ok());
  const auto src_files = BlobFiles();
  ASSERT_TRUE(Put("other", other).ok());
  auto files = BlobFiles();
  ASSERT_EQ(src_files.size(), 1u);
  ASSERT_EQ(files.size(), 2u);
  files.erase(*src_files.begin());
  fs::copy_file(blob_dir() / *files.begin(), blob_dir() / *src_files.begin(),
                fs::copy_options::overwrite_existing);
  const auto before = BlobFiles();
  // The copy fails as kInternal saying `why`, leaving no object, blob file or pending blob.
  auto expect_refused = [&](const std::string& why) {
    auto copied = service_->Copy(project_, "data", "src", "data", "dst");
    ASSERT_FALSE(copied.ok());
    EXPECT_EQ(copied.status().code(), StatusCode::kInternal);
    EXPECT_NE(copied.status().message().find(why), std::string::npos) << copied.status().ToString();
    EXPECT_EQ(service_->Head(project_, "data", "dst").status().code(), StatusCode::kNotFound);
    EXPECT_EQ(BlobFiles(), before);
    EXPECT_TRUE(store_->objects().ListPendingBlobs(blobs_->owner())->empty());
  };
  expect_refused("data/src is damaged");

  // A block that fails its CRC stops the copy the same way, before anything commits.
  {
    std::fstream f(blob_dir() / *src_files.begin(),
                   std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(10);
    f.put(static_cast<char>(other[10] ^ 0x01));
  }
  expect_refused("block 0");
}

TEST_P(ObjectServiceTest, PathLikeKeysRoundTripAndTouchNothingOutsideTheBlobDirectory) {
  const std::vector<std::string> keys = {"..",  "../../escape", "/etc/passwd",         "a/../../b",
                                         "./x", "dir/",         std::string(1024, 'k')};
  for (size_t i = 0; i < keys.size(); ++i) {
    ASSERT_TRUE(Put(keys[i], "content " + std::to_string(i)).ok()) << keys[i];
  }
  for (size_t i = 0; i < keys.size(); ++i) EXPECT_EQ(*Get(keys[i]), "content " + std::to_string(i));
  // Only the database and blob files named by random ids exist, and nothing beside the test's
  // directory was created.
  for (const auto& f : FilesUnder(dir_.path())) {
    if (f.rfind("tensorfleet.db", 0) == 0 || f == "objects/owner") continue;
    fs::path p(f);
    ASSERT_EQ(p.begin()->string(), "objects") << f;
    EXPECT_EQ(p.filename().string().size(), 32u) << f;
  }
  EXPECT_FALSE(fs::exists(dir_.path().parent_path() / "escape"));
  EXPECT_FALSE(fs::exists(dir_.path() / "b"));
  EXPECT_EQ(BlobFiles().size(), keys.size());
  EXPECT_EQ(Put(std::string(1025, 'k'), "x").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Put(std::string("a\0b", 3), "x").status().code(), StatusCode::kInvalidArgument);
}

TEST_P(ObjectServiceTest, ReplacementIsAtomicAndFreesTheOldContent) {
  std::string first = Content(size_t{2} * kBlockBytes, 1), second = Content(kBlockBytes + 7, 2);
  ASSERT_TRUE(Put("model.bin", first).ok());
  auto before = BlobFiles();
  auto old_reader = service_->Open(project_, "data", "model.bin");
  ASSERT_TRUE(old_reader.ok());

  // While the second version is written, readers see the first, whole.
  auto upload = service_->BeginPut(project_, "data", "model.bin", {});
  ASSERT_TRUE(upload.ok());
  ASSERT_TRUE((*upload)->Write(second).ok());
  EXPECT_EQ(*Get("model.bin"), first);
  ASSERT_TRUE((*upload)->Commit().ok());
  EXPECT_EQ(*Get("model.bin"), second);
  // The old file is gone, yet a reader that opened it reads it to the end.
  auto after = BlobFiles();
  EXPECT_EQ(after.size(), 1u);
  EXPECT_NE(after, before);
  EXPECT_EQ(*ReadAll(**old_reader), first);
  EXPECT_TRUE(store_->objects().ListPendingBlobs(blobs_->owner())->empty());
}

TEST_P(ObjectServiceTest, AbortedAndMismatchedUploadsLeaveNothing) {
  {
    auto upload = service_->BeginPut(project_, "data", "partial", {});
    ASSERT_TRUE(upload.ok());
    ASSERT_TRUE((*upload)->Write(Content(kBlockBytes, 3)).ok());
    EXPECT_EQ(FilesUnder(blob_dir() / "tmp").size(), 1u);
  }  // dropped without Commit
  PutOptions wrong;
  wrong.expected_sha256 = Sha256Hex("something else");
  EXPECT_EQ(Put("mismatch", "content", wrong).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(service_->Head(project_, "data", "partial").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(service_->Head(project_, "data", "mismatch").status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(BlobFiles().empty());
  EXPECT_TRUE(store_->objects().ListPendingBlobs(blobs_->owner())->empty());
}

TEST_P(ObjectServiceTest, CorruptContentIsAnErrorNeverWrongBytes) {
  std::string content = Content(size_t{3} * kBlockBytes, 4);
  ASSERT_TRUE(Put("weights", content).ok());
  auto files = BlobFiles();
  ASSERT_EQ(files.size(), 1u);
  {
    std::fstream f(blob_dir() / *files.begin(), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(2 * kBlockBytes + 100);  // in the third block
    f.put(static_cast<char>(content[2 * kBlockBytes + 100] ^ 0x20));
  }
  auto reader = service_->Open(project_, "data", "weights");
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  EXPECT_EQ((*reader)->Next()->size(), kBlockBytes);  // blocks before the damage are fine
  EXPECT_EQ((*reader)->Next()->size(), kBlockBytes);
  auto bad = (*reader)->Next();
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInternal);
  EXPECT_NE(bad.status().message().find("block 2"), std::string::npos) << bad.status().message();
  EXPECT_TRUE(service_->Head(project_, "data", "weights").ok());  // metadata is intact
}

// Something other than the server shortens a blob file while it is open for reading: the next
// check is an error naming the blob, never a crash (the check maps the file).
TEST_P(ObjectServiceTest, ABlobCutShortWhileOpenIsAnErrorNotACrash) {
  ASSERT_TRUE(Put("weights", Content(size_t{3} * kBlockBytes, 5)).ok());
  auto files = BlobFiles();
  ASSERT_EQ(files.size(), 1u);
  const fs::path file = blob_dir() / *files.begin();
  auto reader = blobs_->Open(file.filename().string());
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  EXPECT_TRUE((*reader)->Check(0, kBlockBytes).ok());
  fs::resize_file(file, kBlockBytes + 10);  // inside the second block
  Status cut = (*reader)->Check(kBlockBytes, kBlockBytes);
  EXPECT_EQ(cut.code(), StatusCode::kInternal) << cut.ToString();
  EXPECT_NE(cut.message().find(file.filename().string()), std::string::npos) << cut.ToString();
  std::string out;
  EXPECT_FALSE((*reader)->ReadAt(kBlockBytes, 100, &out).ok());
}

TEST_P(ObjectServiceTest, AlignedWholeBlocksAndOddPiecesMixInOneBlob) {
  // Page-aligned whole blocks are written from the caller's memory, anything else is gathered
  // first: a blob appended both ways, in an order that moves between them, reads back whole.
  const std::string content = Content(9 * kBlockBytes + 11, 3);
  // aligned_alloc takes a size that is a whole number of its alignment.
  const size_t aligned_size = (content.size() + 4095) / 4096 * 4096;
  std::unique_ptr<char, decltype(&std::free)> aligned(
      static_cast<char*>(std::aligned_alloc(4096, aligned_size)), &std::free);
  ASSERT_NE(aligned, nullptr);
  std::memcpy(aligned.get(), content.data(), content.size());
  // Written straight, straight then gathered, gathered until the 4 MiB buffer is full and
  // empty again, straight again, and a short tail.
  const std::vector<size_t> cuts = {size_t{2} * kBlockBytes,     kBlockBytes + 7,
                                    size_t{3} * kBlockBytes - 7, kBlockBytes,
                                    size_t{2} * kBlockBytes,     11};
  const std::string id = NewBlobId();
  {
    auto writer = blobs_->Create(id);
    ASSERT_TRUE(writer.ok()) << writer.status().ToString();
    size_t at = 0;
    for (size_t n : cuts) {
      ASSERT_TRUE((*writer)->Append(std::string_view(aligned.get() + at, n)).ok());
      at += n;
    }
    ASSERT_EQ(at, content.size());
    ASSERT_TRUE((*writer)->Seal().ok());
  }
  auto reader = blobs_->Open(id);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  EXPECT_EQ((*reader)->size(), content.size());
  EXPECT_TRUE((*reader)->Check(0, content.size()).ok());
  std::string out;
  ASSERT_TRUE((*reader)->ReadAt(0, content.size(), &out).ok());
  EXPECT_TRUE(out == content);
}

TEST_P(ObjectServiceTest, RecoveryRemovesWhatACrashLeftAndKeepsCommittedObjects) {
  ASSERT_TRUE(Put("kept", "committed content").ok());
  // A crash mid-upload: a temp file, and a pending blob never sealed.
  std::string torn = NewBlobId();
  ASSERT_TRUE(store_->objects().AddPendingBlob({torn, blobs_->owner(), 0}).ok());
  { std::ofstream(blob_dir() / "tmp" / torn) << "half an upload"; }
  // A crash after the rename, before the metadata commit: a sealed blob nothing refers to.
  std::string orphan = NewBlobId();
  ASSERT_TRUE(store_->objects().AddPendingBlob({orphan, blobs_->owner(), 0}).ok());
  {
    auto writer = blobs_->Create(orphan);
    ASSERT_TRUE(writer.ok());
    ASSERT_TRUE((*writer)->Append("orphan").ok());
    ASSERT_TRUE((*writer)->Seal().ok());
  }
  // Another server's pending blob is not ours to remove.
  ASSERT_TRUE(store_->objects().AddPendingBlob({NewBlobId(), "someone-else", 0}).ok());
  ASSERT_EQ(BlobFiles().size(), 3u);

  Reopen();
  auto removed = service_->Recover();
  ASSERT_TRUE(removed.ok()) << removed.status().ToString();
  EXPECT_EQ(*removed, 3);  // the temp file, the torn pending blob, the orphan
  EXPECT_EQ(BlobFiles().size(), 1u);
  EXPECT_TRUE(store_->objects().ListPendingBlobs(blobs_->owner())->empty());
  EXPECT_EQ(store_->objects().ListPendingBlobs("someone-else")->size(), 1u);
  EXPECT_EQ(*Get("kept"), "committed content");
}

TEST_P(ObjectServiceTest, BucketsAreProjectScopedAndDeletedOnlyWhenEmpty) {
  EXPECT_EQ(service_->CreateBucket(project_, "data").status().code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(service_->CreateBucket(project_, "Bad_Name").status().code(),
            StatusCode::kInvalidArgument);
  ASSERT_TRUE(Put("k", "v").ok());
  EXPECT_EQ(service_->Head("prj_other", "data", "k").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(service_->DeleteBucket(project_, "data").code(), StatusCode::kFailedPrecondition);
  ASSERT_TRUE(service_->Delete(project_, "data", "k").ok());
  EXPECT_EQ(service_->Delete(project_, "data", "k").code(), StatusCode::kNotFound);
  EXPECT_TRUE(BlobFiles().empty());
  ASSERT_TRUE(service_->DeleteBucket(project_, "data").ok());
  EXPECT_EQ(service_->GetBucket(project_, "data").status().code(), StatusCode::kNotFound);
}

INSTANTIATE_TEST_SUITE_P(Backends, ObjectServiceTest, ::testing::ValuesIn(StoreBackends()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace tf::objects
