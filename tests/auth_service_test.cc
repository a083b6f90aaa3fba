// AuthService on a store that counts its reads, with a fake clock.
#include "auth/auth_service.h"

#include <gtest/gtest.h>

#include "store_test_env.h"

namespace tf::auth {
namespace {

using tf::testing::StoreUrl;
using tf::testing::TempDir;

// Counts token lookups on the way to a real SQLite store.
class CountingAuthStore : public store::AuthStore {
 public:
  explicit CountingAuthStore(store::AuthStore& inner) : inner_(inner) {}
  Status CreateProject(const store::Project& p) override { return inner_.CreateProject(p); }
  Result<store::Project> GetProject(const std::string& id) override {
    return inner_.GetProject(id);
  }
  Result<store::Project> GetProjectByName(const std::string& n) override {
    return inner_.GetProjectByName(n);
  }
  Result<std::vector<store::Project>> ListProjects() override { return inner_.ListProjects(); }
  Status CreateToken(const store::Token& t) override { return inner_.CreateToken(t); }
  Result<store::Token> FindTokenByHash(const std::string& h) override {
    ++lookups;
    return inner_.FindTokenByHash(h);
  }
  Result<std::vector<store::Token>> ListTokens(const std::string& p) override {
    return inner_.ListTokens(p);
  }
  Status RevokeToken(const std::string& id, TimeMs now) override {
    return inner_.RevokeToken(id, now);
  }
  Status CreateJoinToken(const store::JoinToken& t) override { return inner_.CreateJoinToken(t); }
  Result<store::JoinToken> FindJoinTokenByHash(const std::string& h) override {
    return inner_.FindJoinTokenByHash(h);
  }
  Result<std::vector<store::JoinToken>> ListJoinTokens() override {
    return inner_.ListJoinTokens();
  }
  Status RevokeJoinToken(const std::string& id, TimeMs now) override {
    return inner_.RevokeJoinToken(id, now);
  }
  Result<int64_t> DeleteJoinTokensExpiredBefore(TimeMs before) override {
    return inner_.DeleteJoinTokensExpiredBefore(before);
  }
  Result<std::string> FindNodeByCredential(const std::string& h) override {
    return inner_.FindNodeByCredential(h);
  }
  int lookups = 0;

 private:
  store::AuthStore& inner_;
};

class AuthServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = store::OpenStore(StoreUrl("sqlite", dir_));
    ASSERT_TRUE(s.ok());
    store_ = std::move(s).value();
    counting_ = std::make_unique<CountingAuthStore>(store_->auth());
    auth_ = std::make_unique<AuthService>(*counting_, clock_);
  }
  TempDir dir_;
  FakeClock clock_;
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<CountingAuthStore> counting_;
  std::unique_ptr<AuthService> auth_;
};

TEST_F(AuthServiceTest, ACheckedTokenIsRememberedBrieflyAndForgottenOnRevoke) {
  auto project = auth_->CreateProject("team");
  ASSERT_TRUE(project.ok());
  auto issued = auth_->CreateToken(project->id, "ci", false);
  ASSERT_TRUE(issued.ok());

  ASSERT_TRUE(auth_->Authenticate(issued->secret).ok());
  ASSERT_TRUE(auth_->Authenticate(issued->secret).ok());
  EXPECT_EQ(counting_->lookups, 1);  // the second check read nothing

  clock_.Advance(AuthService::kPrincipalCacheMs);
  auto again = auth_->Authenticate(issued->secret);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->project_name, "team");
  EXPECT_EQ(counting_->lookups, 2);  // expired: checked against the store again

  ASSERT_TRUE(auth_->RevokeToken(issued->token.id).ok());
  auto revoked = auth_->Authenticate(issued->secret);
  EXPECT_EQ(revoked.status().code(), StatusCode::kUnauthenticated);
}

TEST_F(AuthServiceTest, CachedPrincipalAnswersOnlyWhatTheCacheHolds) {
  auto project = auth_->CreateProject("team");
  ASSERT_TRUE(project.ok());
  auto issued = auth_->CreateToken(project->id, "ci", false);
  ASSERT_TRUE(issued.ok());

  EXPECT_FALSE(auth_->CachedPrincipal(issued->secret).has_value());  // never checked yet
  ASSERT_TRUE(auth_->Authenticate(issued->secret).ok());
  auto cached = auth_->CachedPrincipal(issued->secret);
  ASSERT_TRUE(cached.has_value());
  EXPECT_EQ(cached->project_id, project->id);
  EXPECT_EQ(cached->token_id, issued->token.id);
  EXPECT_FALSE(auth_->CachedPrincipal("tfk_" + std::string(40, 'a')).has_value());
  EXPECT_FALSE(auth_->CachedPrincipal("").has_value());
  EXPECT_EQ(counting_->lookups, 1);  // CachedPrincipal never reads the store

  clock_.Advance(AuthService::kPrincipalCacheMs);
  EXPECT_FALSE(auth_->CachedPrincipal(issued->secret).has_value());  // expired
  ASSERT_TRUE(auth_->Authenticate(issued->secret).ok());
  ASSERT_TRUE(auth_->RevokeToken(issued->token.id).ok());
  EXPECT_FALSE(auth_->CachedPrincipal(issued->secret).has_value());  // revoked: forgotten
  EXPECT_EQ(counting_->lookups, 2);
}

TEST_F(AuthServiceTest, FailuresAreNeverRemembered) {
  std::string wrong = "tfk_" + std::string(40, 'a');
  EXPECT_EQ(auth_->Authenticate(wrong).status().code(), StatusCode::kUnauthenticated);
  EXPECT_EQ(auth_->Authenticate(wrong).status().code(), StatusCode::kUnauthenticated);
  EXPECT_EQ(counting_->lookups, 2);
}

}  // namespace
}  // namespace tf::auth
