// The example training job (examples/llama-train/) end to end, with a tiny model and a corpus
// written by the test: the PyTorch script trains and exports a Hugging Face Llama checkpoint
// that the engine loads, with the PyTorch model's logits and the Python tokenizer's ids; a run
// stopped by SIGTERM resumes to the weights of a run never stopped; a torn checkpoint is
// ignored; two ranks over gloo end with identical weights. Skipped where /usr/bin/python3 cannot
// import torch.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "child_process.h"
#include "engine/formats/safetensors.h"
#include "engine/model.h"
#include "engine/tokenizers/tokenizer.h"
#include "engine_test_util.h"
#include "program_run.h"
#include "store_test_env.h"

namespace tf::testing {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kPython[] = "/usr/bin/python3";
// Generous: the machine running the tests may be busy with builds.
constexpr std::chrono::minutes kRunTimeout(5);

std::string ExampleFile(const std::string& name) {
  return std::string(TENSORFLEET_SOURCE_DIR) + "/examples/llama-train/" + name;
}

constexpr char kNoTorch[] =
    "/usr/bin/python3 cannot import torch and numpy (Debian's python3-torch and python3-numpy; "
    "scripts/install-deps.sh installs them), so the example cannot run";

// Fortune-format text: entries between lines holding "%". Contractions, digits, runs of spaces,
// tabs and a few non-ASCII letters, so that the tokenizer meets every kind of piece.
constexpr char kCorpus[] =
    "A journey of a thousand miles begins with a single step.\n"
    "\t\t-- Lao Tzu\n%\n"
    "It's not a bug, it's a feature.  We'll fix it in release 2.0.1,\n"
    "or maybe in 3.14 -- who's counting?\n%\n"
    "The café on the corner serves crème brûlée at 9:30 every morning.\n%\n"
    "Q: How many programmers does it take to change a light bulb?\n"
    "A: None, that's a hardware problem.\n%\n"
    "There are 10 kinds of people: those who understand binary and those who don't.\n%\n"
    "You'd better not   leave   spaces    where they don't belong!\n%\n"
    "Über den Wolken muss die Freiheit wohl grenzenlos sein.\n%\n"
    "I've seen things you people wouldn't believe... 1,234,567 of them.\n%\n"
    "Simple things should be simple; complex things should be possible.\n"
    "\t\t-- Alan Kay\n%\n"
    "Premature optimization is the root of all evil (or at least most of it).\n%\n"
    "Never trust a computer you can't throw out a window.\n\t\t-- Steve Wozniak\n%\n"
    "Odd\u00a0\u00a0spaces\u00a0\u00a0here,\u3000\u3000there\u00a0\u00a0and\u00a0\u00a0everywhere."
    "\n"
    "Odd\u00a0\u00a0spaces\u00a0\u00a0here,\u3000\u3000there\u00a0\u00a0and\u00a0\u00a0everywhere."
    "\n";

// What the engine and the Python tokenizer must split the same way.
const std::vector<std::string> kSampleTexts = {
    "Hello, world! It's 2024; we'll see.",
    "  leading spaces,\ttabs\n\nnewlines and trailing spaces   ",
    "naïve café 日本語 Ωμέγα ½ ⅷ — “quotes” 🙂",
    "a <|endoftext|> b",
    "I'M SHOUTING'LL 's't",
    "no\u00a0break, ideographic\u3000space, \x1c separators\x1f, eeeeeeee  \t\n x",
    "odd\u00a0\u00a0spaces\u00a0\u00a0\u00a0there,\u3000\u3000here",
};

// A tiny model, so that a run takes seconds.
Json SmallRun(int steps) {
  Json hp = Json::parse(R"({
      "batch_size": 4, "seq_len": 32, "hidden_size": 32, "intermediate_size": 64,
      "num_layers": 2, "num_heads": 4, "num_kv_heads": 2, "bpe_merges": 64, "threads": 1,
      "log_every": 1, "checkpoint_every": 100, "seed": 7, "lr": 0.01, "warmup_steps": 2})");
  hp["steps"] = steps;
  return hp;
}

// One job's directories under the test's temporary directory, as tensorfleet would set them.
class JobDirs {
 public:
  JobDirs(const fs::path& root, const std::string& name) : root_(root / name) {
    fs::create_directories(root_);
  }
  fs::path checkpoints() const { return root_ / "checkpoints"; }
  fs::path model() const { return root_ / "output" / "model"; }
  fs::path metrics() const { return root_ / "metrics.jsonl"; }

  std::vector<std::string> Env(const Json& hp, std::vector<std::string> extra = {}) const {
    extra.insert(extra.end(), {"TENSORFLEET_HYPERPARAMETERS=" + hp.dump(),
                               "TENSORFLEET_CHECKPOINT_DIR=" + checkpoints().string(),
                               "TENSORFLEET_OUTPUT_DIR=" + (root_ / "output").string(),
                               "TENSORFLEET_METRICS_FILE=" + metrics().string()});
    return extra;
  }

 private:
  fs::path root_;
};

ProgramRun WaitFor(ChildProcess& p) {
  int status = p.Wait();
  return {ExitCode(status), p.output()};
}

ProgramRun Train(const JobDirs& job, const Json& hp) {
  ChildProcess p;
  EXPECT_TRUE(p.Start({kPython, ExampleFile("train.py")}, job.Env(hp)));
  return WaitFor(p);
}

// The loss printed for `step` ("step=N loss=X"), or NaN if none was.
double LossAt(const std::string& output, int step) {
  std::smatch m;
  std::regex re("(^|\n)step=" + std::to_string(step) + " loss=([0-9.]+)");
  return std::regex_search(output, m, re) ? std::stod(m[2]) : std::nan("");
}

std::vector<float> TensorFloats(const engine::TensorView& t) {
  std::vector<float> out(static_cast<size_t>(t.NumElements()));
  std::memcpy(out.data(), t.data, out.size() * sizeof(float));
  return out;
}

// The largest difference between two exported models' tensors (they must have the same names
// and shapes).
double MaxWeightDifference(const fs::path& a, const fs::path& b) {
  auto fa = engine::SafetensorsFile::Open((a / "model.safetensors").string());
  auto fb = engine::SafetensorsFile::Open((b / "model.safetensors").string());
  EXPECT_TRUE(fa.ok() && fb.ok());
  if (!fa.ok() || !fb.ok()) return INFINITY;
  EXPECT_EQ((*fa)->tensors().size(), (*fb)->tensors().size());
  double worst = 0;
  for (const auto& ta : (*fa)->tensors()) {
    const engine::TensorView* tb = (*fb)->Find(ta.name);
    EXPECT_NE(tb, nullptr) << ta.name;
    if (tb == nullptr) return INFINITY;
    EXPECT_EQ(ta.shape, tb->shape) << ta.name;
    if (ta.shape != tb->shape) return INFINITY;
    auto va = TensorFloats(ta), vb = TensorFloats(*tb);
    for (size_t i = 0; i < va.size(); ++i) {
      worst = std::max(worst, static_cast<double>(std::fabs(va[i] - vb[i])));
    }
  }
  return worst;
}

class ExampleTraining : public ::testing::Test {
 protected:
  void SetUp() override {
    corpus_ = dir_.path() / "corpus.txt";
    WriteFileBytes(corpus_.string(), kCorpus);
  }

  Json Hyperparameters(int steps) const {
    Json hp = SmallRun(steps);
    hp["corpus"] = corpus_.string();
    return hp;
  }

  TempDir dir_;
  fs::path corpus_;
};

TEST_F(ExampleTraining, ExportIsServedByTheEngineWithPyTorchsLogits) {
  if (!PythonHasTorch()) GTEST_SKIP() << kNoTorch;
  JobDirs job(dir_.path(), "job");
  ProgramRun run = Train(job, Hyperparameters(6));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("starting from scratch"));
  EXPECT_THAT(run.output, HasSubstr("exported the model to " + job.model().string()));
  for (int step = 1; step <= 6; ++step) EXPECT_FALSE(std::isnan(LossAt(run.output, step)));
  for (const char* name : {"config.json", "model.safetensors", "tokenizer.json",
                           "tokenizer_config.json", "generation_config.json"}) {
    EXPECT_TRUE(fs::exists(job.model() / name)) << name;
  }

  // The metrics file has one line per reported loss, as printed.
  std::vector<std::string> lines;
  std::string metrics = ReadFileBytes(job.metrics().string());
  for (size_t at = 0, end; (end = metrics.find('\n', at)) != std::string::npos; at = end + 1) {
    lines.push_back(metrics.substr(at, end - at));
  }
  ASSERT_EQ(lines.size(), 6u) << metrics;
  for (int i = 0; i < 6; ++i) {
    Json m = Json::parse(lines[i]);
    EXPECT_EQ(m["name"], "loss");
    EXPECT_EQ(m["step"], i + 1);
    EXPECT_NEAR(m["value"].get<double>(), LossAt(run.output, i + 1), 5e-5);
  }

  // PyTorch's view: the prompt's ids and logits from the training checkpoint, and the ids of
  // the sample texts.
  const std::string prompt = "Q: How many programmers does it take?";
  std::vector<std::string> argv = {kPython,
                                   ExampleFile("dump_logits.py"),
                                   "--checkpoint-dir",
                                   job.checkpoints().string(),
                                   "--prompt",
                                   prompt,
                                   "--out",
                                   (dir_.path() / "logits.json").string()};
  for (const auto& t : kSampleTexts) argv.insert(argv.end(), {"--text", t});
  ChildProcess dump;
  ASSERT_TRUE(dump.Start(argv));
  ProgramRun dumped = WaitFor(dump);
  ASSERT_EQ(dumped.exit_code, 0) << dumped.output;
  Json ref = Json::parse(ReadFileBytes((dir_.path() / "logits.json").string()));

  // The engine's tokenizer, read from the export, splits every text as Python did.
  auto tokenizer = engine::LoadTokenizer(job.model().string());
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status().ToString();
  auto prompt_ids = (*tokenizer)->Encode(prompt, /*add_special_tokens=*/true);
  ASSERT_TRUE(prompt_ids.ok());
  EXPECT_EQ(*prompt_ids, ref["prompt_ids"].get<std::vector<int32_t>>());
  for (size_t i = 0; i < kSampleTexts.size(); ++i) {
    auto ids = (*tokenizer)->Encode(kSampleTexts[i], /*add_special_tokens=*/false);
    ASSERT_TRUE(ids.ok()) << kSampleTexts[i];
    EXPECT_EQ(*ids, ref["encodings"][i].get<std::vector<int32_t>>()) << kSampleTexts[i];
    EXPECT_EQ((*tokenizer)->DecodeText(*ids, /*skip_special_tokens=*/false), kSampleTexts[i]);
  }

  // The engine's logits at every position of the prompt are PyTorch's.
  auto model = engine::Model::Load(job.model().string(), {.num_threads = 1});
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  auto ids = ref["prompt_ids"].get<std::vector<int32_t>>();
  auto cache = (*model)->NewCache(static_cast<int64_t>(ids.size()));
  std::vector<float> logits;
  ASSERT_TRUE((*model)->Forward(ids, cache.get(), /*all_positions=*/true, &logits).ok());
  int64_t vocab = (*model)->config().vocab_size;
  ASSERT_EQ(logits.size(), ids.size() * static_cast<size_t>(vocab));
  double worst = 0;
  for (size_t pos = 0; pos < ids.size(); ++pos) {
    auto row = ref["logits"][pos].get<std::vector<double>>();
    ASSERT_EQ(row.size(), static_cast<size_t>(vocab));
    for (int64_t v = 0; v < vocab; ++v) {
      worst = std::max(worst, std::fabs(logits[pos * vocab + v] - row[v]));
    }
  }
  EXPECT_LT(worst, 1e-4) << "largest logit difference between the engine and PyTorch";

  // The tensorfleet binary generates from it.
  ChildProcess generate;
  ASSERT_TRUE(generate.Start({TENSORFLEET_BINARY, "--json", "engine", "generate", "--model",
                              job.model().string(), "--prompt", prompt, "--max-tokens", "5",
                              "--ignore-eos", "--threads", "1"}));
  ProgramRun generated = WaitFor(generate);
  ASSERT_EQ(generated.exit_code, 0) << generated.output;
  Json g = Json::parse(generated.output, nullptr, false);
  ASSERT_FALSE(g.is_discarded()) << generated.output;
  EXPECT_EQ(g["token_ids"].size(), 5u);
  EXPECT_EQ(g["prompt_tokens"], ids.size());
}

TEST_F(ExampleTraining, SigtermSavesACheckpointAndTheRerunEndsWithTheSameWeights) {
  if (!PythonHasTorch()) GTEST_SKIP() << kNoTorch;
  constexpr int kSteps = 10;
  JobDirs stopped(dir_.path(), "stopped");
  Json slow = Hyperparameters(kSteps);
  slow["slow_step_ms"] = 400;  // a step takes at least this long, so the signal lands mid-run
  ChildProcess p;
  ASSERT_TRUE(p.Start({kPython, ExampleFile("train.py")}, stopped.Env(slow)));
  ASSERT_TRUE(p.WaitForOutput("step=3 loss=", kRunTimeout)) << p.output();
  p.Kill(SIGTERM);
  ProgramRun first = WaitFor(p);
  ASSERT_EQ(first.exit_code, 0) << first.output;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(first.output, m,
                                std::regex("interrupted at step ([0-9]+): checkpoint saved")))
      << first.output;
  int k = std::stoi(m[1]);
  EXPECT_GE(k, 3);
  ASSERT_LT(k, kSteps) << "the run finished before the signal arrived";
  EXPECT_FALSE(fs::exists(stopped.model())) << "an interrupted run must not export";

  ProgramRun second = Train(stopped, Hyperparameters(kSteps));
  ASSERT_EQ(second.exit_code, 0) << second.output;
  EXPECT_THAT(second.output, HasSubstr("resumed from step " + std::to_string(k) + "\n"));
  EXPECT_THAT(second.output, Not(HasSubstr("step=" + std::to_string(k) + " loss=")));
  EXPECT_FALSE(std::isnan(LossAt(second.output, k + 1))) << "the step counter continues";

  JobDirs straight(dir_.path(), "straight");
  ProgramRun whole = Train(straight, Hyperparameters(kSteps));
  ASSERT_EQ(whole.exit_code, 0) << whole.output;
  // The same data in the same order: the same losses after the resume...
  for (int step = k + 1; step <= kSteps; ++step) {
    EXPECT_EQ(LossAt(second.output, step), LossAt(whole.output, step)) << "step " << step;
  }
  // ...and the same final weights.
  EXPECT_LE(MaxWeightDifference(stopped.model(), straight.model()), 1e-6);
}

TEST_F(ExampleTraining, ATornCheckpointFileIsIgnored) {
  if (!PythonHasTorch()) GTEST_SKIP() << kNoTorch;
  JobDirs job(dir_.path(), "job");
  const fs::path complete = job.checkpoints() / "checkpoint.pt";
  const fs::path torn = job.checkpoints() / "checkpoint.pt.tmp";

  // A kill during the first torch.save leaves only the temporary file: the run starts over.
  fs::create_directories(job.checkpoints());
  WriteFileBytes(torn.string(), "PK\x03\x04 the start of a zip archive");
  ProgramRun first = Train(job, Hyperparameters(4));
  ASSERT_EQ(first.exit_code, 0) << first.output;
  EXPECT_THAT(first.output, HasSubstr("starting from scratch"));
  EXPECT_FALSE(fs::exists(torn)) << "the next save replaces the temporary file";
  ASSERT_TRUE(fs::exists(complete));

  // A kill during a later save leaves the previous checkpoint and a torn copy of a new one.
  std::string bytes = ReadFileBytes(complete.string());
  WriteFileBytes(torn.string(), bytes.substr(0, bytes.size() / 2));
  ProgramRun second = Train(job, Hyperparameters(6));
  ASSERT_EQ(second.exit_code, 0) << second.output;
  EXPECT_THAT(second.output, HasSubstr("resumed from step 4\n"));
  EXPECT_FALSE(std::isnan(LossAt(second.output, 6))) << second.output;
}

TEST_F(ExampleTraining, TwoRanksOverGlooEndWithIdenticalWeights) {
  if (!PythonHasTorch()) GTEST_SKIP() << kNoTorch;
  JobDirs job(dir_.path(), "job");
  Json hp = Hyperparameters(4);
  std::string port = std::to_string(FreePort());
  ChildProcess ranks[2];
  for (int r = 0; r < 2; ++r) {
    std::vector<std::string> env = {"MASTER_ADDR=127.0.0.1",
                                    "MASTER_PORT=" + port,
                                    "WORLD_SIZE=2",
                                    "RANK=" + std::to_string(r),
                                    "LOCAL_RANK=" + std::to_string(r),
                                    "LOCAL_WORLD_SIZE=2",
                                    "GROUP_RANK=0",
                                    "NODE_RANK=0"};
    ASSERT_TRUE(ranks[r].Start({kPython, ExampleFile("train.py")}, job.Env(hp, env)));
  }
  ProgramRun done[2] = {WaitFor(ranks[0]), WaitFor(ranks[1])};
  std::string digests[2];
  for (int r = 0; r < 2; ++r) {
    ASSERT_EQ(done[r].exit_code, 0) << "rank " << r << ":\n" << done[r].output;
    std::smatch m;
    std::string line = "rank " + std::to_string(r) + " final weights sha256=([0-9a-f]{64})";
    ASSERT_TRUE(std::regex_search(done[r].output, m, std::regex(line))) << done[r].output;
    digests[r] = m[1];
  }
  EXPECT_EQ(digests[0], digests[1]) << "the ranks' weights differ";
  EXPECT_THAT(done[0].output, HasSubstr("2 rank(s)"));
  EXPECT_TRUE(fs::exists(job.model() / "model.safetensors")) << "rank 0 exports";

  // Each rank read its own half of every batch: the first loss (before any update) averaged
  // over the ranks is the loss of one process reading the whole batch.
  JobDirs alone(dir_.path(), "alone");
  ProgramRun single = Train(alone, Hyperparameters(1));
  ASSERT_EQ(single.exit_code, 0) << single.output;
  EXPECT_NEAR(LossAt(done[0].output, 1), LossAt(single.output, 1), 2e-4);
}

}  // namespace
}  // namespace tf::testing
