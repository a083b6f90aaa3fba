// Files written in whole blocks (src/datasets/block_writer.h): the bytes as given whatever the
// pieces, one writer for many files, a full disk. And, where the kernel keeps files in 2 MiB
// pages, shards mapped in large pages by MappedShard: one written by a BlockWriter from small
// pieces, and one read in from the disk.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "datasets/block_writer.h"
#include "datasets/shard_cache.h"
#include "file_test_util.h"
#include "object_content.h"
#include "store_test_env.h"

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif

namespace tf::datasets {
namespace {

using tf::testing::Content;
using tf::testing::ReadFile;
using tf::testing::TempDir;

constexpr uint64_t kMiB = uint64_t{1} << 20;

TEST(BlockWriterTest, TheFileHoldsEveryPieceInOrderWhateverTheirSizes) {
  TempDir dir;
  const std::string content = Content(13 * kMiB + 12345, 1);
  // Pieces smaller than a block, across a block's end, several blocks long, and empty ones.
  const uint64_t cuts[] = {1, 0, 65536, 3 * kMiB, 0, 5 * kMiB + 7, 4 * kMiB};
  BlockWriter writer;
  ASSERT_TRUE(writer.Open(dir.path() / "shard").ok());
  uint64_t at = 0;
  for (uint64_t cut : cuts) {
    ASSERT_TRUE(writer.Append(std::string_view(content).substr(at, cut)).ok());
    at += cut;
    EXPECT_EQ(writer.size(), at);
  }
  ASSERT_TRUE(writer.Append(std::string_view(content).substr(at)).ok());
  ASSERT_TRUE(writer.Close().ok());
  EXPECT_EQ(ReadFile(dir.path() / "shard"), content);
}

TEST(BlockWriterTest, OneWriterWritesFileAfterFile) {
  TempDir dir;
  const std::string first = Content(6 * kMiB, 2), second = Content(100, 3);
  BlockWriter writer;
  ASSERT_TRUE(writer.Open(dir.path() / "a").ok());
  ASSERT_TRUE(writer.Append(first).ok());
  ASSERT_TRUE(writer.Close().ok());
  ASSERT_TRUE(writer.Open(dir.path() / "b").ok());
  ASSERT_TRUE(writer.Append(second).ok());
  EXPECT_EQ(writer.size(), second.size());
  ASSERT_TRUE(writer.Close().ok());
  EXPECT_EQ(ReadFile(dir.path() / "a"), first);
  EXPECT_EQ(ReadFile(dir.path() / "b"), second);
  // Opening an existing file empties it.
  ASSERT_TRUE(writer.Open(dir.path() / "a").ok());
  ASSERT_TRUE(writer.Close().ok());
  EXPECT_EQ(ReadFile(dir.path() / "a"), "");
}

TEST(BlockWriterTest, AFullDiskIsReportedAndEveryLaterCallSaysSo) {
  BlockWriter writer;
  ASSERT_TRUE(writer.Open("/dev/full").ok());
  // Less than a block is only gathered; the block that fills is written, and refused.
  EXPECT_TRUE(writer.Append(std::string(kMiB, 'x')).ok());
  Status s = writer.Append(std::string(4 * kMiB, 'y'));
  ASSERT_EQ(s.code(), StatusCode::kResourceExhausted) << s.ToString();
  EXPECT_NE(s.message().find("/dev/full"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("No space left on device"), std::string::npos) << s.message();
  EXPECT_EQ(writer.Append("z").code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(writer.Close().code(), StatusCode::kResourceExhausted);
  // A failed file does not stay with the writer: the next one starts clean.
  TempDir dir;
  ASSERT_TRUE(writer.Open(dir.path() / "next").ok());
  ASSERT_TRUE(writer.Append("fine").ok());
  ASSERT_TRUE(writer.Close().ok());
  EXPECT_EQ(ReadFile(dir.path() / "next"), "fine");
}

TEST(BlockWriterTest, AFileThatCannotBeCreatedIsNamed) {
  TempDir dir;
  BlockWriter writer;
  const auto path = dir.path() / "missing" / "shard";
  Status s = writer.Open(path);
  ASSERT_EQ(s.code(), StatusCode::kInternal);
  EXPECT_NE(s.message().find(path.string()), std::string::npos) << s.message();
  EXPECT_EQ(writer.Append("x").code(), StatusCode::kInternal);
}

// The kB of the mapping starting at `start` that are mapped with 2 MiB entries
// (/proc/self/smaps, FilePmdMapped); -1 if the mapping or the field is not there.
int64_t FilePmdMappedKb(const void* start) {
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool in_it = false;
  char prefix[32];
  std::snprintf(prefix, sizeof prefix, "%lx-", reinterpret_cast<unsigned long>(start));
  while (std::getline(smaps, line)) {
    // A mapping's first line is its range, "start-end perms ...": hex digits and one '-'.
    const std::string range = line.substr(0, line.find(' '));
    const bool header = range.find('-') != std::string::npos &&
                        range.find_first_not_of("0123456789abcdef-") == std::string::npos;
    if (header) {
      in_it = line.rfind(prefix, 0) == 0;
      continue;
    }
    if (in_it && line.rfind("FilePmdMapped:", 0) == 0) {
      std::istringstream in(line.substr(14));
      int64_t kb = -1;
      in >> kb;
      return kb;
    }
  }
  return -1;
}

// Whether this kernel, on the filesystem of `dir`, maps a file written in 4 MiB writes with
// 2 MiB entries when advised to: the control for the test below.
bool KernelMapsLargeFilePages(const std::filesystem::path& dir) {
  if (ReadFile("/sys/kernel/mm/transparent_hugepage/enabled").find("[never]") !=
      std::string::npos) {
    return false;
  }
  const auto path = dir / "control";
  const std::string block = Content(4 * kMiB, 4);
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return false;
  bool written = ::write(fd, block.data(), block.size()) == static_cast<ssize_t>(block.size()) &&
                 ::write(fd, block.data(), block.size()) == static_cast<ssize_t>(block.size());
  void* p = ::mmap(nullptr, 8 * kMiB, PROT_READ, MAP_SHARED, fd, 0);
  ::close(fd);
  if (!written || p == MAP_FAILED) return false;
  ::madvise(p, 8 * kMiB, MADV_HUGEPAGE);
  ::madvise(p, 8 * kMiB, MADV_POPULATE_READ);
  const bool large = FilePmdMappedKb(p) > 0;
  ::munmap(p, 8 * kMiB);
  return large;
}

TEST(MappedShardLargePagesTest, AShardWrittenInSmallPiecesIsMappedInLargePages) {
  TempDir dir;
  if (!KernelMapsLargeFilePages(dir.path())) {
    GTEST_SKIP() << "this kernel or filesystem does not map files in 2 MiB pages (transparent "
                    "huge pages off, or no large folios on "
                 << dir.path() << ")";
  }
  // As a download arrives: 64 KiB at a time.
  const std::string content = Content(8 * kMiB, 5);
  BlockWriter writer;
  ASSERT_TRUE(writer.Open(dir.path() / "shard.tfs").ok());
  for (uint64_t at = 0; at < content.size(); at += 65536) {
    ASSERT_TRUE(writer.Append(std::string_view(content).substr(at, 65536)).ok());
  }
  ASSERT_TRUE(writer.Close().ok());
  auto mapped = MappedShard::Open(dir.path() / "shard.tfs");
  ASSERT_TRUE(mapped.ok()) << mapped.status().ToString();
  ASSERT_TRUE((*mapped)->PopulateAll().ok());
  EXPECT_EQ((*mapped)->bytes(), content);
  EXPECT_GT(FilePmdMappedKb((*mapped)->bytes().data()), 0)
      << "the shard's mapping holds no 2 MiB entries";
}

TEST(MappedShardLargePagesTest, AShardReadInFromTheDiskIsMappedInLargePages) {
  TempDir dir;
  if (!KernelMapsLargeFilePages(dir.path())) {
    GTEST_SKIP() << "this kernel or filesystem does not map files in 2 MiB pages";
  }
  // Written in small pieces, then put out of the page cache: the mapping reads it back in.
  const std::string content = Content(8 * kMiB, 6);
  const auto path = tf::testing::WriteFile(dir.path() / "shard.tfs", content);
  int fd = ::open(path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::fdatasync(fd), 0);
  ASSERT_EQ(::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
  ::close(fd);
  auto mapped = MappedShard::Open(path);
  ASSERT_TRUE(mapped.ok()) << mapped.status().ToString();
  ASSERT_TRUE((*mapped)->PopulateAll().ok());
  EXPECT_EQ((*mapped)->bytes(), content);
  // Without MADV_HUGEPAGE the kernel reads it back in small pieces: none would be.
  EXPECT_GT(FilePmdMappedKb((*mapped)->bytes().data()), 0)
      << "the shard's mapping holds no 2 MiB entries";
}

}  // namespace
}  // namespace tf::datasets
