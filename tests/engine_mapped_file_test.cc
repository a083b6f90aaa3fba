// MappedFile: what lies within the mapping, and pages given back that read the same again.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "engine/formats/mapped_file.h"
#include "file_test_util.h"

namespace tf::testing {
namespace {

using engine::MappedFile;

TEST(EngineMappedFile, DroppedPagesReadTheSameAgain) {
  const auto page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  std::string bytes(5 * page + 123, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 131 % 251);
  const auto path = std::filesystem::temp_directory_path() /
                    ("tensorfleet-mapped-" + std::to_string(::getpid()) + ".bin");
  WriteFile(path, bytes);
  auto file = MappedFile::Open(path.string());
  std::filesystem::remove(path);  // the mapping keeps the file's bytes
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  const MappedFile& m = **file;
  ASSERT_EQ(m.size(), bytes.size());
  ASSERT_EQ(std::string(reinterpret_cast<const char*>(m.data()), m.size()), bytes);  // all in

  EXPECT_TRUE(m.Contains(m.data(), m.size()));
  EXPECT_TRUE(m.Contains(m.data() + 7, m.size() - 7));
  EXPECT_FALSE(m.Contains(m.data() + 7, m.size() - 6));  // one byte past the end
  EXPECT_FALSE(m.Contains(m.data() - 1, 2));
  EXPECT_FALSE(m.Contains(m.data(), m.size() + 1));
  const std::string other(16, 'x');
  EXPECT_FALSE(m.Contains(other.data(), other.size()));

  // Ranges that start and end inside pages, one of less than a page, and the whole mapping.
  m.DropPages(m.data() + 100, 3 * page);
  m.DropPages(m.data() + 10, page / 2);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(m.data()), m.size()), bytes);
  m.DropPages(m.data(), m.size());
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(m.data()), m.size()), bytes);
}

}  // namespace
}  // namespace tf::testing
