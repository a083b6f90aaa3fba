#include "jobs/metric_regex.h"

#include <algorithm>
#include <exception>
#include <vector>

namespace tf::jobs {
namespace {

constexpr int64_t kMaxStates = 10'000;
constexpr size_t kMaxNesting = 32;

// Reads the decimal number at `pattern[*i]`, advancing past it; saturates far above kMaxStates.
int64_t ReadCount(std::string_view pattern, size_t* i) {
  int64_t n = 0;
  while (*i < pattern.size() && pattern[*i] >= '0' && pattern[*i] <= '9') {
    n = std::min<int64_t>(n * 10 + (pattern[*i] - '0'), kMaxStates + 1);
    ++*i;
  }
  return n;
}

// An upper bound on the states std::regex builds for `pattern`, or -1 when groups nest more
// than kMaxNesting deep. Loose on purpose: syntax errors are left to the compiler.
int64_t EstimateStates(std::string_view pattern) {
  struct Group {
    int64_t size = 0;  // states of everything read so far in this group
    int64_t last = 0;  // states of the last atom, which a quantifier repeats
  };
  std::vector<Group> groups(1);
  auto add_atom = [&](int64_t size) {
    groups.back().size = std::min(groups.back().size + size, kMaxStates + 1);
    groups.back().last = size;
  };
  for (size_t i = 0; i < pattern.size(); ++i) {
    char c = pattern[i];
    if (c == '\\') {
      ++i;
      add_atom(1);
    } else if (c == '[') {  // a class is one state; find its end
      size_t j = i + 1;
      if (j < pattern.size() && pattern[j] == '^') ++j;
      if (j < pattern.size() && pattern[j] == ']') ++j;
      while (j < pattern.size() && pattern[j] != ']') j += pattern[j] == '\\' ? 2 : 1;
      i = j;
      add_atom(1);
    } else if (c == '(') {
      if (groups.size() > kMaxNesting) return -1;
      groups.emplace_back();
    } else if (c == ')') {
      if (groups.size() == 1) continue;
      int64_t size = groups.back().size + 2;
      groups.pop_back();
      add_atom(size);
    } else if (c == '{') {
      ++i;
      int64_t low = ReadCount(pattern, &i);
      int64_t high = low + 1;  // "{n,}": n copies and a loop
      if (i < pattern.size() && pattern[i] == ',') {
        ++i;
        if (i < pattern.size() && pattern[i] >= '0' && pattern[i] <= '9') {
          high = ReadCount(pattern, &i);
        }
      }
      int64_t copies = std::max<int64_t>({low, high, 1});
      if (copies > kMaxStates) return kMaxStates + 1;  // whatever it repeats
      Group& g = groups.back();
      int64_t extra = std::min(g.last * (copies - 1), kMaxStates + 1);
      g.size = std::min(g.size + extra, kMaxStates + 1);
      g.last = std::min(g.last * copies, kMaxStates + 1);
    } else if (c == '*' || c == '+' || c == '?' || c == '|') {
      groups.back().size += 1;
    } else {
      add_atom(1);
    }
  }
  int64_t total = 0;
  for (const Group& g : groups) total = std::min(total + g.size, kMaxStates + 1);
  return total;
}

// Whether `pattern` has a back-reference ("\\1"): of no use for a number, slow to match, and
// std::regex reads its digits into a long without an overflow check.
bool HasBackReference(std::string_view pattern) {
  for (size_t i = 0; i + 1 < pattern.size(); ++i) {
    if (pattern[i] != '\\') continue;
    if (pattern[i + 1] >= '1' && pattern[i + 1] <= '9') return true;
    ++i;  // the escaped character
  }
  return false;
}

}  // namespace

Result<std::regex> CompileMetricRegex(std::string_view pattern) {
  if (pattern.empty()) return InvalidArgument("must not be empty");
  if (pattern.size() > kMaxMetricRegexBytes) {
    return InvalidArgument("must be at most " + std::to_string(kMaxMetricRegexBytes) +
                           " bytes, got " + std::to_string(pattern.size()));
  }
  if (HasBackReference(pattern)) return InvalidArgument("must not use back-references (\\1)");
  int64_t states = EstimateStates(pattern);
  if (states < 0) {
    return InvalidArgument("nests groups more than " + std::to_string(kMaxNesting) + " deep");
  }
  if (states > kMaxStates) {
    return InvalidArgument("is too large once its counted repetitions are expanded (over " +
                           std::to_string(kMaxStates) + " states); use fewer or smaller {n}");
  }
  try {
    std::regex re(pattern.begin(), pattern.end(), std::regex::ECMAScript);
    if (re.mark_count() != 1) {
      return InvalidArgument("must have exactly one capture group around the number, got " +
                             std::to_string(re.mark_count()) + " (write other groups as (?:...))");
    }
    return re;
  } catch (const std::regex_error& e) {
    return InvalidArgument(std::string("is not a valid regular expression: ") + e.what());
  } catch (const std::exception& e) {  // std::bad_alloc on a pathological pattern
    return InvalidArgument(std::string("cannot be compiled: ") + e.what());
  }
}

}  // namespace tf::jobs
