// `--config FILE` of `tensorfleet up|server` (cli/server_config.h): settings, the pools it
// declares with their lines kept, and mistakes named with theirs.
#include <gtest/gtest.h>

#include <fstream>

#include "cli/server_config.h"
#include "pools/pool_spec.h"
#include "store_test_env.h"

namespace tf::cli {
namespace {

using tf::testing::TempDir;

class ServerConfigTest : public ::testing::Test {
 protected:
  std::string Write(const std::string& text) {
    std::string path = (dir_.path() / "server.yaml").string();
    std::ofstream(path) << text;
    return path;
  }
  std::string Error(const std::string& text) {
    auto config = ReadServerConfig(Write(text));
    return config.ok() ? "accepted" : config.status().message();
  }
  TempDir dir_;
};

TEST_F(ServerConfigTest, SettingsAndPoolsAreReadAndEachPoolKeepsItsLines) {
  std::string path = Write(R"(# the fleet's server
port: 8471
heartbeat_timeout: 5s
pools:
  - name: cpu
    provider: local
    machine: {cpus: 2}
    max: 3
  - {name: gpu, machine: {gpus: 1}, max: 2}
log_level: debug
)");
  auto config = ReadServerConfig(path);
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->settings.at("port"), "8471");
  EXPECT_EQ(config->settings.at("heartbeat_timeout"), "5s");
  EXPECT_EQ(config->settings.at("log_level"), "debug");
  ASSERT_EQ(config->pools.size(), 2u);
  EXPECT_EQ(config->pools[0].second, path);
  auto cpu = pools::ParsePoolSpec(config->pools[0].first, path);
  ASSERT_TRUE(cpu.ok()) << cpu.status().ToString();
  EXPECT_EQ(cpu->name, "cpu");
  EXPECT_EQ(cpu->machine.cpus, 2);
  EXPECT_EQ(cpu->max, 3);
  auto gpu = pools::ParsePoolSpec(config->pools[1].first, path);
  ASSERT_TRUE(gpu.ok()) << gpu.status().ToString();
  EXPECT_EQ(gpu->machine.gpus, 1);
  EXPECT_EQ(gpu->max, 2);
}

TEST_F(ServerConfigTest, APoolsMistakeIsNamedWithTheFilesLine) {
  std::string path = Write(R"(pools:
  - name: cpu
    max: 1
  - name: gpu
    machine:
      gpus: 1
    max: -1
)");
  auto config = ReadServerConfig(path);
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  ASSERT_EQ(config->pools.size(), 2u);
  auto gpu = pools::ParsePoolSpec(config->pools[1].first, path);
  ASSERT_FALSE(gpu.ok());
  EXPECT_EQ(gpu.status().message(), path + ":7: max: must be an integer from 0 to 1000, got -1");
}

TEST_F(ServerConfigTest, MistakesAreNamedWithTheirLine) {
  std::string path = (dir_.path() / "server.yaml").string();
  EXPECT_EQ(Error("port: 8470\nprot: 1\n"),
            path + ":2: unknown setting \"prot\" (did you mean \"port\"?)");
  EXPECT_EQ(Error("store: [a, b]\n"), path + ":1: store: must be a single value");
  EXPECT_EQ(Error("pools: {name: x}\n"), path + ":1: pools: must be a list of pool specs");
  EXPECT_EQ(Error("pools:\n  - gpu\n"), path + ":2: pools[0]: must be a pool spec");
  EXPECT_EQ(Error("- port\n"), path + ":1: the config must be a mapping of settings and pools");
  auto missing = ReadServerConfig((dir_.path() / "nope.yaml").string());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace tf::cli
