// The strict JSON parser for outside input (base/json_parse.h): the same documents nlohmann's
// parser gives, and clear refusals of duplicate keys, deep nesting and bad syntax.
#include "base/json_parse.h"

#include <gtest/gtest.h>

#include <string>

namespace tf::testing {
namespace {

using Json = nlohmann::json;

std::string Refusal(std::string_view text, JsonLimits limits = {}) {
  auto parsed = ParseJsonStrict(text, "request body", limits);
  if (parsed.ok()) return "accepted: " + parsed->dump();
  EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
  return parsed.status().message();
}

TEST(JsonParseTest, GivesTheSameDocumentAsNlohmannsParser) {
  for (
      const char* text :
      {R"({"a":1,"b":[1,2.5,{"c":true,"d":null}],"e":"x\u00e9\n","f":-7,"g":18446744073709551615})",
       R"([])", R"({})", R"("just a string")", R"(42)", R"([[[{"deep":[1]}]]])",
       R"({"nested":{"a":{"b":{"c":[{"d":1},{"d":2}]}}},"after":"yes"})"}) {
    auto parsed = ParseJsonStrict(text, "body");
    ASSERT_TRUE(parsed.ok()) << text << ": " << parsed.status().ToString();
    EXPECT_EQ(*parsed, Json::parse(text)) << text;
    EXPECT_EQ(parsed->dump(), Json::parse(text).dump()) << text;
  }
}

TEST(JsonParseTest, RefusesAKeyGivenTwiceNamingItAndItsObject) {
  EXPECT_EQ(Refusal(R"({"a":1,"a":2})"),
            "request body has the key 'a' twice in the object at the top level");
  EXPECT_EQ(Refusal(R"({"messages":[{"role":"user"},{"role":"user","role":"system"}]})"),
            "request body has the key 'role' twice in the object at 'messages[1]'");
  EXPECT_EQ(Refusal(R"({"a":{"b":{"c":1,"c":1}}})"),
            "request body has the key 'c' twice in the object at 'a.b'");
  // The same key in different objects is fine.
  EXPECT_EQ(Refusal(R"({"a":{"x":1},"b":{"x":1}})"), R"(accepted: {"a":{"x":1},"b":{"x":1}})");
}

TEST(JsonParseTest, RefusesNestingDeeperThanTheLimit) {
  const std::string at_limit = std::string(kMaxJsonDepth, '[') + std::string(kMaxJsonDepth, ']');
  EXPECT_TRUE(ParseJsonStrict(at_limit, "body").ok());
  const std::string over =
      std::string(kMaxJsonDepth + 1, '[') + std::string(kMaxJsonDepth + 1, ']');
  EXPECT_EQ(Refusal(over).rfind("request body nests deeper than 64 arrays and objects (at '[0]", 0),
            0u)
      << Refusal(over);
  EXPECT_EQ(Refusal(R"({"a":{"b":[1]}})", JsonLimits{.max_depth = 2}),
            "request body nests deeper than 2 arrays and objects (at 'a')");
}

TEST(JsonParseTest, AHostileBodyOfOpeningBracketsIsRefusedAtTheLimitNotParsedWhole) {
  // 8 MB of '[' used to be parsed whole (700 MB of memory); the parse now stops at the limit.
  const std::string hostile(8 << 20, '[');
  auto parsed = ParseJsonStrict(hostile, "request body");
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.status().message().find("nests deeper than 64"), std::string::npos);
}

TEST(JsonParseTest, BadSyntaxNamesTheByteOffsetAndWhatWasWrong) {
  EXPECT_EQ(Refusal("[1,2"),
            "request body is not valid JSON at byte offset 4: syntax error while parsing array - "
            "unexpected end of input; expected ']'");
  EXPECT_EQ(Refusal(R"({"a":1,})"),
            "request body is not valid JSON at byte offset 7: syntax error while parsing object "
            "key - unexpected '}'; expected string literal");
  EXPECT_EQ(Refusal(R"({"a":1e999})"),
            "request body is not valid JSON at byte offset 9: number overflow parsing '1e999'");
  EXPECT_EQ(Refusal(""),
            "request body is not valid JSON at byte offset 0: syntax error while parsing value - "
            "unexpected end of input; expected '[', '{', or a literal");
}

}  // namespace
}  // namespace tf::testing
