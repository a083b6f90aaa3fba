// The ssh provider's calls (pools/ssh_provider.h) with a stand-in for `ssh`: a ScriptRunner
// that records each call and answers as a host's shell would. The provider against a real sshd
// is in pools_e2e_test.cc.
#include <gtest/gtest.h>

#include "pools/ssh_provider.h"
#include "store_test_env.h"

namespace tf::pools {
namespace {

class SshProviderTest : public ::testing::Test {
 protected:
  SshProviderTest() {
    spec_.name = "rented";
    spec_.provider.type = ProviderType::kSsh;
    spec_.provider.ssh.hosts = {"gpu@a.example", "gpu@b.example:2222"};
    spec_.provider.ssh.install = false;
    spec_.machine.gpus = 1;
    context_.server_url = "http://10.0.0.5:8470";
    context_.dir = dir_.path() / "rented";
    context_.clock = &clock_;
  }

  std::unique_ptr<SshProvider> Provider() {
    return std::make_unique<SshProvider>(spec_, context_, [this](const ScriptCall& call) {
      // The host is the argument after "--"; the script is ssh's stdin.
      std::string host;
      for (size_t i = 0; i + 1 < call.argv.size(); ++i) {
        if (call.argv[i] == "--") host = call.argv[i + 1];
      }
      bool list = call.input.find("for m in") != std::string::npos;
      calls_.push_back((list ? "list " : "other ") + host);
      ScriptOutcome outcome;
      outcome.exit_code = 0;
      if (list && host == "gpu@a.example") outcome.out = "rented-1 running 4242\n";
      return Result<ScriptOutcome>(outcome);
    });
  }

  // The calls made since the last look, and forgets them.
  std::vector<std::string> Calls() { return std::exchange(calls_, {}); }

  tf::testing::TempDir dir_;
  FakeClock clock_;
  PoolSpec spec_;
  ProviderContext context_;
  std::vector<std::string> calls_;
};

using Want = std::vector<std::string>;

TEST_F(SshProviderTest, EachHostIsListedAtMostEveryTenSecondsAndAtOnceAfterAChange) {
  auto provider = Provider();
  auto first = provider->List();
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_EQ(first->size(), 1u);
  EXPECT_EQ((*first)[0].id, "rented-1");
  EXPECT_EQ(Calls(), (Want{"list gpu@a.example", "list gpu@b.example"}));

  // The controller asks every second; the hosts are not logged in to again within 10 s.
  for (int i = 0; i < 9; ++i) {
    clock_.Advance(kSecondMs);
    auto again = provider->List();
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again->size(), 1u);
  }
  EXPECT_EQ(Calls(), Want{});
  clock_.Advance(kSecondMs);
  ASSERT_TRUE(provider->List().ok());
  EXPECT_EQ(Calls(), (Want{"list gpu@a.example", "list gpu@b.example"}));

  // A start changes what is there: the next list asks at once.
  ASSERT_TRUE(provider->Create(spec_, "rented-2", "tfj_secret").ok());
  EXPECT_EQ(Calls(), (Want{"other gpu@b.example"}));  // a runs rented-1
  ASSERT_TRUE(provider->List().ok());
  EXPECT_EQ(Calls(), (Want{"list gpu@a.example", "list gpu@b.example"}));
  ASSERT_TRUE(provider->Delete("rented-1").ok());
  EXPECT_EQ(Calls(), (Want{"other gpu@a.example"}));
  ASSERT_TRUE(provider->List().ok());
  EXPECT_EQ(Calls(), (Want{"list gpu@a.example", "list gpu@b.example"}));
}

}  // namespace
}  // namespace tf::pools
