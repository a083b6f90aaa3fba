// The uploader `dataset create` hands its shards to (src/cli/shard_uploader.h): every shard
// uploaded in order with the bytes given, even once the caller's memory is reused, and after a
// failed upload nothing more, with the error returned to the packer and by Finish.
#include <gtest/gtest.h>

#include <string>

#include "base/crypto.h"
#include "cli/shard_uploader.h"
#include "client/memory_object_client.h"

namespace tf::cli {
namespace {

TEST(ShardUploaderTest, EveryShardIsUploadedInOrderFromACopyOfTheBytesGiven) {
  client::MemoryObjectClient objects;
  ASSERT_TRUE(objects.EnsureBucket("datasets").ok());
  std::vector<std::string> order;
  objects.set_write_hook([&](const std::string&, const std::string& key) {
    order.push_back(key);
    return OkStatus();
  });
  std::string buffer;  // the packer's memory, rewritten for every shard
  {
    ShardUploader uploader(objects, "datasets");
    for (int i = 0; i < 5; ++i) {
      buffer.assign(1000 + i, static_cast<char>('a' + i));
      ASSERT_TRUE(uploader.Submit("d/shard-" + std::to_string(i), buffer, Sha256Hex(buffer)).ok());
      buffer.assign(buffer.size(), '#');  // reused at once: the upload must not see this
    }
    ASSERT_TRUE(uploader.Finish().ok());
    EXPECT_EQ(uploader.uploaded(), (std::vector<std::string>{"d/shard-0", "d/shard-1", "d/shard-2",
                                                             "d/shard-3", "d/shard-4"}));
  }
  EXPECT_EQ(order, (std::vector<std::string>{"d/shard-0", "d/shard-1", "d/shard-2", "d/shard-3",
                                             "d/shard-4"}));
  for (int i = 0; i < 5; ++i) {
    auto got = objects.GetBytes("datasets", "d/shard-" + std::to_string(i));
    ASSERT_TRUE(got.ok() && got->has_value());
    EXPECT_EQ(**got, std::string(1000 + i, static_cast<char>('a' + i)));
  }
}

TEST(ShardUploaderTest, AFailedUploadStopsTheRestAndIsReturned) {
  client::MemoryObjectClient objects;
  ASSERT_TRUE(objects.EnsureBucket("datasets").ok());
  objects.set_write_hook([](const std::string&, const std::string& key) {
    return key == "d/shard-1" ? Unavailable("the server went away") : OkStatus();
  });
  ShardUploader uploader(objects, "datasets");
  ASSERT_TRUE(uploader.Submit("d/shard-0", "zero", Sha256Hex("zero")).ok());
  ASSERT_TRUE(uploader.Submit("d/shard-1", "one", Sha256Hex("one"))
                  .ok());  // fails on the uploader's thread
  // The next Submit waits for it and returns its error without taking the shard.
  Status next = uploader.Submit("d/shard-2", "two", Sha256Hex("two"));
  ASSERT_EQ(next.code(), StatusCode::kUnavailable) << next.ToString();
  EXPECT_NE(next.message().find("uploading d/shard-1"), std::string::npos) << next.message();
  EXPECT_NE(next.message().find("the server went away"), std::string::npos) << next.message();
  EXPECT_EQ(uploader.Submit("d/shard-3", "three", Sha256Hex("three")).code(),
            StatusCode::kUnavailable);
  EXPECT_EQ(uploader.Finish().code(), StatusCode::kUnavailable);
  EXPECT_EQ(uploader.uploaded(), std::vector<std::string>{"d/shard-0"});
  EXPECT_EQ(objects.puts(), 1);
  auto two = objects.GetBytes("datasets", "d/shard-2");
  ASSERT_TRUE(two.ok());
  EXPECT_FALSE(two->has_value());
}

TEST(ShardUploaderTest, AShardWhoseHashIsNotItsOwnIsNotStored) {
  client::MemoryObjectClient objects;
  ASSERT_TRUE(objects.EnsureBucket("datasets").ok());
  ShardUploader uploader(objects, "datasets");
  ASSERT_TRUE(uploader.Submit("d/shard-0", "packed", Sha256Hex("something else")).ok());
  Status s = uploader.Finish();
  ASSERT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  EXPECT_NE(s.message().find("uploading d/shard-0"), std::string::npos) << s.message();
  EXPECT_TRUE(uploader.uploaded().empty());
  EXPECT_EQ(objects.puts(), 0);
}

TEST(ShardUploaderTest, DestroyedWithAnUploadInFlightItWaitsForIt) {
  client::MemoryObjectClient objects;
  ASSERT_TRUE(objects.EnsureBucket("datasets").ok());
  {
    ShardUploader uploader(objects, "datasets");
    ASSERT_TRUE(
        uploader.Submit("d/shard-0", std::string(100000, 'x'), Sha256Hex(std::string(100000, 'x')))
            .ok());
  }  // no Finish
  auto got = objects.GetBytes("datasets", "d/shard-0");
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ((*got)->size(), 100000u);
}

}  // namespace
}  // namespace tf::cli
