// The packer (src/datasets/packer.h): lines and files become samples, and a sample that is too
// long is refused with the file and line, after reading no more of it than the limit.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "datasets/packer.h"
#include "datasets/shard_format.h"
#include "file_test_util.h"
#include "store_test_env.h"

namespace tf::datasets {
namespace {

using ::tf::testing::TempDir;
using ::tf::testing::WriteFile;

// Packs with a small sample limit and keeps the samples of every shard emitted.
class PackerTest : public ::testing::Test {
 protected:
  static constexpr uint64_t kLimit = 1000;

  Status Pack(const std::string& file, const std::string& format) {
    Status added = packer_.AddFile(file, format, [&](uint64_t n) { bytes_read_ += n; });
    if (!added.ok()) return added;
    return packer_.Finish();
  }

  TempDir dir_;
  std::vector<std::string> samples_;
  uint64_t bytes_read_ = 0;
  Packer packer_{1 << 20,
                 [this](std::string_view shard, uint64_t) -> Status {
                   auto view = ShardView::Open(shard, "test");
                   if (!view.ok()) return view.status();
                   for (uint64_t i = 0; i < view->sample_count(); ++i) {
                     auto sample = view->Sample(i);
                     if (!sample.ok()) return sample.status();
                     samples_.emplace_back(*sample);
                   }
                   return OkStatus();
                 },
                 kLimit};
};

TEST_F(PackerTest, LinesLoseTheirEndingsAndBlankLinesAreSkipped) {
  std::string file = WriteFile(dir_.path() / "a.txt", "\xEF\xBB\xBFone\r\n\n  \t\ntwo\nthree");
  ASSERT_TRUE(Pack(file, "text").ok());
  EXPECT_EQ(samples_, (std::vector<std::string>{"one", "two", "three"}));
  EXPECT_EQ(bytes_read_, 3 + 5 + 1 + 4 + 4 + 5);
}

TEST_F(PackerTest, ALineAsLongAsTheLimitIsOneSampleEvenWithAByteOrderMarkAndACarriageReturn) {
  const std::string longest(kLimit, 'x');
  std::string file = WriteFile(
      dir_.path() / "a.txt", "\xEF\xBB\xBF" + longest + "\r\n" + longest + "\r\n" + longest + "\n");
  ASSERT_TRUE(Pack(file, "text").ok());
  EXPECT_EQ(samples_, (std::vector<std::string>{longest, longest, longest}));
}

TEST_F(PackerTest, ALineLongerThanTheLimitIsRefusedWithoutTakingTheRestOfIt) {
  // A file with no newline at all (a binary file given as text) is one endless line.
  std::string file =
      WriteFile(dir_.path() / "big.jsonl", "{\"a\": 1}\n" + std::string(1 << 20, 'y') + "\n{}\n");
  Status packed = Pack(file, "jsonl");
  ASSERT_EQ(packed.code(), StatusCode::kInvalidArgument) << packed.ToString();
  EXPECT_NE(
      packed.message().find(file + ":2: the line is longer than a sample may be (1000 bytes)"),
      std::string::npos)
      << packed.message();
  EXPECT_NE(packed.message().find("--format files"), std::string::npos) << packed.message();
  // The first line and a little more than the limit of the second (what a line may lose
  // besides): not the megabyte.
  EXPECT_LE(bytes_read_, 9 + kLimit + 4);
  EXPECT_TRUE(samples_.empty());
}

TEST_F(PackerTest, ALineOneByteTooLongIsRefused) {
  std::string file = WriteFile(dir_.path() / "a.txt", std::string(kLimit + 1, 'x') + "\n");
  Status packed = Pack(file, "text");
  ASSERT_EQ(packed.code(), StatusCode::kInvalidArgument) << packed.ToString();
  EXPECT_NE(packed.message().find(":1: the line is longer"), std::string::npos) << packed.message();
}

TEST_F(PackerTest, AFileLargerThanTheLimitIsRefusedBeforeItIsRead) {
  std::string file = WriteFile(dir_.path() / "big.bin", std::string(kLimit + 1, 'z'));
  Status packed = Pack(file, "files");
  ASSERT_EQ(packed.code(), StatusCode::kInvalidArgument) << packed.ToString();
  EXPECT_NE(
      packed.message().find(file + " is larger than a sample may be (1000 bytes): it has 1001"),
      std::string::npos)
      << packed.message();
  EXPECT_EQ(bytes_read_, 0u);
}

TEST_F(PackerTest, ALineThatIsNotJsonNamesItsLine) {
  std::string file = WriteFile(dir_.path() / "a.jsonl", "{}\n[1, 2]\n{oops}\n");
  Status packed = Pack(file, "jsonl");
  ASSERT_EQ(packed.code(), StatusCode::kInvalidArgument) << packed.ToString();
  EXPECT_NE(packed.message().find(file + ":3: not JSON: at byte 2"), std::string::npos)
      << packed.message();
}

}  // namespace
}  // namespace tf::datasets
