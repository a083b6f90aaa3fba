#include "cost/audit/problems.h"

namespace tf::cost {

void ProblemLog::Add(std::string_view file, int64_t line, std::string_view column,
                     std::string message) {
  ++count_;
  if (kept_.size() >= keep_) return;
  kept_.push_back({std::string(file), line, std::string(column), std::move(message)});
}

void ProblemLog::BadValue(std::string_view file, int64_t line, std::string_view column,
                          std::string_view value, std::string_view expected) {
  ++count_;
  if (kept_.size() >= keep_) return;
  constexpr size_t kShown = 40;
  std::string shown(value.substr(0, kShown));
  if (value.size() > kShown) shown += "...";
  kept_.push_back({std::string(file), line, std::string(column),
                   "'" + shown + "' is not " + std::string(expected)});
}

std::string Where(std::string_view file, int64_t line) {
  std::string out(file);
  if (line > 0) out += ":" + std::to_string(line);
  return out;
}

}  // namespace tf::cost
