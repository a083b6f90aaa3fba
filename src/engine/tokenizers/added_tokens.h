// Added tokens (special or not): strings matched in the raw text before any splitting, each
// becoming its own id.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tf::engine {

struct AddedToken {
  int32_t id = 0;
  std::string content;
  bool special = false;
  bool lstrip = false;       // swallows the whitespace before it
  bool rstrip = false;       // swallows the whitespace after it
  bool single_word = false;  // matches only when no word character touches it
};

class AddedTokenMatcher {
 public:
  explicit AddedTokenMatcher(std::vector<AddedToken> tokens);

  struct Segment {
    std::string_view text;  // plain text to tokenize, when id < 0
    int32_t id = -1;        // an added token
  };
  // Splits valid UTF-8 text at the added tokens it contains: at each position the longest
  // token that matches, the leftmost match first.
  std::vector<Segment> Split(std::string_view text) const;

  const AddedToken* Find(int32_t id) const;

 private:
  // The longest token matching text at `pos` (honouring single_word), or null.
  const AddedToken* LongestAt(std::string_view text, size_t pos) const;

  std::vector<AddedToken> tokens_;
  std::vector<std::vector<size_t>> by_first_byte_;  // [256] -> indices into tokens_
  std::unordered_map<int32_t, size_t> by_id_;
};

}  // namespace tf::engine
