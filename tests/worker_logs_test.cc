// Log shipping (worker/log_shipper.h) against the in-memory object client: chunks of what was
// appended, in order, retried under the same number after a failure, and read back in order.
#include <gtest/gtest.h>

#include <fstream>

#include "client/memory_object_client.h"
#include "store_test_env.h"
#include "worker/log_shipper.h"

namespace tf::testing {
namespace {

namespace fs = std::filesystem;
using client::MemoryObjectClient;
using worker::LogChunk;
using worker::LogShipper;

class LogShipperTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(objects_.EnsureBucket("logs").ok()); }
  void Append(const std::string& text) {
    std::ofstream(log_, std::ios::binary | std::ios::app) << text;
  }
  // Every chunk shipped so far, concatenated.
  std::string Shipped(int64_t from = 0) {
    auto chunks = worker::ReadLogChunks(objects_, "logs", "job_1/1/0", from);
    EXPECT_TRUE(chunks.ok());
    std::string all;
    for (const auto& c : *chunks) all += c.bytes;
    return all;
  }

  TempDir dir_;
  fs::path log_ = dir_.path() / "rank-0.log";
  MemoryObjectClient objects_;
};

TEST_F(LogShipperTest, EachShipmentIsWhatWasAppendedSinceTheLast) {
  LogShipper shipper(objects_, "logs", "job_1/1/0", log_);
  EXPECT_EQ(*shipper.ShipNow(), 0);  // no file yet
  Append("step 1 loss 2.5\n");
  EXPECT_EQ(*shipper.ShipNow(), 1);
  EXPECT_EQ(*shipper.ShipNow(), 0);  // nothing new: no empty chunk
  Append("step 2 loss 2.1\nstep 3 lo");
  EXPECT_EQ(*shipper.ShipNow(), 1);
  Append("ss 1.9\n");
  EXPECT_EQ(*shipper.Flush(), 1);
  EXPECT_EQ(shipper.next_chunk(), 3);

  auto keys = objects_.ListKeys("logs", "");
  ASSERT_TRUE(keys.ok());
  EXPECT_EQ(*keys, (std::vector<std::string>{"job_1/1/0/0000000000", "job_1/1/0/0000000001",
                                             "job_1/1/0/0000000002"}));
  EXPECT_EQ(*objects_.GetBytes("logs", "job_1/1/0/0000000001"), "step 2 loss 2.1\nstep 3 lo");
  EXPECT_EQ(Shipped(), "step 1 loss 2.5\nstep 2 loss 2.1\nstep 3 loss 1.9\n");
  EXPECT_EQ(Shipped(2), "ss 1.9\n");
  EXPECT_EQ(shipper.shipped_bytes(), Shipped().size());
}

TEST_F(LogShipperTest, LargeAppendsAreCutIntoChunksOfAtMostTheLimit) {
  LogShipper shipper(objects_, "logs", "job_1/1/0", log_);
  std::string big;
  for (int i = 0; big.size() < 9 * (1 << 20); ++i) big += "line " + std::to_string(i) + "\n";
  Append(big);
  EXPECT_EQ(*shipper.ShipNow(), 3);
  auto chunks = worker::ReadLogChunks(objects_, "logs", "job_1/1/0", 0, /*max_bytes=*/64 << 20);
  ASSERT_TRUE(chunks.ok());
  ASSERT_EQ(chunks->size(), 3u);
  EXPECT_EQ((*chunks)[0].bytes.size(), worker::kMaxLogChunkBytes);
  EXPECT_EQ((*chunks)[1].bytes.size(), worker::kMaxLogChunkBytes);
  EXPECT_EQ((*chunks)[0].bytes + (*chunks)[1].bytes + (*chunks)[2].bytes, big);
  EXPECT_EQ((*chunks)[2].number, 2);
}

TEST_F(LogShipperTest, AFailedUploadLosesNothingAndKeepsItsNumber) {
  LogShipper shipper(objects_, "logs", "job_1/1/0", log_, /*max_chunk_bytes=*/8);
  Append("aaaaaaaa");
  EXPECT_EQ(*shipper.ShipNow(), 1);
  Append("bbbbbbbbcc");
  int failures = 1;
  objects_.set_write_hook([&](const std::string&, const std::string& key) {
    if (key.ends_with("0000000002") && failures-- > 0) return Unavailable("connection reset");
    return OkStatus();
  });
  // Chunk 1 ("bbbbbbbb") goes; chunk 2 fails and the call reports it.
  auto failed = shipper.ShipNow();
  EXPECT_EQ(failed.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(shipper.next_chunk(), 2);
  Append("dd");
  EXPECT_EQ(*shipper.ShipNow(), 1);
  EXPECT_EQ(*objects_.GetBytes("logs", "job_1/1/0/0000000002"), "ccdd");
  EXPECT_EQ(Shipped(), "aaaaaaaabbbbbbbbccdd");
}

TEST_F(LogShipperTest, ReadingFollowsTheChunksInOrderUpToALimit) {
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(
        objects_.PutBytes("logs", worker::LogChunkKey("p", i), std::string(10, 'a' + i)).ok());
  }
  // Chunk 6 without 5: reading stops at the gap, so nothing is ever seen out of order.
  ASSERT_TRUE(objects_.PutBytes("logs", worker::LogChunkKey("p", 6), "late").ok());
  auto all = worker::ReadLogChunks(objects_, "logs", "p", 0);
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 5u);
  for (int i = 0; i < 5; ++i) EXPECT_EQ((*all)[i].number, i);

  auto limited = worker::ReadLogChunks(objects_, "logs", "p", 1, /*max_bytes=*/15);
  ASSERT_TRUE(limited.ok());
  ASSERT_EQ(limited->size(), 2u);
  EXPECT_EQ((*limited)[0].bytes, std::string(10, 'b'));
  // Over the limit on its own, one chunk still comes back.
  EXPECT_EQ(worker::ReadLogChunks(objects_, "logs", "p", 3, 1)->size(), 1u);
  EXPECT_TRUE(worker::ReadLogChunks(objects_, "logs", "p", 5)->empty());
  EXPECT_EQ(worker::ReadLogChunks(objects_, "logs", "p", -1).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(worker::LogChunkKey("", 12), "0000000012");
  EXPECT_EQ(worker::LogChunkKey("a/", 12), "a/0000000012");
}

}  // namespace
}  // namespace tf::testing
