// The job spec (jobs/job_spec.h, docs/jobs-spec.md): reading YAML, the errors that name file,
// line and field, the units of durations and sizes, and the JSON form the store keeps.
#include "jobs/job_spec.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "jobs/hyperparameter_settings.h"
#include "jobs/quantities.h"

namespace tf::jobs {
namespace {

std::string ReadExample(const std::string& name) {
  std::ifstream in(std::string(TENSORFLEET_SOURCE_DIR) + "/examples/specs/" + name);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

JobSpec MustParse(const std::string& yaml) {
  auto spec = ParseJobSpec(yaml, "train.yaml");
  EXPECT_TRUE(spec.ok()) << spec.status().ToString() << "\n" << yaml;
  return spec.ok() ? *spec : JobSpec{};
}

// The error message for `yaml`, which must be refused as an invalid argument.
std::string ErrorOf(const std::string& yaml) {
  auto spec = ParseJobSpec(yaml, "train.yaml");
  EXPECT_FALSE(spec.ok()) << "accepted:\n" << yaml;
  if (spec.ok()) return "";
  EXPECT_EQ(spec.status().code(), StatusCode::kInvalidArgument) << spec.status().ToString();
  return spec.status().message();
}

const char kHead[] = "name: job\ncommand: [run]\n";  // lines 1-2 of most specs below

TEST(JobSpecTest, FullExampleReadsEveryField) {
  JobSpec spec = MustParse(ReadExample("llama-ddp.yaml"));
  EXPECT_EQ(spec.name, "llama-ddp");
  EXPECT_EQ(spec.command, (std::vector<std::string>{"python3", "train.py", "log_every=10"}));
  EXPECT_EQ(spec.code, "../llama-train");
  EXPECT_EQ(spec.env, (std::map<std::string, std::string>{{"NCCL_DEBUG", "WARN"},
                                                          {"PYTHONUNBUFFERED", "1"}}));
  EXPECT_EQ(spec.resources.gpus, 8);
  EXPECT_EQ(spec.resources.cpus, 32);
  EXPECT_EQ(spec.resources.memory_bytes, int64_t{200} << 30);
  EXPECT_EQ(spec.nodes, 2);
  EXPECT_EQ(spec.processes_per_node, "gpu");
  EXPECT_EQ(spec.hyperparameters, nlohmann::json({{"steps", 3000},
                                                  {"lr", 3.0e-4},
                                                  {"batch_size", 64},
                                                  {"tie_word_embeddings", false},
                                                  {"corpus", ""}}));
  EXPECT_TRUE(spec.hyperparameters["steps"].is_number_integer());
  EXPECT_TRUE(spec.hyperparameters["lr"].is_number_float());
  EXPECT_EQ(spec.checkpoint.dir, "checkpoints");
  EXPECT_EQ(spec.checkpoint.sync_interval_ms, 2 * kMinuteMs);
  EXPECT_TRUE(spec.checkpoint.enabled);
  EXPECT_TRUE(spec.retry.on_interruption);
  EXPECT_TRUE(spec.retry.on_node_lost);
  EXPECT_FALSE(spec.retry.on_error);
  EXPECT_EQ(spec.retry.max_attempts, 5);
  EXPECT_EQ(spec.retry.backoff_ms, 30 * kSecondMs);
  EXPECT_EQ(spec.retry.max_backoff_ms, 10 * kMinuteMs);
  EXPECT_EQ(spec.max_runtime_ms, 12 * kHourMs);
  EXPECT_EQ(spec.capacity, CapacityType::kSpot);
  EXPECT_EQ(spec.priority, 100);
  EXPECT_EQ(spec.node_selector, (std::map<std::string, std::string>{{"gpu", "h100"}}));
  EXPECT_FALSE(spec.allow_zone_split);
  ASSERT_EQ(spec.metrics.size(), 2u);
  EXPECT_EQ(spec.metrics[0], (MetricDefinition{"loss", "loss=([0-9.eE+-]+)"}));
  EXPECT_EQ(spec.metrics[1].name, "tokens_per_second");
}

TEST(JobSpecTest, MinimalExampleTakesEveryDefault) {
  JobSpec spec = MustParse(ReadExample("minimal.yaml"));
  JobSpec expected;
  expected.name = "hello";
  expected.command = {"/bin/sh", "-c", "echo \"hello from $TENSORFLEET_JOB_ID\""};
  EXPECT_EQ(spec, expected);
  // The defaults themselves, as docs/jobs-spec.md states them.
  EXPECT_EQ(spec.resources.cpus, 1);
  EXPECT_EQ(spec.resources.gpus, 0);
  EXPECT_EQ(spec.nodes, 1);
  EXPECT_EQ(spec.processes_per_node, "1");
  EXPECT_EQ(spec.checkpoint.sync_interval_ms, 5 * kMinuteMs);
  EXPECT_TRUE(spec.retry.on_interruption && spec.retry.on_node_lost && !spec.retry.on_error);
  EXPECT_EQ(spec.retry.max_attempts, 3);
  EXPECT_EQ(spec.retry.backoff_ms, 10 * kSecondMs);
  EXPECT_EQ(spec.retry.max_backoff_ms, 5 * kMinuteMs);
  EXPECT_EQ(spec.max_runtime_ms, 0);
  EXPECT_EQ(spec.capacity, CapacityType::kAny);
}

TEST(JobSpecTest, FieldsWithoutValuesKeepTheirDefaults) {
  JobSpec spec = MustParse(std::string(kHead) + "resources:\ncheckpoint:\nretry: {on: }\n");
  EXPECT_EQ(spec.resources, Resources{});
  EXPECT_EQ(spec.checkpoint, CheckpointSettings{});
  EXPECT_EQ(spec.retry, RetryPolicy{});
}

TEST(JobSpecTest, CommandIsAShellStringOrAnArgumentList) {
  JobSpec shell = MustParse("name: a\ncommand: python train.py --lr 3e-4 | tee log\n");
  EXPECT_EQ(shell.command,
            (std::vector<std::string>{"/bin/sh", "-c", "python train.py --lr 3e-4 | tee log"}));
  JobSpec block = MustParse("name: a\ncommand: |\n  cd src\n  make\n");
  EXPECT_EQ(block.command, (std::vector<std::string>{"/bin/sh", "-c", "cd src\nmake\n"}));
  JobSpec argv = MustParse("name: a\ncommand:\n  - python\n  - train.py\n  - 'a b'\n  - ''\n");
  EXPECT_EQ(argv.command, (std::vector<std::string>{"python", "train.py", "a b", ""}));
  JobSpec numbers = MustParse("name: a\ncommand: [sleep, 10]\n");
  EXPECT_EQ(numbers.command, (std::vector<std::string>{"sleep", "10"}));

  EXPECT_EQ(ErrorOf("name: a\n"), "train.yaml:1: command: is required");
  EXPECT_EQ(ErrorOf("name: a\ncommand: []\n"), "train.yaml:2: command: must not be empty");
  EXPECT_EQ(ErrorOf("name: a\ncommand: '  '\n"), "train.yaml:2: command: must not be empty");
  EXPECT_EQ(ErrorOf("name: a\ncommand: ['', x]\n"),
            "train.yaml:2: command[0]: the program must not be empty");
  EXPECT_EQ(ErrorOf("name: a\ncommand:\n  - run\n  - {a: 1}\n"),
            "train.yaml:4: command[1]: must be a string, got a mapping");
  EXPECT_EQ(ErrorOf("name: a\ncommand: {run: x}\n"),
            "train.yaml:2: command: must be a shell command or a list of arguments, got a "
            "mapping");
  EXPECT_EQ(ErrorOf("name: a\ncommand: run \xff\n"), "train.yaml:2: command: must be valid UTF-8");
  EXPECT_EQ(ErrorOf("name: a\ncommand: [\"a\\0b\"]\n"),
            "train.yaml:2: command[0]: must not contain a NUL byte");
}

TEST(JobSpecTest, ErrorsNameTheFieldAndItsLine) {
  struct Case {
    std::string yaml;  // after kHead
    std::string error;
  };
  const Case cases[] = {
      {"resources:\n  cpus: 4\n  gpus: eight\n",
       "train.yaml:5: resources.gpus: must be an integer from 0 to 64, got \"eight\""},
      {"resources:\n  gpus: 65\n",
       "train.yaml:4: resources.gpus: must be an integer from 0 to 64, got 65"},
      {"resources: {gpus: 2.5}\n",
       "train.yaml:3: resources.gpus: must be an integer from 0 to 64, got \"2.5\""},
      {"resources: {gpus: 99999999999999999999}\n",
       "train.yaml:3: resources.gpus: must be an integer from 0 to 64, got "
       "\"99999999999999999999\""},
      {"resources: {cpus: 0}\n",
       "train.yaml:3: resources.cpus: must be an integer from 1 to 1024, got 0"},
      {"resources: {memory: 16GB}\n",
       "train.yaml:3: resources.memory: must be a size such as 512Mi, 16Gi or 2G (binary units "
       "Ki, Mi, Gi, Ti, Pi; decimal k, M, G, T, P), got \"16GB\""},
      {"resources: {memory: 16}\n",
       "train.yaml:3: resources.memory: must be 0 or at least 1Mi, got 16 bytes (a number "
       "without a unit is bytes: 16Gi is 16 GiB)"},
      {"resources: {memory: 65Ti}\n",
       "train.yaml:3: resources.memory: must be from 0 to 64Ti, got 65Ti"},
      {"resources: [1]\n", "train.yaml:3: resources: must be a mapping of fields, got a list"},
      {"nodes: 0\n", "train.yaml:3: nodes: must be an integer from 1 to 64, got 0"},
      {"nodes: [2]\n", "train.yaml:3: nodes: must be an integer from 1 to 64, got a list"},
      {"processes_per_node: 65\n",
       "train.yaml:3: processes_per_node: must be a number from 1 to 64 or \"gpu\", got \"65\""},
      {"processes_per_node: gpus\n",
       "train.yaml:3: processes_per_node: must be a number from 1 to 64 or \"gpu\", got "
       "\"gpus\""},
      {"processes_per_node: gpu\n",
       "train.yaml:3: processes_per_node: \"gpu\" starts one process per GPU, so it needs "
       "resources.gpus of at least 1"},
      {"checkpoint:\n  sync_interval: soon\n",
       "train.yaml:4: checkpoint.sync_interval: must be a duration such as 30s, 90m, 2h or "
       "1h30m (units ms, s, m, h, d), got \"soon\""},
      {"checkpoint:\n  sync_interval: 2s\n",
       "train.yaml:4: checkpoint.sync_interval: must be a duration from 10s to 1d, got 2s"},
      {"checkpoint: {enabled: yes}\n",
       "train.yaml:3: checkpoint.enabled: must be true or false, got \"yes\""},
      {"checkpoint: {dir: /ckpt}\n",
       "train.yaml:3: checkpoint.dir: must be relative to the job's working directory, got "
       "\"/ckpt\""},
      {"checkpoint: {dir: a/../../b}\n",
       "train.yaml:3: checkpoint.dir: must stay inside the job's working directory, got "
       "\"a/../../b\""},
      {"retry:\n  on: [interruption, eror]\n",
       "train.yaml:4: retry.on[1]: must be one of interruption, node-lost, error, got \"eror\" "
       "(did you mean \"error\"?)"},
      {"resources:\n  gpus: 1\n  gpu_memory: 8Gi\n",
       "train.yaml:5: resources.gpu_memory: is a share of one GPU, so resources.gpus must be 0 (a "
       "job has either whole GPUs or a share of one), got resources.gpus 1"},
      {"resources:\n  gpu_memory: 2Ti\n",
       "train.yaml:4: resources.gpu_memory: must be 0 or from 1Mi to 1Ti, got 2Ti"},
      {"retry: {max_attempts: 0}\n",
       "train.yaml:3: retry.max_attempts: must be an integer from 1 to 100, got 0"},
      {"retry:\n  backoff: 1m\n  max_backoff: 30s\n",
       "train.yaml:5: retry.max_backoff: must be at least retry.backoff (1m), got 30s"},
      {"max_runtime: -5m\n",
       "train.yaml:3: max_runtime: must be a duration such as 30s, 90m, 2h or 1h30m (units ms, "
       "s, m, h, d), got \"-5m\""},
      {"max_runtime: 400d\n",
       "train.yaml:3: max_runtime: must be a duration from 0s to 365d, got 400d"},
      {"drain_grace: 2h\n", "train.yaml:3: drain_grace: must be a duration from 0s to 1h, got 2h"},
      {"capacity: ondemand\n",
       "train.yaml:3: capacity: must be one of any, spot, on-demand, prefer-spot, got \"ondemand\" "
       "(did you "
       "mean \"on-demand\"?)"},
      {"priority: 1001\n",
       "train.yaml:3: priority: must be an integer from -1000 to 1000, got 1001"},
      {"allow_zone_split: 1\n", "train.yaml:3: allow_zone_split: must be true or false, got \"1\""},
      {"env:\n  OK: 1\n  2BAD: x\n",
       "train.yaml:5: env.2BAD: is not a valid variable name (letters, digits and _, not "
       "starting with a digit, up to 128)"},
      {"env:\n  TENSORFLEET_JOB_ID: x\n",
       "train.yaml:4: env.TENSORFLEET_JOB_ID: is set by the platform (names starting with "
       "TENSORFLEET_ and torchrun's RANK, WORLD_SIZE, MASTER_ADDR, ... are reserved)"},
      {"env:\n  WORLD_SIZE: 4\n", "train.yaml:4: env.WORLD_SIZE: is set by the platform"},
      {"env:\n  EMPTY:\n",
       "train.yaml:4: env.EMPTY: needs a value (write \"\" for an empty string)"},
      {"env: [A=1]\n", "train.yaml:3: env: must be a mapping of fields, got a list"},
      {"node_selector: {gpu: [a100, h100]}\n",
       "train.yaml:3: node_selector.gpu: must be a string, got a list"},
      {"node_selector: {gpu: a100 80gb}\n",
       "train.yaml:3: node_selector.gpu: must be a label value (letters, digits and - _ ., up "
       "to 63), got \"a100 80gb\""},
      {"name2: x\n", "train.yaml:3: unknown field \"name2\" (did you mean \"name\"?)"},
      {"metrics:\n  - name: loss\n    regex: 'loss=[0-9.]+'\n",
       "train.yaml:5: metrics[0].regex: must have exactly one capture group around the number, "
       "got 0 (write other groups as (?:...))"},
      {"metrics:\n  - name: loss\n    regex: '(loss)=([0-9.]+)'\n",
       "train.yaml:5: metrics[0].regex: must have exactly one capture group around the number, "
       "got 2"},
      {"metrics:\n  - name: loss\n    regex: 'loss=([0-9.]+'\n",
       "train.yaml:5: metrics[0].regex: is not a valid regular expression"},
      {"metrics:\n  - name: loss\n    regex: '(a{100}){200}'\n",
       "train.yaml:5: metrics[0].regex: is too large once its counted repetitions are expanded"},
      {"metrics:\n  - {name: loss, regex: 'a(1)'}\n  - {name: loss, regex: 'b(2)'}\n",
       "train.yaml:5: metrics[1].name: defines \"loss\" a second time"},
      {"metrics:\n  - {name: 'bad name', regex: 'a(1)'}\n",
       "train.yaml:4: metrics[0].name: must be letters, digits and _ . : / -"},
      {"metrics:\n  - regex: 'a(1)'\n", "train.yaml:4: metrics[0].name: is required"},
      {"metrics: {loss: 'a(1)'}\n",
       "train.yaml:3: metrics: must be a list of {name, regex}, got a mapping"},
      {"hyperparameters:\n  lr: [1, 2]\n",
       "train.yaml:4: hyperparameters.lr: must be a string, a number or true/false, got a list"},
      {"hyperparameters:\n  lr: ~\n",
       "train.yaml:4: hyperparameters.lr: needs a value (write \"\" for an empty string)"},
      {"hyperparameters:\n  lr: .inf\n",
       "train.yaml:4: hyperparameters.lr: is not a finite number (quote it to pass it as text)"},
      {"hyperparameters:\n  seed: 123456789012345678901\n",
       "train.yaml:4: hyperparameters.seed: is too large for a 64-bit integer"},
      {"hyperparameters:\n  model.dim: 1\n  model_dim: 2\n",
       "train.yaml:5: hyperparameters.model_dim: has the same variable as \"model.dim\" "
       "(TENSORFLEET_HP_MODEL_DIM); rename one"},
      {"hyperparameters:\n  'bad name': 1\n",
       "train.yaml:4: hyperparameters.bad name: is not a valid name"},
  };
  for (const Case& c : cases) {
    std::string error = ErrorOf(kHead + c.yaml);
    EXPECT_EQ(error.substr(0, c.error.size()), c.error) << c.yaml;
  }
}

TEST(JobSpecTest, NameMustBeADnsLabel) {
  EXPECT_EQ(ErrorOf("command: [run]\n"), "train.yaml:1: name: is required");
  EXPECT_EQ(ErrorOf("command: [run]\nname:\n"), "train.yaml:2: name: is required");
  EXPECT_EQ(ErrorOf("command: [run]\nname: Train_1\n"),
            "train.yaml:2: name: must be 1-63 lowercase letters, digits and -, starting with a "
            "letter or digit, got \"Train_1\"");
  for (const char* good : {"a", "0", "train-llama-7b", "x-"}) {
    MustParse(std::string("command: [run]\nname: ") + good + "\n");
  }
  MustParse("command: [run]\nname: " + std::string(63, 'a') + "\n");
  EXPECT_EQ(ErrorOf("command: [run]\nname: ''\n"), "train.yaml:2: name: is required");
  for (const std::string& bad :
       {std::string("-a"), std::string("a b"), std::string("a.b"), std::string(64, 'a')}) {
    EXPECT_NE(ErrorOf("command: [run]\nname: " + bad + "\n").find("name: must be"),
              std::string::npos)
        << bad;
  }
}

TEST(JobSpecTest, UnknownFieldsAreRefusedAtEveryLevel) {
  EXPECT_EQ(ErrorOf(std::string(kHead) + "checkpointing:\n  sync_interval: 30s\n"),
            "train.yaml:3: unknown field \"checkpointing\" (did you mean \"checkpoint\"?)");
  EXPECT_EQ(ErrorOf(std::string(kHead) + "resources:\n  gpu: 1\n"),
            "train.yaml:4: resources: unknown field \"gpu\" (did you mean \"gpus\"?)");
  EXPECT_EQ(ErrorOf(std::string(kHead) + "resources:\n  mem: 1Gi\n"),
            "train.yaml:4: resources: unknown field \"mem\" (did you mean \"memory\"?)");
  EXPECT_EQ(ErrorOf(std::string(kHead) + "checkpoint:\n  interval: 30s\n"),
            "train.yaml:4: checkpoint: unknown field \"interval\"");
  EXPECT_EQ(ErrorOf(std::string(kHead) + "retry:\n  maxattempts: 2\n"),
            "train.yaml:4: retry: unknown field \"maxattempts\" (did you mean \"max_attempts\"?)");
  EXPECT_EQ(ErrorOf(std::string(kHead) + "metrics:\n  - name: a\n    Regex: 'x(1)'\n"),
            "train.yaml:5: metrics[0]: unknown field \"Regex\" (did you mean \"regex\"?)");
  // Nothing close: no suggestion.
  EXPECT_EQ(ErrorOf(std::string(kHead) + "image: pytorch:latest\n"),
            "train.yaml:3: unknown field \"image\"");
  EXPECT_EQ(ErrorOf(std::string(kHead) + "base: 1\n"), "train.yaml:3: unknown field \"base\"");
  EXPECT_EQ(ErrorOf(std::string(kHead) + "resources:\n  <<: {gpus: 1}\n"),
            "train.yaml:4: resources: unknown field \"<<\"");
  // An unknown field is reported before the required one it probably misspells.
  EXPECT_EQ(ErrorOf("nmae: a\ncommand: [run]\n"),
            "train.yaml:1: unknown field \"nmae\" (did you mean \"name\"?)");
}

TEST(JobSpecTest, DuplicateFieldsAreRefused) {
  EXPECT_EQ(ErrorOf("name: a\ncommand: [run]\nnodes: 2\nnodes: 3\n"),
            "train.yaml:4: nodes: is given twice (first on line 3)");
  EXPECT_EQ(ErrorOf("name: a\ncommand: [run]\nenv:\n  A: 1\n  A: 2\n"),
            "train.yaml:5: env.A: is given twice (first on line 4)");
}

TEST(JobSpecTest, YamlSyntaxErrorsGiveLineAndColumn) {
  std::string error = ErrorOf("name: a\ncommand: [run\nnodes: 2\n");
  EXPECT_EQ(error.rfind("train.yaml:", 0), 0u) << error;
  EXPECT_NE(error.find("invalid YAML"), std::string::npos) << error;
  EXPECT_NE(error.find(":3:"), std::string::npos) << error;  // where the flow list runs out
  EXPECT_EQ(ErrorOf("name: a: b\n"), "train.yaml:1:8: invalid YAML: illegal map value");
  EXPECT_EQ(ErrorOf("name: a\nresources:\n\tgpus: 1\n"),
            "train.yaml:3:6: invalid YAML: illegal map value (indent with spaces, not tabs)");
}

TEST(JobSpecTest, TheSpecIsOneMapping) {
  EXPECT_EQ(ErrorOf(""), "train.yaml:1: the spec is empty");
  EXPECT_EQ(ErrorOf("# nothing\n"), "train.yaml:1: the spec is empty");
  EXPECT_EQ(ErrorOf("- name: a\n"),
            "train.yaml:1: the spec must be a mapping of fields (name, command, ...), got a list");
  EXPECT_EQ(ErrorOf("just text\n"),
            "train.yaml:1: the spec must be a mapping of fields (name, command, ...), got "
            "\"just text\"");
  EXPECT_EQ(ErrorOf("name: a\ncommand: [x]\n---\nname: b\ncommand: [y]\n"),
            "train.yaml:3: the spec must be one YAML document, found another");
  EXPECT_EQ(ErrorOf("? [a, b]\n: c\n"), "train.yaml:1: field names must be plain text, got a list");
  auto unnamed = ParseJobSpec("nodes: 2\n", "");
  EXPECT_EQ(unnamed.status().message().rfind("spec:1: ", 0), 0u) << unnamed.status().message();
}

TEST(JobSpecTest, NothingAfterTheDocumentIsIgnored) {
  MustParse("name: a\ncommand: [x]\n---\n");  // an empty document after it is nothing
  MustParse("name: a\ncommand: [x]\n...\n");
  MustParse("---\nname: a\ncommand: [x]\n");
  // yaml-cpp's YAML::Load stops after the first document, and YAML::LoadAll loops for ever on
  // the stray comma: both are refused here.
  EXPECT_EQ(ErrorOf("{name: a, command: [x]},\n"),
            "train.yaml:1:24: invalid YAML: unexpected token");
  EXPECT_EQ(ErrorOf("{name: a, command: [x]}\n,\n"),
            "train.yaml:2:1: invalid YAML: unexpected token");
  std::string brace = ErrorOf("name: a\ncommand: [x]\n}\n");
  EXPECT_EQ(brace.rfind("train.yaml:3:1: invalid YAML", 0), 0u) << brace;
  EXPECT_EQ(ErrorOf("---\n---\nname: a\ncommand: [x]\n"),
            "train.yaml:2: the spec must be one YAML document, found another");
  std::string separators;
  for (int i = 0; i < 1001; ++i) separators += "---\n";
  EXPECT_EQ(ErrorOf("name: a\ncommand: [x]\n" + separators),
            "train.yaml: invalid YAML: more than 1000 documents");
}

TEST(JobSpecTest, AnchorsAndAliasesWork) {
  JobSpec spec =
      MustParse("name: a\ncommand: [x]\nenv: &labels\n  zone: a1\nnode_selector: *labels\n");
  EXPECT_EQ(spec.env, spec.node_selector);
  EXPECT_EQ(spec.node_selector.at("zone"), "a1");
}

TEST(JobSpecTest, HyperparametersKeepTheirYamlTypes) {
  JobSpec spec = MustParse(std::string(kHead) +
                           "hyperparameters:\n"
                           "  int: 42\n  neg: -7\n  float: 0.5\n  exp: 1e-4\n  big: 1.5E+10\n"
                           "  yes_bool: true\n  no_bool: False\n"
                           "  quoted_int: \"42\"\n  quoted_bool: 'true'\n  word: adamw\n"
                           "  hex: 0x10\n  version: 1.2.3\n  str_tag: !!str 5\n"
                           "  empty: ''\n  model.dim: 4\n  warm-up: 2\n");
  const nlohmann::json& h = spec.hyperparameters;
  EXPECT_EQ(h["int"], 42);
  EXPECT_TRUE(h["int"].is_number_integer());
  EXPECT_EQ(h["neg"], -7);
  EXPECT_EQ(h["float"], 0.5);
  EXPECT_TRUE(h["exp"].is_number_float());
  EXPECT_DOUBLE_EQ(h["exp"].get<double>(), 1e-4);
  EXPECT_EQ(h["big"], 1.5e10);
  EXPECT_EQ(h["yes_bool"], true);
  EXPECT_EQ(h["no_bool"], false);
  EXPECT_EQ(h["quoted_int"], "42");
  EXPECT_EQ(h["quoted_bool"], "true");
  EXPECT_EQ(h["word"], "adamw");
  EXPECT_EQ(h["hex"], "0x10");  // only decimal numbers are numbers
  EXPECT_EQ(h["version"], "1.2.3");
  EXPECT_EQ(h["str_tag"], "5");
  EXPECT_EQ(h["empty"], "");
  EXPECT_EQ(h["model.dim"], 4);
  EXPECT_EQ(h["warm-up"], 2);
}

TEST(JobSpecTest, EachHyperparameterHasItsVariable) {
  EXPECT_EQ(HyperparameterEnvName("lr"), "TENSORFLEET_HP_LR");
  EXPECT_EQ(HyperparameterEnvName("model.dim"), "TENSORFLEET_HP_MODEL_DIM");
  EXPECT_EQ(HyperparameterEnvName("warm-up_steps"), "TENSORFLEET_HP_WARM_UP_STEPS");
}

TEST(JobSpecTest, RetryOnListsTheFailuresThatRetry) {
  JobSpec only_error = MustParse(std::string(kHead) + "retry:\n  on: error\n");
  EXPECT_FALSE(only_error.retry.on_interruption);
  EXPECT_FALSE(only_error.retry.on_node_lost);
  EXPECT_TRUE(only_error.retry.on_error);
  JobSpec never = MustParse(std::string(kHead) + "retry: {on: []}\n");
  EXPECT_FALSE(never.retry.on_interruption || never.retry.on_node_lost || never.retry.on_error);
  JobSpec all = MustParse(std::string(kHead) + "retry: {on: [error, node-lost, interruption]}\n");
  EXPECT_TRUE(all.retry.on_interruption && all.retry.on_node_lost && all.retry.on_error);
}

TEST(JobSpecTest, SetupIsACommandOrAListAndPythonNeedsItsVenv) {
  EXPECT_EQ(MustParse(std::string(kHead) + "setup: make deps\n").setup,
            (std::vector<std::string>{"make deps"}));
  JobSpec spec = MustParse(std::string(kHead) +
                           "setup:\n  - echo one\n  - echo two\n"
                           "python: {venv: true, requirements: req.txt, wheels: wheels}\n");
  EXPECT_EQ(spec.setup, (std::vector<std::string>{"echo one", "echo two"}));
  EXPECT_TRUE(spec.python.venv);
  EXPECT_EQ(spec.python.requirements, "req.txt");
  EXPECT_EQ(spec.python.wheels, "wheels");
  auto back = JobSpecFromJson(JobSpecToJson(spec));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, spec);

  EXPECT_EQ(ErrorOf(std::string(kHead) + "python: {requirements: req.txt}\n"),
            "train.yaml:3: python.requirements: needs python.venv: true (it installs into the "
            "venv)");
  EXPECT_EQ(ErrorOf(std::string(kHead) + "python:\n  venv: true\n  wheels: ../elsewhere\n"),
            "train.yaml:5: python.wheels: must stay inside the job's working directory, got "
            "\"../elsewhere\"");
  EXPECT_EQ(ErrorOf(std::string(kHead) + "setup: ['echo a', '  ']\n"),
            "train.yaml:3: setup[1]: must not be empty");
  EXPECT_EQ(ErrorOf(std::string(kHead) + "setup: {run: x}\n"),
            "train.yaml:3: setup: must be a command or a list of commands, got a mapping");
  EXPECT_EQ(ErrorOf(std::string(kHead) + "python: {venv: yes}\n").substr(0, 25),
            "train.yaml:3: python.venv");
}

TEST(JobSpecTest, ProcessesPerNodeIsACountOrGpu) {
  EXPECT_EQ(MustParse(std::string(kHead) + "processes_per_node: 4\n").processes_per_node, "4");
  EXPECT_EQ(MustParse(std::string(kHead) + "processes_per_node: '08'\n").processes_per_node, "8");
  EXPECT_EQ(MustParse(std::string(kHead) + "resources: {gpus: 4}\nprocesses_per_node: gpu\n")
                .processes_per_node,
            "gpu");
  EXPECT_NE(ErrorOf(std::string(kHead) + "processes_per_node: 0\n").find("processes_per_node"),
            std::string::npos);
}

TEST(JobSpecTest, HostileInputEndsInAnError) {
  std::string deep_flow(10000, '[');
  std::string deep_block;
  for (int i = 0; i < 3000; ++i) deep_block += std::string(i, ' ') + "a:\n";
  std::string many_keys = "name: a\ncommand: [x]\nenv:\n";
  for (int i = 0; i < 300; ++i) many_keys += "  V" + std::to_string(i) + ": x\n";
  const std::string inputs[] = {
      deep_flow,
      deep_block,
      "name: &a [*a]\ncommand: *a\n",  // an alias inside its own anchor
      "name: a\ncommand: &c [x, *c]\n",
      "name: a\ncommand: [x]\nhyperparameters: &h {a: *h}\n",
      "name: a\ncommand: [x]\nenv: *nowhere\n",
      std::string("name: a\0b\ncommand: [x]\n", 22),
      "name: \"\\ud800\"\ncommand: [x]\n",   // a lone surrogate
      "name: a\ncommand: [\"\xff\xfe\"]\n",  // not UTF-8
      "\xef\xbb\xbfname: a\ncommand: [x]\nnodes: '\xc3'\n",
      "name: a\ncommand: [x]\nmetrics:\n  - {name: a, regex: '" + std::string(2000, '(') + "'}\n",
      "name: a\ncommand: [x]\nmetrics:\n  - {name: a, regex: '(x{99999999999999})'}\n",
      "name: a\ncommand: [x]\nmetrics:\n  - {name: a, regex: '[\\'}\n",
      many_keys,
      std::string(size_t{300} * 1024, '#'),
      "!!binary aGVsbG8=\n",
      "%YAML 1.2\n%TAG ! tag:x,2000:\n--- !foo\nname: a\n",
  };
  for (const std::string& input : inputs) {
    auto spec = ParseJobSpec(input, "x.yaml");
    EXPECT_FALSE(spec.ok()) << input.substr(0, 80);
    if (spec.ok()) continue;
    EXPECT_EQ(spec.status().message().rfind("x.yaml", 0), 0u) << spec.status().message();
    EXPECT_TRUE(nlohmann::json(spec.status().message()).dump().size() > 0);  // valid UTF-8
  }
}

TEST(QuantitiesTest, Durations) {
  struct Case {
    const char* text;
    TimeMs ms;
  };
  for (const Case& c : std::initializer_list<Case>{{"250ms", 250},
                                                   {"30s", 30'000},
                                                   {"5m", 300'000},
                                                   {"2h", 7'200'000},
                                                   {"1d", 86'400'000},
                                                   {"90m", 5'400'000},
                                                   {"1h30m", 5'400'000},
                                                   {"1.5h", 5'400'000},
                                                   {"3600", 3'600'000},
                                                   {"0.5", 500},
                                                   {"0", 0},
                                                   {"0.0001s", 1},  // rounded up
                                                   {"2m30s500ms", 150'500}}) {
    auto ms = ParseDuration(c.text);
    ASSERT_TRUE(ms.ok()) << c.text << ": " << ms.status().message();
    EXPECT_EQ(*ms, c.ms) << c.text;
  }
  for (const char* bad : {"", "s", "5 m", "5M", "-1s", "1w", "5m-", "1e3", "1..5s", "1h 30m",
                          "0x10", "9999999999999999999", "inf"}) {
    EXPECT_FALSE(ParseDuration(bad).ok()) << bad;
  }
  EXPECT_FALSE(ParseDuration("999999999999999999d").ok());  // past 10^15 ms, no overflow
  EXPECT_EQ(FormatDuration(5'400'000), "90m");
  EXPECT_EQ(FormatDuration(1'500), "1500ms");
  EXPECT_EQ(FormatDuration(2 * kDayMs), "2d");
  EXPECT_EQ(FormatDuration(0), "0s");
}

TEST(QuantitiesTest, MemorySizes) {
  struct Case {
    const char* text;
    int64_t bytes;
  };
  for (const Case& c : std::initializer_list<Case>{{"16Gi", int64_t{16} << 30},
                                                   {"512Mi", int64_t{512} << 20},
                                                   {"2G", 2'000'000'000},
                                                   {"1.5G", 1'500'000'000},
                                                   {"0.1G", 100'000'000},  // exact, no float
                                                   {"1.5Gi", int64_t{3} << 29},
                                                   {"1000", 1000},
                                                   {"4k", 4000},
                                                   {"1Ki", 1024},
                                                   {"2Ti", int64_t{2} << 40},
                                                   {"1P", 1'000'000'000'000'000},
                                                   {"0.5", 1},  // rounded up to a whole byte
                                                   {"0", 0}}) {
    auto bytes = ParseMemory(c.text);
    ASSERT_TRUE(bytes.ok()) << c.text << ": " << bytes.status().message();
    EXPECT_EQ(*bytes, c.bytes) << c.text;
  }
  for (const char* bad :
       {"", "Gi", "16GB", "16gi", "16 Gi", "-1", "1e9", "16GiB", "16K", "1Ei", "99999Pi"}) {
    EXPECT_FALSE(ParseMemory(bad).ok()) << bad;
  }
  EXPECT_EQ(FormatMemory(int64_t{16} << 30), "16Gi");
  EXPECT_EQ(FormatMemory(int64_t{1536} << 20), "1536Mi");
  EXPECT_EQ(FormatMemory(1000), "1000");
}

TEST(JobSpecJsonTest, RoundTripsExactly) {
  JobSpec full = MustParse(ReadExample("llama-ddp.yaml"));
  nlohmann::json json = JobSpecToJson(full);
  EXPECT_EQ(json["resources"]["memory_bytes"], int64_t{200} << 30);
  EXPECT_EQ(json["checkpoint"]["sync_interval_ms"], 120'000);
  EXPECT_EQ(json["retry"]["backoff_ms"], 30'000);
  EXPECT_EQ(json["retry"]["on_error"], false);
  EXPECT_EQ(json["max_runtime_ms"], 12 * kHourMs);
  EXPECT_EQ(json["capacity"], "spot");
  EXPECT_EQ(json["processes_per_node"], "gpu");

  JobSpec service = MustParse(ReadExample("minimal.yaml"));
  service.drain_grace_ms = 30'000;
  service.resources.gpu_memory_bytes = int64_t{8} << 30;
  EXPECT_EQ(JobSpecToJson(service)["drain_grace_ms"], 30'000);
  for (const JobSpec& spec : {full, service, MustParse(ReadExample("minimal.yaml"))}) {
    auto back = JobSpecFromJson(JobSpecToJson(spec));
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(*back, spec);
    // Through text too, as the store keeps it.
    auto reparsed = JobSpecFromJson(nlohmann::json::parse(JobSpecToJson(spec).dump()));
    ASSERT_TRUE(reparsed.ok()) << reparsed.status().ToString();
    EXPECT_EQ(*reparsed, spec);
    EXPECT_EQ(JobSpecToJson(*reparsed), JobSpecToJson(spec));
  }
}

TEST(JobSpecJsonTest, MissingFieldsTakeDefaults) {
  auto spec = JobSpecFromJson({{"name", "a"}, {"command", {"run"}}});
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  JobSpec expected;
  expected.name = "a";
  expected.command = {"run"};
  EXPECT_EQ(*spec, expected);
}

TEST(JobSpecJsonTest, RefusesWhatTheYamlWouldRefuse) {
  nlohmann::json good = JobSpecToJson(MustParse(ReadExample("llama-ddp.yaml")));
  auto error_of = [&](const std::function<void(nlohmann::json&)>& change) {
    nlohmann::json json = good;
    change(json);
    auto spec = JobSpecFromJson(json);
    EXPECT_FALSE(spec.ok()) << json.dump();
    return spec.ok() ? std::string() : spec.status().message();
  };
  EXPECT_EQ(error_of([](auto& j) { j["extra"] = 1; }), "unknown field \"extra\"");
  EXPECT_EQ(error_of([](auto& j) { j["retry"]["on_oom"] = true; }),
            "retry: unknown field \"on_oom\"");
  EXPECT_EQ(error_of([](auto& j) { j["nodes"] = "2"; }), "nodes: must be an integer in range");
  EXPECT_EQ(error_of([](auto& j) { j["nodes"] = 1e10; }), "nodes: must be an integer in range");
  EXPECT_EQ(error_of([](auto& j) { j["resources"]["gpus"] = 4294967297LL; }),
            "resources.gpus: must be an integer in range");
  EXPECT_EQ(error_of([](auto& j) { j["resources"]["gpus"] = 65; }),
            "resources.gpus: must be an integer from 0 to 64, got 65");
  EXPECT_EQ(error_of([](auto& j) { j["command"] = "run"; }),
            "command: must be an array of strings");
  EXPECT_EQ(error_of([](auto& j) { j["command"] = nlohmann::json::array(); }),
            "command: is required");
  EXPECT_EQ(error_of([](auto& j) { j["capacity"] = "cheap"; }),
            "capacity: must be \"any\", \"spot\", \"on-demand\" or \"prefer-spot\"");
  EXPECT_EQ(error_of([](auto& j) { j["env"]["A"] = 1; }), "env.A: must be a string");
  EXPECT_EQ(error_of([](auto& j) {
              j["hyperparameters"]["x"] = {1, 2};
            }),
            "hyperparameters.x: must be a string, a number or true/false");
  EXPECT_EQ(error_of([](auto& j) { j["metrics"][0]["unit"] = "s"; }),
            "metrics[0]: unknown field \"unit\"");
  EXPECT_EQ(error_of([](auto& j) { j["checkpoint"] = 5; }), "checkpoint: must be an object");
  EXPECT_FALSE(JobSpecFromJson(nlohmann::json::array()).ok());
}

TEST(JobSpecTest, ValidateJobSpecChecksBuiltSpecs) {
  JobSpec spec;
  spec.name = "a";
  spec.command = {"run"};
  EXPECT_TRUE(ValidateJobSpec(spec).ok());
  spec.env["PATH"] = "/usr/bin";
  spec.hyperparameters["lr"] = 0.1;
  EXPECT_TRUE(ValidateJobSpec(spec).ok());
  spec.hyperparameters["inf"] = std::numeric_limits<double>::infinity();
  EXPECT_EQ(ValidateJobSpec(spec).message(), "hyperparameters.inf: must be a finite number");
  spec.hyperparameters.erase("inf");
  spec.retry.backoff_ms = -1;
  EXPECT_EQ(ValidateJobSpec(spec).message(),
            "retry.backoff: must be a duration from 0s to 1h, got -1ms");
  spec.retry = {};
  spec.command = {"run", "caf\xc3"};
  EXPECT_EQ(ValidateJobSpec(spec).message(), "command[1]: must be valid UTF-8");
  spec.command = {"run"};
  spec.hyperparameters["text"] = "\xed\xa0\x80";  // a surrogate
  EXPECT_EQ(ValidateJobSpec(spec).message(), "hyperparameters.text: must be valid UTF-8");
  spec.hyperparameters.erase("text");
  spec.processes_per_node = "01";
  EXPECT_EQ(ValidateJobSpec(spec).message(),
            "processes_per_node: must be a number from 1 to 64 or \"gpu\", got \"01\"");
}

}  // namespace
}  // namespace tf::jobs

namespace tf::jobs {
namespace {

TEST(JobSpecDatasetsTest, DatasetsAreNamesWithAVariableEach) {
  JobSpec spec = MustParse(std::string(kHead) + "datasets: [tiny-text, web.v2]\n");
  EXPECT_EQ(spec.datasets, (std::vector<std::string>{"tiny-text", "web.v2"}));
  EXPECT_EQ(DatasetEnvName("tiny-text"), "TENSORFLEET_DATASET_TINY_TEXT");
  EXPECT_EQ(DatasetEnvName("web.v2"), "TENSORFLEET_DATASET_WEB_V2");
  auto back = JobSpecFromJson(nlohmann::json::parse(JobSpecToJson(spec).dump()));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->datasets, spec.datasets);
  // Stored specs from before the field read as none.
  nlohmann::json old = JobSpecToJson(MustParse(kHead));
  old.erase("datasets");
  auto older = JobSpecFromJson(old);
  ASSERT_TRUE(older.ok());
  EXPECT_TRUE(older->datasets.empty());
}

TEST(JobSpecDatasetsTest, BadDatasetListsAreNamed) {
  EXPECT_NE(ErrorOf(std::string(kHead) + "datasets: [Tiny]\n")
                .find("train.yaml:3: datasets[0]: "
                      "must be a dataset name"),
            std::string::npos);
  EXPECT_NE(ErrorOf(std::string(kHead) + "datasets: [a, a]\n").find("names \"a\" a second time"),
            std::string::npos);
  EXPECT_NE(ErrorOf(std::string(kHead) + "datasets: [a-b, a.b]\n")
                .find("would share the variable TENSORFLEET_DATASET_A_B"),
            std::string::npos);
  EXPECT_NE(ErrorOf(std::string(kHead) + "datasets: tiny\n").find("datasets"), std::string::npos);
}

// `run --set NAME=VALUE`: typed as the spec's YAML types an unquoted value, then checked by
// the spec's own rules.
TEST(HyperparameterSettingsTest, TypedAsInYamlAndCheckedByTheSpecsRules) {
  struct Case {
    const char* text;
    const char* name;
    nlohmann::json value;
  };
  const Case cases[] = {{"lr=3e-4", "lr", 0.0003},       {"layers=12", "layers", 12},
                        {"warmup=true", "warmup", true}, {"model=llama-3", "model", "llama-3"},
                        {"note=a=b", "note", "a=b"},     {"empty=", "empty", ""},
                        {"neg=-2.5", "neg", -2.5}};
  for (const auto& c : cases) {
    auto s = ParseHyperparameterSetting(c.text);
    ASSERT_TRUE(s.ok()) << c.text << ": " << s.status().ToString();
    EXPECT_EQ(s->first, c.name);
    EXPECT_EQ(s->second, c.value) << c.text;
  }
  for (auto [text, error] : {std::pair{"lr", "expected NAME=VALUE"},
                             {"=1", "the name before '=' is empty"},
                             {"x=null", "--set x: 'null' needs a value"},
                             {"x=.inf", "is not a finite number"}}) {
    auto s = ParseHyperparameterSetting(text);
    ASSERT_FALSE(s.ok()) << text;
    EXPECT_NE(s.status().message().find(error), std::string::npos) << s.status().message();
  }

  auto spec =
      ParseJobSpec("name: t\ncommand: true\nhyperparameters: {lr: 0.001, layers: 4}\n", "t.yaml");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  ASSERT_TRUE(ApplyHyperparameterSettings(*spec, {{"lr", 0.0003}, {"tag", "fast"}}).ok());
  EXPECT_EQ(spec->hyperparameters,
            (nlohmann::json{{"lr", 0.0003}, {"layers", 4}, {"tag", "fast"}}));
  Status bad = ApplyHyperparameterSettings(*spec, {{"bad name", 1}});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("--set: hyperparameters.bad name: is not a valid name"),
            std::string::npos)
      << bad.message();
  EXPECT_TRUE(ApplyHyperparameterSettings(*spec, nullptr).ok());
}

}  // namespace
}  // namespace tf::jobs
