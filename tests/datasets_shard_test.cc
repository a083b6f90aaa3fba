// The shard format (src/datasets/shard_format.h): what is written reads back, and damage
// anywhere in a shard is an error that names the shard and the offset, never wrong bytes.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "datasets/shard_format.h"

namespace tf::datasets {
namespace {

std::string MakeShard(const std::vector<std::string>& samples) {
  ShardWriter w;
  for (const auto& s : samples) EXPECT_TRUE(w.Add(s).ok());
  return std::string(w.Finish());
}

TEST(ShardFormatTest, RoundTripsSamplesIncludingEmptyAndBinaryOnes) {
  std::vector<std::string> samples = {"first", "", std::string("a\0b\xff", 4),
                                      std::string(100000, 'x')};
  ShardWriter w;
  for (const auto& s : samples) ASSERT_TRUE(w.Add(s).ok());
  EXPECT_EQ(w.sample_count(), 4u);
  const uint64_t predicted = w.size();
  std::string shard(w.Finish());
  EXPECT_EQ(shard.size(), predicted);
  EXPECT_EQ(shard.substr(0, 8), "TFSHARD1");
  auto view = ShardView::Open(shard, "s0");
  ASSERT_TRUE(view.ok()) << view.status().ToString();
  ASSERT_EQ(view->sample_count(), 4u);
  for (size_t i = 0; i < samples.size(); ++i) {
    auto s = view->Sample(i);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    EXPECT_EQ(*s, samples[i]);
  }
  EXPECT_TRUE(view->Verify().ok());
  EXPECT_FALSE(view->Sample(4).ok());
  // The writer starts over after Finish.
  EXPECT_EQ(w.sample_count(), 0u);
  auto empty = ShardView::Open(w.Finish(), "empty");
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->sample_count(), 0u);
}

TEST(ShardFormatTest, OneWriterBuildsShardAfterShardInTheSameMemory) {
  // A big shard, then a small one: nothing of the first may show in the second (its table and
  // footer lie where the first one's samples were).
  ShardWriter w;
  ASSERT_TRUE(w.Add(std::string(300000, 'a')).ok());
  ASSERT_TRUE(w.Add("second").ok());
  std::string_view first = w.Finish();
  const char* memory = first.data();
  auto big = ShardView::Open(first, "big");
  ASSERT_TRUE(big.ok()) << big.status().ToString();
  EXPECT_EQ(big->sample_count(), 2u);
  EXPECT_EQ(*big->Sample(1), "second");
  EXPECT_EQ(w.size(), kShardHeaderSize + kShardFooterSize);  // empty again

  ASSERT_TRUE(w.Add("x").ok());
  ASSERT_TRUE(w.Add("yz").ok());
  EXPECT_EQ(w.sample_count(), 2u);
  const uint64_t predicted = w.size();
  std::string_view second = w.Finish();
  EXPECT_EQ(second.data(), memory);  // no new memory for it
  EXPECT_EQ(second.size(), predicted);
  EXPECT_EQ(std::string(second), MakeShard({"x", "yz"}));
  auto small = ShardView::Open(second, "small");
  ASSERT_TRUE(small.ok()) << small.status().ToString();
  ASSERT_EQ(small->sample_count(), 2u);
  EXPECT_EQ(*small->Sample(0), "x");
  EXPECT_EQ(*small->Sample(1), "yz");
  EXPECT_TRUE(small->Verify().ok());
}

TEST(ShardFormatTest, SampleBytesIsTheOneRangeThatSamplesTake) {
  std::vector<std::string> samples = {"a", "", "bcd", std::string(5000, 'e'), "f"};
  std::string shard = MakeShard(samples);
  auto view = ShardView::Open(shard, "s");
  ASSERT_TRUE(view.ok());
  auto at = [&](uint64_t i) {
    return static_cast<uint64_t>(view->Sample(i)->data() - shard.data());
  };
  EXPECT_EQ(view->SampleBytes(0, 5), std::make_pair(uint64_t{32}, uint64_t{5005}));
  EXPECT_EQ(view->SampleBytes(2, 4), std::make_pair(at(2), uint64_t{5003}));
  EXPECT_EQ(view->SampleBytes(4, 5), std::make_pair(at(4), uint64_t{1}));
  // The end is clipped to the shard; an empty range is nothing.
  EXPECT_EQ(view->SampleBytes(3, 99), std::make_pair(at(3), uint64_t{5001}));
  EXPECT_EQ(view->SampleBytes(1, 2), std::make_pair(at(1), uint64_t{0}));
  EXPECT_EQ(view->SampleBytes(3, 3), std::make_pair(uint64_t{0}, uint64_t{0}));
  EXPECT_EQ(view->SampleBytes(7, 9), std::make_pair(uint64_t{0}, uint64_t{0}));
}

TEST(ShardFormatTest, AFlippedSampleByteFailsThatSampleOnlyNamingShardAndOffset) {
  std::string shard = MakeShard({"alpha", "bravo", "charlie"});
  size_t at = shard.find("bravo") + 2;
  shard[at] ^= 0x01;
  auto view = ShardView::Open(shard, "datasets/d/shard-00003.tfs");
  ASSERT_TRUE(view.ok());  // the structure is intact
  EXPECT_TRUE(view->Sample(0).ok());
  auto bad = view->Sample(1);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("datasets/d/shard-00003.tfs"), std::string::npos);
  EXPECT_NE(bad.status().message().find("offset " + std::to_string(shard.find("br"))),
            std::string::npos)
      << bad.status().message();
  EXPECT_NE(bad.status().message().find("sample 1"), std::string::npos);
  EXPECT_FALSE(view->Verify().ok());
}

TEST(ShardFormatTest, EveryFlippedByteOutsideTheSamplesIsCaughtAtOpen) {
  std::string shard = MakeShard({"one", "two", "three"});
  const size_t samples_end = 32 + 3 + 3 + 5;
  for (size_t i = 0; i < shard.size(); ++i) {
    if (i >= 32 && i < samples_end) continue;
    for (int bit = 0; bit < 8; ++bit) {
      std::string bad = shard;
      bad[i] ^= static_cast<char>(1 << bit);
      auto view = ShardView::Open(bad, "x");
      if (view.ok()) {
        // Only the header's padding-free fields matter; a flip that still opens must not
        // change what is read.
        ADD_FAILURE() << "a flip at byte " << i << " bit " << bit << " went unnoticed";
      } else {
        EXPECT_NE(view.status().message().find("shard x is damaged at offset"), std::string::npos);
      }
    }
  }
}

TEST(ShardFormatTest, EveryTruncationAndExtensionIsRefused) {
  std::string shard = MakeShard({"one", "two"});
  for (size_t n = 0; n < shard.size(); ++n) {
    EXPECT_FALSE(ShardView::Open(std::string_view(shard).substr(0, n), "t").ok()) << n;
  }
  EXPECT_FALSE(ShardView::Open(shard + "x", "t").ok());
  EXPECT_FALSE(ShardView::Open("not a shard at all, just some text here", "t").ok());
}

TEST(ShardFormatTest, AHugeSampleCountIsRefusedWithoutAllocating) {
  std::string shard = MakeShard({"a"});
  for (int i = 16; i < 24; ++i) shard[i] = '\xff';
  auto view = ShardView::Open(shard, "huge");
  ASSERT_FALSE(view.ok());
  EXPECT_NE(view.status().message().find("offset 16"), std::string::npos)
      << view.status().message();
}

}  // namespace
}  // namespace tf::datasets
