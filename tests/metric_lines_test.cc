// How a job reports metrics (jobs/metric_lines.h): JSON lines in $TENSORFLEET_METRICS_FILE and
// metric definitions' regexes over stdout.
#include "jobs/metric_lines.h"

#include <gtest/gtest.h>

#include <string>

#include "jobs/metric_regex.h"

namespace tf::jobs {
namespace {

TEST(MetricLineTest, ReadsNameValueAndStep) {
  auto sample = ParseMetricLine(R"({"name": "loss", "value": 1.23, "step": 10})");
  ASSERT_TRUE(sample.ok()) << sample.status().ToString();
  EXPECT_EQ(*sample, (MetricSample{"loss", 1.23, 10}));

  auto no_step = ParseMetricLine(R"({"value": 3, "name": "eval/bleu"})"
                                 "\r");
  ASSERT_TRUE(no_step.ok()) << no_step.status().ToString();
  EXPECT_EQ(*no_step, (MetricSample{"eval/bleu", 3, -1}));

  auto float_step = ParseMetricLine(R"({"name": "train:acc", "value": -0.5, "step": 20.0})");
  ASSERT_TRUE(float_step.ok()) << float_step.status().ToString();
  EXPECT_EQ(float_step->step, 20);

  auto null_step = ParseMetricLine(R"({"name": "a", "value": 1e-3, "step": null})");
  ASSERT_TRUE(null_step.ok()) << null_step.status().ToString();
  EXPECT_EQ(null_step->step, -1);
}

TEST(MetricLineTest, BadLinesSayWhy) {
  struct Case {
    std::string line;
    std::string reason;
  };
  const Case cases[] = {
      {"", "empty line"},
      {"   ", "empty line"},
      {"loss=1.2", "not valid JSON"},
      {R"({"name": "loss", "value": NaN})", "not valid JSON"},  // Python's json.dumps(nan)
      {"[1, 2]", "not a JSON object"},
      {R"({"value": 1})", "\"name\" is missing"},
      {R"({"name": "loss"})", "\"value\" is missing"},
      {R"({"name": "1loss", "value": 1})", "\"name\" must be a string of letters"},
      {R"({"name": 5, "value": 1})", "\"name\" must be a string of letters"},
      {R"({"name": "loss", "value": "1.2"})", "\"value\" must be a number"},
      {R"({"name": "loss", "value": 1, "step": -1})", "\"step\" must be a whole number >= 0"},
      {R"({"name": "loss", "value": 1, "step": 1.5})", "\"step\" must be a whole number >= 0"},
      {R"({"name": "loss", "value": 1, "stpe": 1})", "unknown field \"stpe\""},
      {R"({"name": "loss", "value": 1})" + std::string(kMaxMetricLineBytes, ' '),
       "line is longer than 4096 bytes"},
  };
  for (const Case& c : cases) {
    auto sample = ParseMetricLine(c.line);
    ASSERT_FALSE(sample.ok()) << c.line;
    EXPECT_EQ(sample.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(sample.status().message().substr(0, c.reason.size()), c.reason) << c.line;
  }
}

TEST(MetricMatcherTest, EachMatchingDefinitionGivesOneSample) {
  auto matcher = MetricMatcher::Create({{"loss", "loss[=: ]+([-+0-9.eE]+)"},
                                        {"accuracy", R"(acc=([0-9.]+)%)"},
                                        {"lr", R"(lr (\S+))"}});
  ASSERT_TRUE(matcher.ok()) << matcher.status().ToString();
  EXPECT_EQ(matcher->Match("step=10 loss=2.5 acc=91.5%"),
            (std::vector<MetricSample>{{"loss", 2.5, -1}, {"accuracy", 91.5, -1}}));
  EXPECT_EQ(matcher->Match("Train loss: 3.1e-2"), (std::vector<MetricSample>{{"loss", 0.031, -1}}));
  EXPECT_TRUE(matcher->Match("nothing to see").empty());
  // A capture that is not a number gives nothing.
  EXPECT_TRUE(matcher->Match("lr warmup").empty());
  EXPECT_TRUE(matcher->Match("loss=nan").empty());
  EXPECT_EQ(matcher->Match("lr +0.25"), (std::vector<MetricSample>{{"lr", 0.25, -1}}));
}

TEST(MetricMatcherTest, OnlyTheStartOfALongLineIsRead) {
  auto matcher = MetricMatcher::Create({{"loss", "loss=([0-9.]+)"}});
  ASSERT_TRUE(matcher.ok());
  std::string line = std::string(kMaxMatchedLineBytes - 10, 'a') + " loss=1.5 ";
  EXPECT_EQ(matcher->Match(line), (std::vector<MetricSample>{{"loss", 1.5, -1}}));
  std::string later = std::string(kMaxMatchedLineBytes, 'a') + " loss=1.5";
  EXPECT_TRUE(matcher->Match(later).empty());
  // A pattern that backtracks and recurses per character, over a 1 MiB line, ends (on the
  // first KiB only) without exhausting the stack.
  auto slow = MetricMatcher::Create({{"any", "(.*)x"}});
  ASSERT_TRUE(slow.ok());
  EXPECT_TRUE(slow->Match(std::string(1 << 20, 'b')).empty());
}

TEST(MetricMatcherTest, BadDefinitionsAreNamed) {
  auto matcher = MetricMatcher::Create({{"ok", "a(1)"}, {"bad", "b("}});
  ASSERT_FALSE(matcher.ok());
  EXPECT_EQ(matcher.status().message().rfind("metrics[1].regex: is not a valid regular", 0), 0u)
      << matcher.status().message();
  // The one-off form skips what does not compile.
  EXPECT_EQ(MatchMetricDefinitions({{"bad", "b("}, {"ok", "v=([0-9]+)"}}, "v=7"),
            (std::vector<MetricSample>{{"ok", 7, -1}}));
}

TEST(MetricRegexTest, RefusesWhatWouldBeSlowOrWrong) {
  EXPECT_TRUE(CompileMetricRegex("loss=([0-9.]+)").ok());
  EXPECT_TRUE(CompileMetricRegex("(?:epoch|step) ([0-9]+)").ok());
  EXPECT_TRUE(CompileMetricRegex("x{3}([0-9]{1,20})").ok());
  EXPECT_TRUE(CompileMetricRegex(R"(\((\d+)\))").ok());    // escaped parentheses are not groups
  EXPECT_TRUE(CompileMetricRegex("[(]([0-9]+)[)]").ok());  // nor are ones in a class
  EXPECT_FALSE(CompileMetricRegex("").ok());
  EXPECT_FALSE(CompileMetricRegex("loss").ok());
  EXPECT_FALSE(CompileMetricRegex("(a)(b)").ok());
  EXPECT_FALSE(CompileMetricRegex("(unclosed").ok());
  EXPECT_FALSE(CompileMetricRegex("[z-a]([0-9]+)").ok());
  EXPECT_FALSE(CompileMetricRegex(std::string(kMaxMetricRegexBytes + 1, 'a') + "(1)").ok());
  EXPECT_FALSE(CompileMetricRegex("(a{10000})").ok());
  EXPECT_FALSE(CompileMetricRegex("((a{100}){100})").ok());
  EXPECT_FALSE(CompileMetricRegex("(a{99999999999999999999})").ok());
  EXPECT_FALSE(CompileMetricRegex("{99999999999999999999}(a)").ok());
  EXPECT_EQ(CompileMetricRegex(R"((\d+) \1)").status().message(),
            "must not use back-references (\\1)");
  EXPECT_FALSE(CompileMetricRegex(R"(x(\d+)\99999999999999999999999)").ok());
  EXPECT_TRUE(CompileMetricRegex(R"(\\1=(\d+))").ok());  // an escaped backslash, then "1"
  EXPECT_FALSE(CompileMetricRegex(std::string(40, '(') + "a" + std::string(40, ')')).ok());
  auto nested = CompileMetricRegex(std::string(40, '(') + "a" + std::string(40, ')'));
  EXPECT_EQ(nested.status().message(), "nests groups more than 32 deep");
}

}  // namespace
}  // namespace tf::jobs
