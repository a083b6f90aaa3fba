// What a worker's secret lets it do over HTTP (api/node_routes.cc): a join token registers new
// nodes and nothing else; a node's credential acts for its own node only; a project's token
// acts for none; join tokens are made, listed and revoked by admins.
#include <gtest/gtest.h>

#include <string>

#include "api_test_util.h"
#include "base/crypto.h"

namespace tf::testing {
namespace {

class WorkerAccessTest : public ApiFixture {
 protected:
  std::string NewJoinToken(int64_t max_uses) {
    ApiReply made =
        Call("POST", "/v1/join-tokens", Json{{"name", "rack-2"}, {"max_uses", max_uses}});
    EXPECT_EQ(made.status, 201) << made.body.dump();
    return made.body.value("secret", "");
  }
  static std::string RegisterBody(const std::string& node) {
    return Json{{"id", node}, {"name", "box"}, {"info", {{"address", "10.0.0.9"}, {"cpus", 4}}}}
        .dump();
  }
  static std::string HeartbeatBody(int64_t epoch) { return Json{{"epoch", epoch}}.dump(); }
  static std::string NewNodeId() { return "node_" + RandomHex(8); }
};

TEST_F(WorkerAccessTest, AJoinTokenRegistersOneNewNodeWhichThenActsWithItsOwnCredential) {
  std::string join = NewJoinToken(1);
  ASSERT_EQ(join.substr(0, 4), "tfj_");
  std::string node = NewNodeId();

  // The join token cannot act for a node, or reach a project's data.
  EXPECT_EQ(Call("POST", "/v1/nodes/" + node + "/heartbeat", HeartbeatBody(1), join).status, 403);
  EXPECT_EQ(Call("GET", "/v1/queues", "", join).status, 401);
  EXPECT_EQ(Call("GET", "/v1/join-tokens", "", join).status, 401);

  ApiReply registered = Call("POST", "/v1/nodes", RegisterBody(node), join);
  ASSERT_EQ(registered.status, 200) << registered.body.dump();
  std::string credential = registered.body.value("credential", "");
  ASSERT_EQ(credential.substr(0, 4), "tfn_");
  EXPECT_EQ(registered.body["epoch"], 1);

  // Used up: it registers no other node.
  ApiReply second = Call("POST", "/v1/nodes", RegisterBody(NewNodeId()), join);
  EXPECT_EQ(second.status, 401) << second.body.dump();
  EXPECT_NE(second.body.dump().find("used up"), std::string::npos) << second.body.dump();

  // The credential acts for its node...
  EXPECT_EQ(Call("POST", "/v1/nodes/" + node + "/heartbeat", HeartbeatBody(1), credential).status,
            200);
  EXPECT_EQ(Call("GET", "/v1/nodes/" + node + "/assignments", "", credential).status, 200);
  // ...registers it again, keeping itself (no new credential)...
  ApiReply again = Call("POST", "/v1/nodes", RegisterBody(node), credential);
  ASSERT_EQ(again.status, 200) << again.body.dump();
  EXPECT_EQ(again.body["epoch"], 2);
  EXPECT_FALSE(again.body.contains("credential"));
  EXPECT_EQ(Call("POST", "/v1/nodes/" + node + "/heartbeat", HeartbeatBody(2), credential).status,
            200);
  // ...and nothing else: no project's data, no admin route.
  EXPECT_EQ(Call("GET", "/v1/queues", "", credential).status, 401);
  EXPECT_EQ(Call("POST", "/v1/nodes/" + node + "/undrain", "{}", credential).status, 401);
  EXPECT_EQ(Call("POST", "/v1/join-tokens", R"({"name":"more"})", credential).status, 401);
}

TEST_F(WorkerAccessTest, ANodesCredentialDoesNotActForAnotherNode) {
  std::string join = NewJoinToken(0);
  std::string a = NewNodeId();
  std::string b = NewNodeId();
  ApiReply ra = Call("POST", "/v1/nodes", RegisterBody(a), join);
  ApiReply rb = Call("POST", "/v1/nodes", RegisterBody(b), join);
  ASSERT_EQ(ra.status, 200);
  ASSERT_EQ(rb.status, 200);
  std::string cred_a = ra.body["credential"];

  ApiReply hb = Call("POST", "/v1/nodes/" + b + "/heartbeat", HeartbeatBody(1), cred_a);
  EXPECT_EQ(hb.status, 403);
  EXPECT_EQ(hb.body["error"]["message"], "this credential is node " + a + "'s, not " + b + "'s");
  EXPECT_EQ(Call("GET", "/v1/nodes/" + b + "/assignments", "", cred_a).status, 403);
  EXPECT_EQ(Call("POST", "/v1/nodes/" + b + "/drain", "{}", cred_a).status, 403);
  EXPECT_EQ(Call("POST", "/v1/nodes", RegisterBody(b), cred_a).status, 403);
  // A join token cannot take over a registered node (and so its jobs' tokens).
  ApiReply takeover = Call("POST", "/v1/nodes", RegisterBody(b), join);
  EXPECT_EQ(takeover.status, 409) << takeover.body.dump();
  // A node may drain itself (a spot notice).
  EXPECT_EQ(Call("POST", "/v1/nodes/" + a + "/drain", "{}", cred_a).status, 200);
}

TEST_F(WorkerAccessTest, AProjectsTokenActsForNoNodeAndAnAdminForAny) {
  ApiReply issued = Call("POST", "/v1/tokens", Json{{"name", "ci"}});
  ASSERT_EQ(issued.status, 201);
  std::string project_token = issued.body["secret"];
  std::string node = NewNodeId();
  ApiReply refused = Call("POST", "/v1/nodes", RegisterBody(node), project_token);
  EXPECT_EQ(refused.status, 403);
  EXPECT_NE(refused.body.dump().find("cannot act as a worker"), std::string::npos)
      << refused.body.dump();
  EXPECT_EQ(Call("POST", "/v1/join-tokens", R"({"name":"x"})", project_token).status, 403);
  EXPECT_EQ(Call("POST", "/v1/nodes", RegisterBody(node), "tfn_" + std::string(40, '0')).status,
            401);

  ApiReply by_admin = Call("POST", "/v1/nodes", RegisterBody(node), admin_token_);
  ASSERT_EQ(by_admin.status, 200);
  EXPECT_EQ(by_admin.body.value("credential", "").substr(0, 4), "tfn_");
  EXPECT_EQ(Call("POST", "/v1/nodes/" + node + "/heartbeat", HeartbeatBody(1), admin_token_).status,
            200);
}

TEST_F(WorkerAccessTest, JoinTokensAreListedWithTheirStateAndRevoked) {
  ApiReply made = Call("POST", "/v1/join-tokens",
                       Json{{"name", "rack-3"}, {"ttl_seconds", 3600}, {"max_uses", 2}});
  ASSERT_EQ(made.status, 201) << made.body.dump();
  std::string id = made.body["id"];
  std::string secret = made.body["secret"];
  EXPECT_EQ(made.body["state"], "usable");
  EXPECT_EQ(made.body["max_uses"], 2);

  ApiReply bad = Call("POST", "/v1/join-tokens", Json{{"name", "x"}, {"ttl_seconds", 5}});
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(bad.body["error"]["message"], "a join token lives from 1 minute to 365 days, not 5 s");
  EXPECT_EQ(Call("POST", "/v1/join-tokens", Json{{"name", "x"}, {"max_uses", -1}}).status, 400);

  ASSERT_EQ(Call("DELETE", "/v1/join-tokens/" + id).status, 200);
  EXPECT_EQ(Call("DELETE", "/v1/join-tokens/jtk_nope").status, 404);
  ApiReply listed = Call("GET", "/v1/join-tokens");
  ASSERT_EQ(listed.status, 200);
  bool seen = false;
  for (const Json& t : listed.body["join_tokens"]) {
    if (t["id"] != id) continue;
    seen = true;
    EXPECT_EQ(t["state"], "revoked");
    EXPECT_FALSE(t.contains("secret"));
  }
  EXPECT_TRUE(seen);
  ApiReply revoked = Call("POST", "/v1/nodes", RegisterBody(NewNodeId()), secret);
  EXPECT_EQ(revoked.status, 401);
  EXPECT_NE(revoked.body.dump().find("was revoked"), std::string::npos) << revoked.body.dump();
}

}  // namespace
}  // namespace tf::testing
