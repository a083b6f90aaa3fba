// The fixture of the tests that drive the S3-compatible API with real clients: a real
// `tensorfleet server` (on a fixed port, also taking virtual-hosted requests to
// BUCKET.s3.tensorfleet.test), an access key made by `tensorfleet s3 key create`, and the
// environment that boto3 scripts (tests/s3/*.py), the AWS CLI, rclone and s3cmd read it from.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "base/crypto.h"
#include "file_test_util.h"
#include "program_run.h"
#include "server_process.h"
#include "store_test_env.h"

namespace tf::testing {

inline constexpr const char* kPython = "/usr/bin/python3";
inline constexpr const char* kAws = "/usr/bin/aws";

inline std::string RandomBytes(size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>(gen());
  return s;
}

class S3ClientsTest : public ::testing::Test {
 protected:
  S3ClientsTest() : S3ClientsTest(std::vector<std::string>{}) {}
  // `server_flags` go to `tensorfleet server` after those every case has.
  explicit S3ClientsTest(std::vector<std::string> server_flags)
      : server_(data_dir(), FreePort(), WithVirtualHosts(std::move(server_flags))) {}

  void SetUp() override {
    if (!std::filesystem::exists(kPython) || !std::filesystem::exists(kAws)) {
      GTEST_SKIP() << "needs " << kPython << " with boto3 and " << kAws;
    }
    StartServer();
    auto key = Cli({"--json", "s3", "key", "create", "clients"});
    ASSERT_EQ(key.exit_code, 0) << key.output;
    nlohmann::json j = nlohmann::json::parse(key.output);
    key_id_ = j["id"];
    secret_ = j["secret"];
    ASSERT_EQ(key_id_.size(), 20u);
    ASSERT_EQ(key_id_.rfind("TFAK", 0), 0u);
    ASSERT_EQ(secret_.size(), 40u);
    WriteAwsConfig(key_id_, secret_);
  }

  void StartServer() {
    ASSERT_TRUE(server_.Start());
    token_ = server_.token();
  }

  std::string data_dir() const { return (dir_.path() / "data").string(); }
  std::string url() const { return server_.url(); }

  ProgramRun Cli(const std::vector<std::string>& args) {
    return RunTensorfleetOn(url(), token_, args);
  }

  // Credentials and region for the AWS CLI in files of this test only.
  void WriteAwsConfig(const std::string& id, const std::string& secret) {
    WriteFile(
        dir_.path() / "aws" / "credentials",
        "[default]\naws_access_key_id = " + id + "\naws_secret_access_key = " + secret + "\n");
    WriteFile(dir_.path() / "aws" / "config", "[default]\nregion = us-east-1\n");
  }

  std::vector<std::string> ClientEnv() const {
    return {"AWS_CONFIG_FILE=" + (dir_.path() / "aws" / "config").string(),
            "AWS_SHARED_CREDENTIALS_FILE=" + (dir_.path() / "aws" / "credentials").string(),
            "AWS_ACCESS_KEY_ID=" + key_id_,
            "AWS_SECRET_ACCESS_KEY=" + secret_,
            "AWS_DEFAULT_REGION=us-east-1",
            "AWS_PAGER=",
            "S3_ENDPOINT=" + url(),
            "S3_DOMAIN=s3.tensorfleet.test",
            "S3_BUCKET=t" + RandomHex(4),
            "S3_DATA_DIR=" + data_dir()};
  }

  ProgramRun Aws(std::vector<std::string> args) {
    std::vector<std::string> argv = {kAws, "--endpoint-url", url()};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<std::string> env = ClientEnv();
    // The AWS CLI reads the files: the variables would win over a key changed in them.
    env.erase(env.begin() + 2, env.begin() + 4);
    env.push_back("AWS_ACCESS_KEY_ID=");
    env.push_back("AWS_SECRET_ACCESS_KEY=");
    return RunProgram(argv, env);
  }

  // Runs tests/s3/NAME with ClientEnv() and `env` (NAME=VALUE) on top of it.
  void RunScript(const std::string& name, const std::vector<std::string>& env = {}) {
    std::vector<std::string> script_env = ClientEnv();
    script_env.insert(script_env.end(), env.begin(), env.end());
    ProgramRun r = RunProgram({kPython, std::string(TENSORFLEET_SOURCE_DIR) + "/tests/s3/" + name},
                              script_env, std::chrono::seconds(600));
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("checks passed"), std::string::npos) << r.output;
  }

  static std::vector<std::string> WithVirtualHosts(std::vector<std::string> flags) {
    flags.insert(flags.begin(), {"--s3-domain", "S3.tensorfleet.test"});
    return flags;
  }

  // Blob files under the data directory's objects/ (content, whether committed or not).
  int BlobFiles() {
    int n = 0;
    for (const auto& e : std::filesystem::recursive_directory_iterator(data_dir() + "/objects")) {
      if (e.is_regular_file() && e.path().filename() != "owner") ++n;
    }
    return n;
  }

  TempDir dir_;
  // On a fixed port, so that the clients' endpoint stays right across a restart.
  // Also taking virtual-hosted requests, to BUCKET.s3.tensorfleet.test (a reserved name that
  // boto_virtual_host.py resolves to this machine).
  TensorfleetServer server_;
  std::string token_, key_id_, secret_;
};

}  // namespace tf::testing
