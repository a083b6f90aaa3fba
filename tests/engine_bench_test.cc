// `tensorfleet engine bench`: the measurement's bookkeeping under a scripted clock, and the real
// binary on the llama-gqa test checkpoint (its report's fields and its errors). No assertion
// depends on how fast anything ran.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "cli/engine_bench_measure.h"
#include "engine/model.h"
#include "engine_test_util.h"
#include "program_run.h"

namespace tf::testing {
namespace {

using ::testing::HasSubstr;

std::vector<std::string> Bench(std::vector<std::string> extra) {
  std::vector<std::string> args = {"engine", "bench", "--model", EngineData("llama-gqa")};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

TEST(EngineBenchTiming, MeanAndStddevOfTheRepetitionsRates) {
  cli::BenchTiming t;
  t.tokens = 100;
  EXPECT_EQ(t.MeanTokensPerSecond(), 0);
  t.seconds = {1.0, 2.0};  // 100 and 50 tokens/s
  EXPECT_DOUBLE_EQ(t.MeanTokensPerSecond(), 75.0);
  EXPECT_NEAR(t.StddevTokensPerSecond(), 35.3553, 1e-4);
  t.seconds = {4.0};
  EXPECT_DOUBLE_EQ(t.MeanTokensPerSecond(), 25.0);
  EXPECT_EQ(t.StddevTokensPerSecond(), 0);
}

// Whole multiples of `unit`, at least one.
void ExpectWholeUnits(const std::vector<double>& seconds, double unit) {
  for (double s : seconds) {
    EXPECT_GE(s, unit);
    EXPECT_DOUBLE_EQ(s / unit, std::round(s / unit)) << s;
  }
}

TEST(EngineBenchMeasure, CountsTokensAndTimesOnTheGivenClock) {
  engine::ModelOptions options;
  options.num_threads = 1;
  auto model = engine::Model::Load(EngineData("llama-gqa"), options);
  ASSERT_TRUE(model.ok()) << model.status().message();
  // Every reading of the clock moves it on by 1000 s, so every interval measured on it is a
  // whole number of 1000 s, whatever the machine does.
  double clock = 0;
  auto now = [&clock] { return clock += 1000; };
  std::vector<std::string> progress;
  cli::EngineBenchSettings s;
  s.prompt_tokens = 20;
  s.gen_tokens = 6;
  s.stream_gen_tokens = 3;
  s.context_tokens = 5;
  s.streams = {1, 3};
  s.repetitions = 2;
  auto report = cli::MeasureEngine(**model, s, now,
                                   [&](std::string_view line) { progress.emplace_back(line); });
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_EQ(report->prefill.tokens, 20);
  ASSERT_EQ(report->prefill.seconds.size(), 2u);
  ExpectWholeUnits(report->prefill.seconds, 1000);
  ASSERT_EQ(report->decode.size(), 2u);
  EXPECT_EQ(report->decode[0].streams, 1);
  EXPECT_EQ(report->decode[0].tokens_per_stream, 6);  // --gen for one stream
  EXPECT_EQ(report->decode[0].total.tokens, 6);
  EXPECT_EQ(report->decode[1].streams, 3);
  EXPECT_EQ(report->decode[1].tokens_per_stream, 3);  // --stream-gen for several
  EXPECT_EQ(report->decode[1].total.tokens, 9);
  for (const auto& d : report->decode) {
    ASSERT_EQ(d.total.seconds.size(), 2u);
    ExpectWholeUnits(d.total.seconds, 1000);
    EXPECT_DOUBLE_EQ(
        d.total.MeanTokensPerSecond(),
        (d.total.tokens / d.total.seconds[0] + d.total.tokens / d.total.seconds[1]) / 2);
  }
  EXPECT_EQ(progress.size(), 6u);  // two runs each of prefill, 1 stream, 3 streams
  EXPECT_EQ(report->streams_mode, "batched: one forward pass per step over every stream");
}

TEST(EngineBenchMeasure, RefusesWhatTheContextCannotHold) {
  engine::ModelOptions options;
  options.num_threads = 1;
  auto model = engine::Model::Load(EngineData("llama-gqa"), options);
  ASSERT_TRUE(model.ok());
  cli::EngineBenchSettings s;
  s.prompt_tokens = 511;  // with its one generated token, the fixture's 512 positions exactly
  s.gen_tokens = 600;
  auto report = cli::MeasureEngine(**model, s, cli::SteadySeconds, nullptr);
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.status().message(),
            "--context 1 and --gen 600 need 602 positions, more than the model's context of 512");
}

TEST(EngineBenchCli, JsonReportHasEveryMeasurement) {
  ProgramRun r = RunTensorfleet(Bench({"--prompt", "32", "--gen", "4", "--streams", "1,2",
                                       "--threads", "2", "--repeat", "2", "--json"}));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto j = nlohmann::json::parse(r.output, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.output;
  EXPECT_EQ(j["threads"], 2);
  EXPECT_EQ(j["model_type"], "llama");
  // 2 layers of (2 norms, q 64x64, k and v 32x64, o 64x64, MLP 3 x 176x64), the embedding and
  // the LM head (1024x64 each) and the final norm.
  EXPECT_EQ(j["parameters"], 223552);
  EXPECT_FALSE(j["kernels"].get<std::string>().empty());
  EXPECT_EQ(j["weights"], "16 F32");
  EXPECT_EQ(j["prefill"]["tokens"], 32);
  EXPECT_EQ(j["prefill"]["seconds"].size(), 2u);
  EXPECT_GT(j["prefill"]["tokens_per_second"].get<double>(), 0);
  ASSERT_EQ(j["decode"].size(), 2u);
  EXPECT_EQ(j["decode"][0]["streams"], 1);
  EXPECT_EQ(j["decode"][0]["tokens"], 4);
  EXPECT_EQ(j["decode"][1]["streams"], 2);
  EXPECT_EQ(j["decode"][1]["tokens"], 8);
  EXPECT_GT(j["decode"][1]["tokens_per_second"].get<double>(), 0);
  EXPECT_EQ(j["settings"]["repeat"], 2);
  // The global --json gives the same report.
  std::vector<std::string> args = Bench({"--prompt", "0", "--gen", "2", "--streams", "1"});
  args.insert(args.begin(), "--json");
  r = RunTensorfleet(args);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  j = nlohmann::json::parse(r.output, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.output;
  EXPECT_TRUE(j["prefill"].is_null());  // --prompt 0 skips it
  EXPECT_EQ(j["decode"][0]["tokens"], 2);
}

TEST(EngineBenchCli, RunsAGgufFile) {
  ProgramRun r = RunTensorfleet({"--json", "engine", "bench", "--model",
                                 EngineData("gguf/llama-gqa.q8_0.gguf"), "--prompt", "8", "--gen",
                                 "2", "--streams", "1,3"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto j = nlohmann::json::parse(r.output, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.output;
  EXPECT_EQ(j["parameters"], 223552);  // the same model as the checkpoint directory
  // The layers' projections and the LM head stay 8-bit (the embedding is F16 in this file).
  EXPECT_EQ(j["weights"], "2 F16, 14 Q8_0");
  EXPECT_EQ(j["decode"][1]["tokens"], 6);
}

TEST(EngineBenchCli, PrintsATableAndProgress) {
  ProgramRun r = RunTensorfleet(Bench({"--prompt", "16", "--gen", "3", "--streams", "1,2"}));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("prefill  16-token prompt: "));
  EXPECT_THAT(r.output, HasSubstr("STREAMS  TOKENS EACH  TOTAL TOKENS/S"));
  EXPECT_THAT(r.output, HasSubstr("decode: 2 streams, 3 tokens each"));
  EXPECT_THAT(r.output, HasSubstr("llama, 0.2M parameters: 2 layers, hidden 64, 4/2 heads"));
}

TEST(EngineBenchCli, BadFlagsAreNamed) {
  struct Case {
    std::vector<std::string> flags;
    std::string error;
  };
  std::vector<Case> cases = {
      {{"--streams", "1,0"}, "error: --streams: 0 is not between 1 and 1024"},
      {{"--streams", "1,x"}, "error: --streams: 'x' is not a stream count"},
      {{"--streams", "4,"}, "error: --streams: '' is not a stream count"},
      {{"--gen", "0"}, "error: --gen must be at least 1"},
      {{"--prompt", "-1"}, "error: --prompt must be 0 or more"},
      {{"--context", "0"}, "error: --context must be at least 1"},
      {{"--repeat", "0"}, "error: --repeat must be between 1 and 100"},
      {{"--prompt", "512"},
       "error: --prompt 512 needs 513 positions, more than the model's context of 512"},
      {{"--prompt", "8", "--context", "500", "--stream-gen", "20", "--gen", "8"},
       "error: --context 500 and --stream-gen 20 need 521 positions, more than the model's"},
  };
  for (const Case& c : cases) {
    ProgramRun r = RunTensorfleet(Bench(c.flags));
    EXPECT_EQ(r.exit_code, 1) << c.flags[0] << ": " << r.output;
    EXPECT_THAT(r.output, HasSubstr(c.error)) << c.flags[0];
  }
  ProgramRun r = RunTensorfleet({"engine", "bench", "--prompt", "8"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("--model is required"));
  r = RunTensorfleet(Bench({"--threads", "x"}));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("--threads"));
  r = RunTensorfleet({"engine", "bench", "--model", "/nonexistent/model"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.output, HasSubstr("error: /nonexistent/model/config.json"));
}

}  // namespace
}  // namespace tf::testing
