// What lets workers in (migration 14): join tokens that register new nodes only, within their
// uses and lifetime, and the credential each node is issued, which dies with the node. Run
// against every back end (tests/store_test_env.h).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/crypto.h"
#include "store/store.h"
#include "store_test_env.h"
#include "store_test_fixture.h"

namespace tf::store {
namespace {

using testing::StoreBackends;

constexpr TimeMs kT0 = 1'700'000'000'000;

class NodeAccessContractTest : public testing::StoreTest {
 protected:
  // Back ends may keep one database across tests: each test's ids are its own.
  JoinToken MakeToken(int64_t max_uses) {
    JoinToken t;
    t.id = "jtk_" + RandomHex(8);
    t.name = "rack-2";
    t.hash = Sha256Hex(t.id);
    t.created_at = kT0;
    t.expires_at = kT0 + kHourMs;
    t.max_uses = max_uses;
    return t;
  }
  NodeRecord MakeNode() {
    NodeRecord n;
    n.id = "node_" + RandomHex(8);
    n.name = "box";
    n.info_json = "{}";
    n.registered_at = n.heartbeat_at = kT0 + kMinuteMs;
    return n;
  }
  Result<NodeRecord> Join(const NodeRecord& node, const JoinToken& token,
                          const std::string& credential_hash) {
    return store_->nodes().AdmitNode(node, NodeAdmission{token.id, credential_hash});
  }
  AuthStore& auth() { return store_->auth(); }
};

TEST_P(NodeAccessContractTest, AJoinTokenRegistersNewNodesWithinItsUses) {
  JoinToken token = MakeToken(2);
  ASSERT_TRUE(auth().CreateJoinToken(token).ok());
  auto found = auth().FindJoinTokenByHash(token.hash);
  ASSERT_TRUE(found.ok()) << found.status().ToString();
  EXPECT_EQ(found->id, token.id);
  EXPECT_EQ(found->expires_at, kT0 + kHourMs);
  EXPECT_EQ(found->max_uses, 2);
  EXPECT_EQ(found->uses, 0);
  EXPECT_FALSE(found->revoked_at.has_value());

  NodeRecord a = MakeNode();
  auto joined = Join(a, token, Sha256Hex("a"));
  ASSERT_TRUE(joined.ok()) << joined.status().ToString();
  EXPECT_EQ(joined->epoch, 1);
  EXPECT_EQ(joined->state, "ready");
  // A registered node cannot be taken over with a join token, and that spends no use.
  auto takeover = Join(a, token, Sha256Hex("thief"));
  EXPECT_EQ(takeover.status().code(), StatusCode::kAlreadyExists) << takeover.status().ToString();
  auto owner = auth().FindNodeByCredential(Sha256Hex("a"));
  ASSERT_TRUE(owner.ok()) << owner.status().ToString();
  EXPECT_EQ(*owner, a.id);
  EXPECT_EQ(auth().FindNodeByCredential(Sha256Hex("thief")).status().code(), StatusCode::kNotFound);

  ASSERT_TRUE(Join(MakeNode(), token, Sha256Hex("b")).ok());
  auto used_up = Join(MakeNode(), token, Sha256Hex("c"));
  EXPECT_EQ(used_up.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(used_up.status().message(), "join token " + token.id + " is used up (2 registrations)");
  EXPECT_EQ(auth().FindJoinTokenByHash(token.hash)->uses, 2);
}

TEST_P(NodeAccessContractTest, AnExpiredOrRevokedJoinTokenRegistersNothing) {
  JoinToken token = MakeToken(0);
  ASSERT_TRUE(auth().CreateJoinToken(token).ok());
  NodeRecord late = MakeNode();
  late.registered_at = late.heartbeat_at = token.expires_at;
  auto expired = Join(late, token, Sha256Hex("late"));
  EXPECT_EQ(expired.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(expired.status().message(), "join token " + token.id + " has expired");
  EXPECT_EQ(store_->nodes().GetNode(late.id).status().code(), StatusCode::kNotFound);

  ASSERT_TRUE(auth().RevokeJoinToken(token.id, kT0 + 5).ok());
  ASSERT_TRUE(auth().RevokeJoinToken(token.id, kT0 + 9).ok());  // the first time is kept
  EXPECT_EQ(auth().FindJoinTokenByHash(token.hash)->revoked_at, kT0 + 5);
  auto revoked = Join(MakeNode(), token, Sha256Hex("x"));
  EXPECT_EQ(revoked.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(revoked.status().message(), "join token " + token.id + " was revoked");

  EXPECT_EQ(auth().RevokeJoinToken("jtk_missing", kT0).code(), StatusCode::kNotFound);
  JoinToken unknown = MakeToken(0);  // never stored
  EXPECT_EQ(Join(MakeNode(), unknown, "").status().code(), StatusCode::kNotFound);

  auto listed = auth().ListJoinTokens();
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  bool seen = false;
  for (const JoinToken& t : *listed) seen = seen || t.id == token.id;
  EXPECT_TRUE(seen);
}

TEST_P(NodeAccessContractTest, ANodesCredentialIsReplacedByItsNextAndDiesWithTheNode) {
  NodeRecord n = MakeNode();
  ASSERT_TRUE(store_->nodes().AdmitNode(n, NodeAdmission{"", Sha256Hex("first")}).ok());
  EXPECT_EQ(*auth().FindNodeByCredential(Sha256Hex("first")), n.id);
  // A registration that issues nothing keeps the credential.
  auto kept = store_->nodes().AdmitNode(n, NodeAdmission{});
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(kept->epoch, 2);
  EXPECT_EQ(*auth().FindNodeByCredential(Sha256Hex("first")), n.id);
  ASSERT_TRUE(store_->nodes().AdmitNode(n, NodeAdmission{"", Sha256Hex("second")}).ok());
  EXPECT_EQ(auth().FindNodeByCredential(Sha256Hex("first")).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(*auth().FindNodeByCredential(Sha256Hex("second")), n.id);

  ASSERT_TRUE(store_->nodes().SetNodeState(n.id, "lost", "").ok());
  ASSERT_TRUE(store_->nodes().DeleteLostNode(n.id).ok());
  EXPECT_EQ(auth().FindNodeByCredential(Sha256Hex("second")).status().code(),
            StatusCode::kNotFound);
}

TEST_P(NodeAccessContractTest, ExpiredJoinTokensAreForgotten) {
  JoinToken token = MakeToken(1);
  ASSERT_TRUE(auth().CreateJoinToken(token).ok());
  auto none = auth().DeleteJoinTokensExpiredBefore(token.expires_at);
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  ASSERT_TRUE(auth().FindJoinTokenByHash(token.hash).ok());  // expires at, not before, that time
  auto some = auth().DeleteJoinTokensExpiredBefore(token.expires_at + 1);
  ASSERT_TRUE(some.ok()) << some.status().ToString();
  EXPECT_GE(*some, 1);
  EXPECT_EQ(auth().FindJoinTokenByHash(token.hash).status().code(), StatusCode::kNotFound);
}

INSTANTIATE_TEST_SUITE_P(Backends, NodeAccessContractTest, ::testing::ValuesIn(StoreBackends()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace tf::store
