// Pool specs as users write them (pools/pool_spec.h): what is read, the JSON kept in the store,
// and errors that name the line and field.
#include <gtest/gtest.h>

#include "pools/pool_spec.h"

namespace tf::pools {
namespace {

TEST(PoolSpecTest, AFullSpecIsReadAndSurvivesTheStoresJson) {
  auto spec = ParsePoolSpec(R"(name: gpu-a10
provider:
  type: local
machine:
  gpus: 1
  gpu_model: A10G
  gpu_memory: 24Gi
  cpus: 4
  memory: 16Gi
  price_per_hour: 1.006
  spot: true
  zone: us-east-1a
  placement_group: pg-1
  labels: {tier: batch}
min: 0
max: 4
idle_timeout: 5m
start_timeout: 3m
)",
                            "pool.yaml");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_EQ(spec->name, "gpu-a10");
  EXPECT_EQ(spec->provider.type, ProviderType::kLocal);
  EXPECT_EQ(spec->machine.gpus, 1);
  EXPECT_EQ(spec->machine.gpu_memory_bytes, int64_t{24} << 30);
  EXPECT_DOUBLE_EQ(spec->machine.price_per_hour, 1.006);
  EXPECT_TRUE(spec->machine.spot);
  EXPECT_EQ(spec->machine.labels.at("tier"), "batch");
  EXPECT_EQ(spec->max, 4);
  EXPECT_EQ(spec->idle_timeout_ms, 300'000);
  EXPECT_EQ(spec->start_timeout_ms, 180'000);

  auto again = PoolSpecFromJson(PoolSpecToJson(*spec));
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(PoolSpecToJson(*again), PoolSpecToJson(*spec));
}

TEST(PoolSpecTest, TheLocalProviderNeedsOnlyAName) {
  auto spec = ParsePoolSpec("name: cpu\nprovider: local\nmax: 2\n", "p.yaml");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_EQ(spec->provider.type, ProviderType::kLocal);
  EXPECT_EQ(spec->min, 0);
  EXPECT_EQ(spec->machine.cpus, 1);
}

TEST(PoolSpecTest, TheCommandProviderNamesItsThreeScripts) {
  auto spec = ParsePoolSpec(R"(name: ec2-a10
provider:
  type: command
  create: /opt/tensorfleet/ec2/create.sh
  delete: [/opt/tensorfleet/ec2/delete.sh, --wait]
  list: /opt/tensorfleet/ec2/list.sh
  timeout: 2m
  retries: 1
  env: {AWS_REGION: us-east-1}
  server_url: http://10.0.0.5:8470
machine: {gpus: 1, price_per_hour: 1.006}
max: 4
)",
                            "ec2.yaml");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  const CommandScripts& c = spec->provider.command;
  EXPECT_EQ(spec->provider.type, ProviderType::kCommand);
  EXPECT_EQ(c.create,
            (std::vector<std::string>{"/bin/sh", "-c", "/opt/tensorfleet/ec2/create.sh"}));
  EXPECT_EQ(c.remove, (std::vector<std::string>{"/opt/tensorfleet/ec2/delete.sh", "--wait"}));
  EXPECT_EQ(spec->provider.timeout_ms, 120'000);
  EXPECT_EQ(spec->provider.retries, 1);
  EXPECT_EQ(c.env.at("AWS_REGION"), "us-east-1");
  EXPECT_EQ(spec->provider.server_url, "http://10.0.0.5:8470");
  auto again = PoolSpecFromJson(PoolSpecToJson(*spec));
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(PoolSpecToJson(*again), PoolSpecToJson(*spec));

  auto error = [](const std::string& yaml) {
    auto spec = ParsePoolSpec(yaml, "p.yaml");
    return spec.ok() ? std::string("accepted") : spec.status().message();
  };
  EXPECT_EQ(error("name: gpu\nprovider: {type: command, create: c.sh, list: l.sh}\n"),
            "p.yaml:2: provider.delete: is required for the command provider");
  EXPECT_EQ(error("name: gpu\nprovider: {type: local, create: c.sh}\n"),
            "p.yaml:2: provider.type: must be command to run scripts (create, delete, list, env)");
  EXPECT_EQ(error("name: gpu\nprovider: {type: command, timeout: 2h}\n"),
            "p.yaml:2: provider.timeout: must be from 1s to 1h, got 2h");
  EXPECT_EQ(error("name: gpu\nprovider: {type: command, server_url: 10.0.0.5}\n"),
            "p.yaml:2: provider.server_url: must be an http:// or https:// URL, got "
            "\"10.0.0.5\"");
}

TEST(PoolSpecTest, MistakesAreNamedWithTheirLine) {
  auto error = [](const std::string& yaml) {
    auto spec = ParsePoolSpec(yaml, "p.yaml");
    return spec.ok() ? std::string("accepted") : spec.status().message();
  };
  EXPECT_EQ(error("name: gpu\nprovider: cloud\n"),
            "p.yaml:2: provider: must be one of local, command, ssh, got \"cloud\"");
  EXPECT_EQ(error("name: gpu\nmin: 3\nmax: 2\n"), "p.yaml:3: max: must be at least min (3), got 2");
  EXPECT_EQ(error("name: Gpu\n"),
            "p.yaml:1: name: must be 1-40 lowercase letters, digits and -, starting with a "
            "letter, got \"Gpu\"");
  EXPECT_EQ(error("name: gpu\nmachine:\n  gpus: 1\n  labels: {pool: x}\n"),
            "p.yaml:4: machine.labels.pool: is set by the pool itself (zone and placement_group "
            "have fields of their own)");
  EXPECT_EQ(error("name: gpu\nmachine: {price_per_hour: cheap}\n"),
            "p.yaml:2: machine.price_per_hour: must be a price in USD per hour from 0 to 10000, "
            "got \"cheap\"");
  EXPECT_EQ(error("name: gpu\nmax_nodes: 3\n").substr(0, 28), "p.yaml:2: unknown field \"max");
  EXPECT_EQ(error(""), "p.yaml:1: the spec is empty");
}

}  // namespace
}  // namespace tf::pools
