// Well-formed UTF-8 (base/utf8.h), the one copy of the rules every reader of outside text uses:
// Unicode's table 3-7 at each of its edges.
#include "base/utf8.h"

#include <gtest/gtest.h>

#include <string>

namespace tf::testing {
namespace {

TEST(Utf8Test, EachEdgeOfTable3_7) {
  struct Case {
    std::string bytes;
    size_t length;  // of the sequence at the start; 0: not well-formed
  };
  const Case cases[] = {
      {"", 0},
      {"a", 1},
      {"\x7f", 1},
      {"\x80", 0},              // a continuation byte alone
      {"\xc1\xbf", 0},          // overlong two-byte form of U+007F
      {"\xc2\x80", 2},          // U+0080
      {"\xdf\xbf", 2},          // U+07FF
      {"\xe0\x9f\xbf", 0},      // overlong three-byte form
      {"\xe0\xa0\x80", 3},      // U+0800
      {"\xed\x9f\xbf", 3},      // U+D7FF
      {"\xed\xa0\x80", 0},      // U+D800, a surrogate
      {"\xed\xbf\xbf", 0},      // U+DFFF, a surrogate
      {"\xee\x80\x80", 3},      // U+E000
      {"\xef\xbf\xbf", 3},      // U+FFFF
      {"\xf0\x8f\xbf\xbf", 0},  // overlong four-byte form
      {"\xf0\x90\x80\x80", 4},  // U+10000
      {"\xf4\x8f\xbf\xbf", 4},  // U+10FFFF
      {"\xf4\x90\x80\x80", 0},  // past U+10FFFF
      {"\xf5\x80\x80\x80", 0},
      {"\xff", 0},
      {"\xe2\x82", 0},      // cut short
      {"\xe2\x28\xa1", 0},  // a second byte that is not a continuation
  };
  for (const Case& c : cases) {
    EXPECT_EQ(Utf8SequenceLength(c.bytes), c.length) << ::testing::PrintToString(c.bytes);
    EXPECT_EQ(IsValidUtf8(c.bytes), c.length == c.bytes.size())
        << ::testing::PrintToString(c.bytes);
  }
}

TEST(Utf8Test, DecodesAndEncodesEveryLength) {
  for (char32_t c : {U'a', U'\u00e9', U'\u20ac', U'\U0001F600', U'\U0010FFFF'}) {
    std::string encoded;
    AppendUtf8(c, &encoded);
    size_t length = 0;
    EXPECT_EQ(DecodeUtf8At(encoded, &length), c);
    EXPECT_EQ(length, encoded.size());
  }
  size_t length = 7;
  EXPECT_EQ(DecodeUtf8At("\xc0\xaf", &length), 0u);
  EXPECT_EQ(length, 0u);
}

TEST(Utf8Test, LongTextIsCheckedPastItsAsciiRuns) {
  // The ASCII runs are checked eight bytes at a time; a bad byte anywhere after them is found.
  std::string text(1000, 'x');
  EXPECT_TRUE(IsValidUtf8(text));
  for (size_t at : {0u, 7u, 8u, 500u, 999u}) {
    std::string bad = text;
    bad[at] = '\xff';
    EXPECT_FALSE(IsValidUtf8(bad)) << at;
  }
  EXPECT_TRUE(IsValidUtf8(text + "\xe2\x82\xac" + text));
  EXPECT_FALSE(IsValidUtf8(text + "\xe2\x82"));
}

}  // namespace
}  // namespace tf::testing
