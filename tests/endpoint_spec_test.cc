// The endpoint spec (endpoints/endpoint_spec.h, docs/endpoints.md): reading YAML, errors that
// name file, line and field, and the JSON form the store keeps.
#include "endpoints/endpoint_spec.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "endpoints/replica_jobs.h"

namespace tf::endpoints {
namespace {

std::string ReadExample(const std::string& name) {
  std::ifstream in(std::string(TENSORFLEET_SOURCE_DIR) + "/examples/endpoints/" + name);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

EndpointSpec MustParse(const std::string& yaml) {
  auto spec = ParseEndpointSpec(yaml, "chat.yaml");
  EXPECT_TRUE(spec.ok()) << spec.status().ToString() << "\n" << yaml;
  return spec.ok() ? *spec : EndpointSpec{};
}

std::string ErrorOf(const std::string& yaml) {
  auto spec = ParseEndpointSpec(yaml, "chat.yaml");
  EXPECT_FALSE(spec.ok()) << "accepted:\n" << yaml;
  if (spec.ok()) return "";
  EXPECT_EQ(spec.status().code(), StatusCode::kInvalidArgument) << spec.status().ToString();
  return spec.status().message();
}

const char kHead[] = "name: chat\nmodel: /models/tiny\n";  // lines 1-2

TEST(EndpointSpecTest, ExampleWithTheBuiltinEngineReadsEveryField) {
  EndpointSpec spec = MustParse(ReadExample("chat.yaml"));
  EXPECT_EQ(spec.name, "chat");
  EXPECT_EQ(spec.model.kind, ModelSourceKind::kJobOutput);
  EXPECT_EQ(spec.model.location, "llama-train");
  EXPECT_EQ(spec.engine.kind, EngineKind::kBuiltin);
  EXPECT_EQ(spec.engine.threads, 2);
  EXPECT_EQ(spec.engine.quantize, "q8_0");
  EXPECT_EQ(spec.engine.kv_cache_bytes, int64_t{256} << 20);
  EXPECT_EQ(spec.engine.max_batch, 8);
  EXPECT_EQ(spec.engine.readiness.timeout_ms, 5 * kMinuteMs);
  EXPECT_EQ(spec.resources.cpus, 2);
  EXPECT_EQ(spec.resources.memory_bytes, int64_t{2} << 30);
  EXPECT_EQ(spec.min_replicas, 0);
  EXPECT_EQ(spec.max_replicas, 4);
  EXPECT_EQ(spec.autoscaling.metric, ScalingMetric::kOngoingRequests);
  EXPECT_EQ(spec.autoscaling.target, 4);
  EXPECT_EQ(spec.autoscaling.downscale_delay_ms, kMinuteMs);
  EXPECT_EQ(spec.autoscaling.scale_to_zero_after_ms, 5 * kMinuteMs);
  EXPECT_EQ(spec.warm_pool, 1);
  EXPECT_EQ(spec.spot, SpotPolicy::kPrefer);
  EXPECT_EQ(spec.max_queue, 200);
  EXPECT_EQ(spec.queue_timeout_ms, 2 * kMinuteMs);
}

TEST(EndpointSpecTest, ExampleWithACommandEngine) {
  EndpointSpec spec = MustParse(ReadExample("vllm.yaml"));
  EXPECT_EQ(spec.model.kind, ModelSourceKind::kObjects);
  EXPECT_EQ(spec.engine.kind, EngineKind::kCommand);
  ASSERT_EQ(spec.engine.command.size(), 3u);
  EXPECT_EQ(spec.engine.command[0], "/bin/sh");
  EXPECT_EQ(spec.engine.command[2], "vllm serve {model} --port {port} --served-model-name qwen");
  EXPECT_EQ(spec.resources.gpus, 1);
  EXPECT_EQ(spec.autoscaling.metric, ScalingMetric::kQueueDepth);
  EXPECT_EQ(spec.autoscaling.target, 8);
  EXPECT_EQ(spec.min_replicas, 1);
  EXPECT_EQ(spec.max_replicas, 8);
}

TEST(EndpointSpecTest, DefaultsAreOneBuiltinReplica) {
  EndpointSpec spec = MustParse(kHead);
  EXPECT_EQ(spec.model.kind, ModelSourceKind::kPath);
  EXPECT_EQ(spec.engine.kind, EngineKind::kBuiltin);
  EXPECT_EQ(spec.engine.readiness.path, "/health");
  EXPECT_EQ(spec.min_replicas, 1);
  EXPECT_EQ(spec.max_replicas, 1);
  EXPECT_EQ(spec.autoscaling.target, 2);
  EXPECT_EQ(spec.warm_pool, 0);
  EXPECT_EQ(spec.spot, SpotPolicy::kNever);
  EXPECT_EQ(MustParse(std::string(kHead) + "engine: builtin\n"), spec);
}

TEST(EndpointSpecTest, AFixedCountNeedsOnlyMin) {
  EndpointSpec spec = MustParse(std::string(kHead) + "replicas: {min: 3}\n");
  EXPECT_EQ(spec.min_replicas, 3);
  EXPECT_EQ(spec.max_replicas, 3);
}

TEST(EndpointSpecTest, ErrorsNameTheFileLineAndField) {
  EXPECT_EQ(ErrorOf(std::string(kHead) + "replicas:\n  min: 2\n  max: 1\n"),
            "chat.yaml:5: replicas.max: must be at least replicas.min (2), got 1");
  EXPECT_EQ(ErrorOf(std::string(kHead) + "engine:\n  comand: serve\n"),
            "chat.yaml:4: engine: unknown field \"comand\" (did you mean \"command\"?)");
  EXPECT_EQ(ErrorOf(std::string(kHead) + "spot: sometimes\n"),
            "chat.yaml:3: spot: must be one of never, prefer, only, got \"sometimes\"");
  EXPECT_EQ(ErrorOf(std::string(kHead) + "engine:\n  builtin:\n    quantize: q5_k\n"),
            "chat.yaml:5: engine.builtin.quantize: must be one of none, q8_0, q4_0, got \"q5_k\"");
  EXPECT_EQ(ErrorOf(std::string(kHead) + "warm_pool: many\n"),
            "chat.yaml:3: warm_pool: must be an integer from 0 to 100, got \"many\"");
  EXPECT_EQ(ErrorOf("name: chat\n"), "chat.yaml:1: model: is required");
  EXPECT_EQ(ErrorOf("model: /m\n"), "chat.yaml:1: name: is required");
  EXPECT_EQ(ErrorOf("name: Chat!\nmodel: /m\n").substr(0, 18), "chat.yaml:1: name:");
}

TEST(EndpointSpecTest, RefusesWhatCannotMeanAnything) {
  EXPECT_NE(ErrorOf(std::string(kHead) + "engine:\n  builtin: {}\n  command: serve\n")
                .find("has both builtin and command"),
            std::string::npos);
  EXPECT_NE(ErrorOf(std::string(kHead) +
                    "autoscaling:\n  target_ongoing_requests: 2\n  target_queue_depth: 4\n")
                .find("choose one"),
            std::string::npos);
  EXPECT_NE(ErrorOf(std::string(kHead) + "resources: {gpus: 1}\ngpu_memory: 8Gi\n")
                .find("gpu_memory: is a share of one GPU"),
            std::string::npos);
  EXPECT_NE(ErrorOf("name: chat\nmodel: tf:///x\n").find("must be tf://BUCKET/PREFIX"),
            std::string::npos);
  EXPECT_NE(ErrorOf(std::string(kHead) + "engine:\n  readiness: {path: health}\n")
                .find("engine.readiness.path: must start with /"),
            std::string::npos);
  EXPECT_NE(ErrorOf(std::string(kHead) + "env: {TENSORFLEET_TOKEN: x}\n")
                .find("env.TENSORFLEET_TOKEN: is set by the platform"),
            std::string::npos);
  EXPECT_NE(ErrorOf(std::string(kHead) + "resources: {gpu_memory: 8Gi}\n")
                .find("resources.gpu_memory: an endpoint declares a replica's share of one GPU as "
                      "gpu_memory, at the top level"),
            std::string::npos);
  EXPECT_NE(ErrorOf(std::string(kHead) + "env: {TENSORFLEET_ENGINE_API_KEY: x}\n")
                .find("env.TENSORFLEET_ENGINE_API_KEY: is set by the platform: each replica has a "
                      "key of its own"),
            std::string::npos);
  EXPECT_NE(ErrorOf(std::string(kHead) + "autoscaling: {scale_to_zero_after: 1s}\n")
                .find("autoscaling.scale_to_zero_after: must be a duration from 10s"),
            std::string::npos);
  EXPECT_NE(ErrorOf(std::string(kHead) + "model: /again\n").find("model"), std::string::npos);
  EXPECT_NE(ErrorOf(std::string(kHead) + "engine: vllm\n").find("must be builtin"),
            std::string::npos);
  EXPECT_NE(ErrorOf("- a list\n").find("must be a mapping"), std::string::npos);
  EXPECT_EQ(ErrorOf(""), "chat.yaml:1: the spec is empty");
}

// The worker holds a replica to its declared CPUs, so the built-in engine's threads follow them:
// unset, as many as resources.cpus; more than that, refused (they would only take turns).
TEST(EndpointSpecTest, TheBuiltinEnginesThreadsFollowTheReplicasCpus) {
  auto script_of = [](const std::string& yaml) {
    return ReplicaJobSpec(MustParse(kHead + yaml), "rep_1", "/models/tiny", "key").command.back();
  };
  EXPECT_NE(script_of("resources: {cpus: 3}\n").find(" --threads 3 "), std::string::npos);
  EXPECT_NE(
      script_of("resources: {cpus: 4}\nengine:\n  builtin: {threads: 2}\n").find(" --threads 2 "),
      std::string::npos);
  EXPECT_NE(script_of("").find(" --threads 1 "), std::string::npos)
      << "one CPU by default, so one thread";
  EXPECT_EQ(
      ErrorOf(std::string(kHead) + "resources: {cpus: 1}\nengine:\n  builtin: {threads: 2}\n"),
      "chat.yaml:5: engine.builtin.threads: is 2, more than resources.cpus (1): a replica is "
      "held to its declared CPUs, so the extra threads would only take turns; raise "
      "resources.cpus, or leave threads out to use them all");
}

TEST(EndpointSpecTest, JsonRoundTripsEveryExample) {
  for (const char* name : {"chat.yaml", "vllm.yaml"}) {
    EndpointSpec spec = MustParse(ReadExample(name));
    auto back = EndpointSpecFromJson(EndpointSpecToJson(spec));
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(*back, spec) << name;
  }
}

TEST(EndpointSpecTest, JsonIsReadAsStrictlyAsYaml) {
  nlohmann::json json = EndpointSpecToJson(MustParse(kHead));
  json["replicas"]["max"] = 0;
  EXPECT_EQ(EndpointSpecFromJson(json).status().message(),
            "replicas.max: must be an integer from 1 to 100, got 0");
  json = EndpointSpecToJson(MustParse(kHead));
  json["surprise"] = 1;
  EXPECT_EQ(EndpointSpecFromJson(json).status().message(), "unknown field \"surprise\"");
  json = EndpointSpecToJson(MustParse(kHead));
  json["spot"] = "maybe";
  EXPECT_NE(EndpointSpecFromJson(json).status().message().find("spot: must be one of"),
            std::string::npos);
  EXPECT_FALSE(EndpointSpecFromJson(nlohmann::json::array()).ok());
}

}  // namespace
}  // namespace tf::endpoints
