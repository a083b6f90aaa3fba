// The environment contract (worker/job_env.h, docs/jobs.md): what a job's process finds, from
// an assignment as the server sends it (client/assignment.h), its spec read back typed.
#include <gtest/gtest.h>

#include "client/assignment.h"
#include "jobs/job_spec.h"
#include "worker/job_env.h"

namespace tf::worker {
namespace {

using nlohmann::json;

jobs::JobSpec Spec() {
  jobs::JobSpec spec;
  spec.name = "train";
  spec.command = {"python", "train.py"};
  return spec;
}

// What the server would send for `spec` (api/node_routes.cc writes the spec with JobSpecToJson).
json AssignmentJson(const jobs::JobSpec& spec) {
  return {{"job_id", "job_1"},         {"job_name", "train"},  {"attempt", 1},
          {"token", "fence-1"},        {"node_rank", 0},       {"gpus", {0, 1}},
          {"addresses", {"10.0.0.1"}}, {"master_port", 29500}, {"spec", jobs::JobSpecToJson(spec)},
          {"job_token", "tfk_secret"}};
}

client::Assignment Read(const jobs::JobSpec& spec) {
  auto a = client::AssignmentFromJson(AssignmentJson(spec));
  EXPECT_TRUE(a.ok()) << a.status().ToString();
  return a.ok() ? *a : client::Assignment{};
}

TEST(AssignmentTest, TheSpecArrivesAsItWasSubmitted) {
  jobs::JobSpec spec = Spec();
  spec.env = {{"MODE", "fast"}};
  spec.processes_per_node = "gpu";
  spec.resources.gpus = 2;
  spec.checkpoint.enabled = false;
  spec.checkpoint.dir = "ckpt";
  spec.metrics = {{"loss", "loss=([0-9.]+)"}};
  spec.datasets = {"tiny-text"};
  client::Assignment a = Read(spec);
  EXPECT_EQ(a.spec, spec);
  EXPECT_EQ(a.key(), "job_1/1/0");
  EXPECT_EQ(a.token, "fence-1");
}

TEST(AssignmentTest, FieldsTheSpecLeavesOutTakeTheSpecsOwnDefaults) {
  json j = AssignmentJson(Spec());
  j["spec"] = {{"name", "train"}, {"command", {"true"}}};
  auto a = client::AssignmentFromJson(j);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->spec.processes_per_node, "1");
  EXPECT_TRUE(a->spec.checkpoint.enabled);
  EXPECT_EQ(a->spec.checkpoint.dir, "checkpoints");
  EXPECT_EQ(a->spec.checkpoint.sync_interval_ms, jobs::CheckpointSettings{}.sync_interval_ms);
}

TEST(AssignmentTest, AMalformedAssignmentIsRefusedSayingWhat) {
  json no_token = AssignmentJson(Spec());
  no_token.erase("token");
  auto a = client::AssignmentFromJson(no_token);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(a.status().message().find("token"), std::string::npos) << a.status().message();

  json bad_spec = AssignmentJson(Spec());
  bad_spec["spec"]["nodes"] = "many";
  a = client::AssignmentFromJson(bad_spec);
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.status().message().find("assignment job_1/1/0: spec"), std::string::npos)
      << a.status().message();
  EXPECT_NE(a.status().message().find("nodes"), std::string::npos) << a.status().message();
}

TEST(JobEnvTest, EachDatasetOfTheSpecIsNamedWithWhereItsIndexIs) {
  jobs::JobSpec spec = Spec();
  spec.datasets = {"tiny-text", "web.v2"};
  auto env = JobEnvironment(Read(spec), 0, ProcessPaths{}, "http://10.0.0.9:8470",
                            {{"TENSORFLEET_DATASET_STALE", "x"}});
  EXPECT_EQ(env.at("TENSORFLEET_DATASET_TINY_TEXT"), "http://10.0.0.9:8470/v1/datasets/tiny-text");
  EXPECT_EQ(env.at("TENSORFLEET_DATASET_WEB_V2"), "http://10.0.0.9:8470/v1/datasets/web.v2");
  auto all = json::parse(env.at("TENSORFLEET_DATASETS"));
  EXPECT_EQ(all, (json{{"tiny-text", "http://10.0.0.9:8470/v1/datasets/tiny-text"},
                       {"web.v2", "http://10.0.0.9:8470/v1/datasets/web.v2"}}));
  // The reader's credentials are the job's.
  EXPECT_EQ(env.at("TENSORFLEET_SERVER_URL"), "http://10.0.0.9:8470");
  EXPECT_EQ(env.at("TENSORFLEET_TOKEN"), "tfk_secret");
  // A variable of the contract inherited from the worker does not leak in.
  EXPECT_EQ(env.count("TENSORFLEET_DATASET_STALE"), 0u);
}

TEST(JobEnvTest, ASpecWithoutDatasetsGetsAnEmptyObject) {
  auto env = JobEnvironment(Read(Spec()), 0, ProcessPaths{}, "http://h:1", {});
  EXPECT_EQ(env.at("TENSORFLEET_DATASETS"), "{}");
}

TEST(JobEnvTest, TheSpecsVariablesHyperparametersAndProcessCountReachTheProcess) {
  jobs::JobSpec spec = Spec();
  spec.env = {{"MODE", "fast"}};
  spec.hyperparameters = {{"lr", 0.001}, {"model.dim", 512}, {"warm-up", true}, {"opt", "adam"}};
  spec.processes_per_node = "gpu";
  spec.resources.gpus = 2;
  client::Assignment a = Read(spec);
  EXPECT_EQ(ProcessesPerNode(a), 2);  // two GPUs
  auto env = JobEnvironment(a, 1, ProcessPaths{}, "http://h:1", {{"MODE", "slow"}});
  EXPECT_EQ(env.at("MODE"), "fast");  // the spec's value over the worker's
  EXPECT_EQ(env.at("TENSORFLEET_HP_LR"), "0.001");
  EXPECT_EQ(env.at("TENSORFLEET_HP_MODEL_DIM"), "512");
  EXPECT_EQ(env.at("TENSORFLEET_HP_WARM_UP"), "true");
  EXPECT_EQ(env.at("TENSORFLEET_HP_OPT"), "adam");
  EXPECT_EQ(json::parse(env.at("TENSORFLEET_HYPERPARAMETERS")), spec.hyperparameters);
  EXPECT_EQ(env.at("TENSORFLEET_PROCESSES_PER_NODE"), "2");
  EXPECT_EQ(env.at("WORLD_SIZE"), "2");
}

TEST(JobEnvTest, OfTheWorkersOwnEnvironmentOnlyPathHomeAndLangReachAJob) {
  client::Assignment a = Read(Spec());
  const std::map<std::string, std::string> worker = {
      {"PATH", "/usr/bin:/bin"},
      {"HOME", "/home/w"},
      {"LANG", "C.UTF-8"},
      {"AWS_SECRET_ACCESS_KEY", "the object store's"},
      {"TENSORFLEET_TOKEN", "the worker's own"},
      {"RANK", "7"},
      {"LD_PRELOAD", "/tmp/x.so"}};
  auto env = JobEnvironment(a, 0, ProcessPaths{}, "http://h:1", worker);
  EXPECT_EQ(env.at("PATH"), "/usr/bin:/bin");
  EXPECT_EQ(env.at("HOME"), "/home/w");
  EXPECT_EQ(env.at("LANG"), "C.UTF-8");
  EXPECT_EQ(env.count("AWS_SECRET_ACCESS_KEY"), 0u);
  EXPECT_EQ(env.count("LD_PRELOAD"), 0u);
  EXPECT_EQ(env.at("TENSORFLEET_TOKEN"), a.job_token) << "the job's, not the worker's";
  EXPECT_EQ(env.at("RANK"), "0");
  for (const auto& [name, value] : env) {
    EXPECT_NE(value, "the object store's") << name;
    EXPECT_NE(value, "the worker's own") << name;
  }
}

}  // namespace
}  // namespace tf::worker
