// BlobReader::Check on local blobs, which checks a range of several blocks in two halves at
// once (the second through a second descriptor), each block where it is mapped: damage in either
// half is found and named, short blobs and ranges that start and end inside blocks are checked
// whole, and a blob removed or cut short while a reader has it open still gives an answer (an
// error naming the blob where it was cut), never a bus error.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "object_content.h"
#include "objects/blob_format.h"
#include "objects/blob_store.h"
#include "store_test_env.h"

namespace tf::objects {
namespace {

namespace fs = std::filesystem;
using tf::testing::Content;
using tf::testing::TempDir;

class BlobCheckTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto blobs = OpenLocalBlobStore(dir_.path() / "objects");
    ASSERT_TRUE(blobs.ok()) << blobs.status().ToString();
    blobs_ = std::move(blobs).value();
  }

  // Writes `content` as a sealed blob; returns its id.
  std::string Put(const std::string& content) {
    const std::string id = NewBlobId();
    auto writer = blobs_->Create(id);
    EXPECT_TRUE(writer.ok()) << writer.status().ToString();
    EXPECT_TRUE((*writer)->Append(content).ok());
    EXPECT_TRUE((*writer)->Seal().ok());
    return id;
  }

  fs::path PathOf(const std::string& id) const {
    return dir_.path() / "objects" / id.substr(0, 2) / id.substr(2, 2) / id;
  }

  void FlipByte(const std::string& id, uint64_t at) {
    std::fstream f(PathOf(id), std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(static_cast<std::streamoff>(at));
    char c = static_cast<char>(f.get());
    f.seekp(static_cast<std::streamoff>(at));
    f.put(static_cast<char>(c ^ 0x40));
  }

  std::unique_ptr<BlobReader> Open(const std::string& id) {
    auto reader = blobs_->Open(id);
    EXPECT_TRUE(reader.ok()) << reader.status().ToString();
    return reader.ok() ? std::move(reader).value() : nullptr;
  }

  TempDir dir_;
  std::unique_ptr<BlobStore> blobs_;
};

TEST_F(BlobCheckTest, DamageInEitherHalfOfARangeIsFoundAndNamed) {
  const std::string content = Content(9 * kBlockBytes + 11, 1);
  for (uint64_t block : {1u, 7u, 9u}) {  // first half, second half, the short last block
    SCOPED_TRACE("damage in block " + std::to_string(block));
    const std::string id = Put(content);
    FlipByte(id, block * kBlockBytes + 5);
    auto reader = Open(id);
    ASSERT_NE(reader, nullptr);
    Status whole = reader->Check(0, content.size());
    EXPECT_EQ(whole.code(), StatusCode::kInternal) << whole.ToString();
    EXPECT_NE(whole.message().find("block " + std::to_string(block)), std::string::npos)
        << whole.ToString();
    // A range that ends before the damaged block is fine; one that starts inside it is not.
    EXPECT_TRUE(reader->Check(0, block * kBlockBytes).ok());
    EXPECT_FALSE(reader->Check(block * kBlockBytes + 100, 10).ok());
  }
}

TEST_F(BlobCheckTest, RangesInsideBlocksAndShortBlobsAreCheckedWhole) {
  const std::string content = Content(5 * kBlockBytes + 3, 2);
  auto reader = Open(Put(content));
  ASSERT_NE(reader, nullptr);
  for (auto [offset, n] : {std::pair<uint64_t, uint64_t>{0, 5 * kBlockBytes + 3},
                           {kBlockBytes - 1, 2},
                           {100, 4 * kBlockBytes},
                           {3 * kBlockBytes + 7, 2 * kBlockBytes - 4},
                           {5 * kBlockBytes, 3}}) {
    SCOPED_TRACE(std::to_string(offset) + "+" + std::to_string(n));
    EXPECT_TRUE(reader->Check(offset, n).ok());
  }
  EXPECT_EQ(reader->Check(5 * kBlockBytes, 4).code(), StatusCode::kInvalidArgument);

  for (size_t size : {size_t{1}, size_t{4095}, size_t{kBlockBytes + kBlockBytes / 2}}) {
    SCOPED_TRACE("a blob of " + std::to_string(size) + " bytes");
    const std::string small = Content(size, 3);
    const std::string id = Put(small);
    auto short_reader = Open(id);
    ASSERT_NE(short_reader, nullptr);
    EXPECT_TRUE(short_reader->Check(0, size).ok());
    FlipByte(id, size - 1);
    auto damaged = Open(id);
    ASSERT_NE(damaged, nullptr);
    EXPECT_EQ(damaged->Check(0, size).code(), StatusCode::kInternal);
  }
}

TEST_F(BlobCheckTest, ABlobRemovedWhileOpenIsStillCheckedWhole) {
  const std::string content = Content(8 * kBlockBytes, 4);
  const std::string id = Put(content);
  auto reader = Open(id);
  ASSERT_NE(reader, nullptr);
  ASSERT_TRUE(blobs_->Remove(id).ok());
  // The path names nothing now, so there is no second descriptor: one thread checks it all.
  EXPECT_TRUE(reader->Check(0, content.size()).ok());
  std::string out;
  ASSERT_TRUE(reader->ReadAt(6 * kBlockBytes, 10, &out).ok());
  EXPECT_EQ(out, content.substr(6 * kBlockBytes, 10));
}

TEST_F(BlobCheckTest, ABlobCutShortInTheSecondHalfIsAnErrorNamingIt) {
  const std::string id = Put(Content(8 * kBlockBytes, 5));
  auto reader = Open(id);
  ASSERT_NE(reader, nullptr);
  ASSERT_TRUE(reader->Check(0, kBlockBytes).ok());
  fs::resize_file(PathOf(id), 6 * kBlockBytes + 10);  // inside block 6, in the second half
  Status cut = reader->Check(0, 8 * kBlockBytes);
  EXPECT_EQ(cut.code(), StatusCode::kInternal) << cut.ToString();
  EXPECT_NE(cut.message().find(id), std::string::npos) << cut.ToString();
}

TEST_F(BlobCheckTest, ABlobCutShortAnywhereIsAnErrorNamingItNeverABusError) {
  // Cut at a page inside the first half, inside a page, on a block's edge, and inside the
  // short last block: the mapped pages past the new end are missing, which the check must
  // answer with an error rather than touch.
  for (uint64_t cut : {uint64_t{kBlockBytes + 4096}, uint64_t{2 * kBlockBytes + 1000},
                       uint64_t{3 * kBlockBytes}, uint64_t{8 * kBlockBytes + 5}}) {
    SCOPED_TRACE("cut at " + std::to_string(cut));
    const std::string id = Put(Content(8 * kBlockBytes + 100, 6));
    auto reader = Open(id);
    ASSERT_NE(reader, nullptr);
    ASSERT_TRUE(reader->Check(0, 8 * kBlockBytes + 100).ok());  // mapped and read once
    fs::resize_file(PathOf(id), cut);
    Status whole = reader->Check(0, 8 * kBlockBytes + 100);
    EXPECT_EQ(whole.code(), StatusCode::kInternal) << whole.ToString();
    EXPECT_NE(whole.message().find(id), std::string::npos) << whole.ToString();
    // The part before the cut's block is still whole.
    EXPECT_TRUE(reader->Check(0, cut / kBlockBytes * kBlockBytes).ok());
    Status tail = reader->Check(8 * kBlockBytes, 100);
    EXPECT_EQ(tail.code(), StatusCode::kInternal) << tail.ToString();
  }
}

TEST_F(BlobCheckTest, DamageAnywhereInABlockIsFoundInEveryRangeThatCoversIt) {
  // A byte changed in the page cache (after a clean check) on a block's first and last page:
  // every check reads the block again, so the change is seen.
  const std::string content = Content(6 * kBlockBytes, 7);
  const std::string id = Put(content);
  auto reader = Open(id);
  ASSERT_NE(reader, nullptr);
  ASSERT_TRUE(reader->Check(0, content.size()).ok());
  for (uint64_t at : {uint64_t{4 * kBlockBytes}, uint64_t{5 * kBlockBytes - 1}}) {
    SCOPED_TRACE("damage at " + std::to_string(at));
    FlipByte(id, at);
    const uint64_t block = at / kBlockBytes;
    for (auto [offset, n] : {std::pair<uint64_t, uint64_t>{0, content.size()},
                             {block * kBlockBytes, kBlockBytes},
                             {at, 1},
                             {block * kBlockBytes - 10, 20}}) {
      Status s = reader->Check(offset, n);
      EXPECT_EQ(s.code(), StatusCode::kInternal) << offset << "+" << n;
      EXPECT_NE(s.message().find("block " + std::to_string(block)), std::string::npos)
          << s.ToString();
    }
    FlipByte(id, at);  // put back
    EXPECT_TRUE(reader->Check(0, content.size()).ok());
  }
}

}  // namespace
}  // namespace tf::objects
