// Problems found in input files (a malformed number or date, a short row): each is reported
// with its file and line and counted, never silently dropped. Only the first `keep` are stored,
// so a badly broken file does not grow memory.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tf::cost {

struct Problem {
  std::string file;
  int64_t line = 0;     // 0 when the problem is not on one line
  std::string column;   // may be empty
  std::string message;  // what was wrong, with the offending value
};

class ProblemLog {
 public:
  explicit ProblemLog(size_t keep = 100) : keep_(keep) {}

  void Add(std::string_view file, int64_t line, std::string_view column, std::string message);
  // A malformed value: "'12,5' is not a number" and the like.
  void BadValue(std::string_view file, int64_t line, std::string_view column,
                std::string_view value, std::string_view expected);

  int64_t count() const { return count_; }
  const std::vector<Problem>& kept() const { return kept_; }

 private:
  size_t keep_;
  int64_t count_ = 0;
  std::vector<Problem> kept_;
};

// "bill.csv:12"
std::string Where(std::string_view file, int64_t line);

}  // namespace tf::cost
