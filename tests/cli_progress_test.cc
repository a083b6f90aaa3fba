// The progress line (src/cli/progress.h): a bar when the total is known, what has gone by so far
// when it is not (a stream from a pipe), nothing for small transfers or where the output is not
// a terminal, and the line cleared at the end.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "cli/progress.h"

namespace tf::cli {
namespace {

// What was written to `f` so far.
std::string Written(std::FILE* f) {
  std::fflush(f);
  std::string out(static_cast<size_t>(std::ftell(f)), '\0');
  std::rewind(f);
  out.resize(std::fread(out.data(), 1, out.size(), f));
  std::fseek(f, 0, SEEK_END);
  return out;
}

class ProgressTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_NE(file_, nullptr); }
  void TearDown() override {
    if (file_ != nullptr) std::fclose(file_);
  }
  ProgressOutput Terminal() { return ProgressOutput{.stream = file_, .terminal = true}; }

  std::FILE* file_ = std::tmpfile();
};

TEST_F(ProgressTest, AnUnknownTotalShowsWhatHasGoneBySoFarOnceItIsWorthWatching) {
  {
    Progress p("cp stdin", 0, Terminal());
    p.Add(Progress::kMinBytes - 1);
    EXPECT_EQ(Written(file_), "") << "nothing for a transfer that may yet be small";
    p.Add(1);
    const std::string line = Written(file_);
    EXPECT_EQ(line.rfind("\rcp stdin", 0), 0u) << line;
    EXPECT_NE(line.find(" 8.0 MiB so far  "), std::string::npos) << line;
    EXPECT_NE(line.find("/s\033[K"), std::string::npos) << line;
    EXPECT_EQ(line.find('%'), std::string::npos) << "no bar without a total: " << line;
    EXPECT_EQ(line.find(" / "), std::string::npos) << "no total without a total: " << line;
    EXPECT_EQ(p.done(), Progress::kMinBytes);
  }
  // The destructor clears the line it drew.
  const std::string all = Written(file_);
  EXPECT_EQ(all.substr(all.size() - 4), "\r\033[K") << all;
}

TEST_F(ProgressTest, AKnownTotalDrawsABarFromTheStart) {
  Progress p("packing lines", 4 * Progress::kMinBytes, Terminal());
  p.Add(Progress::kMinBytes);
  const std::string line = Written(file_);
  EXPECT_NE(line.find("[#######.......................]  25% 8.0 MiB / 32.0 MiB  "),
            std::string::npos)
      << line;
  p.Finish();
  EXPECT_EQ(Written(file_).substr(line.size()), "\r\033[K");
  p.Finish();  // once cleared, nothing more
  EXPECT_EQ(Written(file_).size(), line.size() + 4);
}

TEST_F(ProgressTest, NothingIsDrawnWhereTheOutputIsNotATerminalOrTheTransferIsSmall) {
  {
    Progress not_a_terminal("cp", 0, ProgressOutput{.stream = file_, .terminal = false});
    not_a_terminal.Add(4 * Progress::kMinBytes);
    Progress small("cp", Progress::kMinBytes - 1, Terminal());
    small.Add(Progress::kMinBytes - 1);
  }
  EXPECT_EQ(Written(file_), "");
}

}  // namespace
}  // namespace tf::cli
