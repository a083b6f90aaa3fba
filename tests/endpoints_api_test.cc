// /v1/endpoints over real HTTP on an in-process server: create, update (a new generation or
// only new scaling), scale, delete, the errors, and one project's endpoints invisible to another.
#include "api_test_util.h"

namespace tf::testing {
namespace {

const char kSpec[] =
    "name: chat\n"
    "model: /models/tiny\n"
    "replicas: {min: 0, max: 4}\n";

class EndpointsApiTest : public ApiFixture {
 protected:
  ApiReply Up(const std::string& yaml, const std::string& token = "") {
    Json body = {{"spec", yaml}, {"source", "chat.yaml"}};
    return token.empty() ? Call("POST", "/v1/endpoints", body)
                         : Call("POST", "/v1/endpoints", body.dump(), token);
  }
};

TEST_F(EndpointsApiTest, CreateUpdateRescaleAndDelete) {
  ApiReply created = Up(kSpec);
  ASSERT_EQ(created.status, 201) << created.body.dump();
  EXPECT_EQ(created.body["outcome"], "created");
  EXPECT_EQ(created.body["name"], "chat");
  EXPECT_EQ(created.body["state"], "active");
  EXPECT_EQ(created.body["generation"], 1);
  EXPECT_EQ(created.body["spec"]["replicas"]["max"], 4);
  EXPECT_TRUE(created.body["replicas"].empty());

  ApiReply same = Up(kSpec);
  EXPECT_EQ(same.status, 200);
  EXPECT_EQ(same.body["outcome"], "unchanged");

  ApiReply rescaled = Up(std::string(kSpec) + "warm_pool: 1\n");
  EXPECT_EQ(rescaled.body["outcome"], "rescaled");
  EXPECT_EQ(rescaled.body["generation"], 1);

  ApiReply updated = Up(std::string(kSpec) + "warm_pool: 1\nengine: {builtin: {max_batch: 4}}\n");
  EXPECT_EQ(updated.body["outcome"], "updated");
  EXPECT_EQ(updated.body["generation"], 2);

  ApiReply scaled = Call("POST", "/v1/endpoints/chat/scale", Json{{"min", 1}, {"max", 8}});
  ASSERT_EQ(scaled.status, 200) << scaled.body.dump();
  EXPECT_EQ(scaled.body["spec"]["replicas"]["min"], 1);
  EXPECT_EQ(scaled.body["spec"]["replicas"]["max"], 8);
  EXPECT_EQ(scaled.body["generation"], 2);  // the same replicas, more or fewer of them

  ApiReply described = Call("GET", "/v1/endpoints/chat");
  ASSERT_EQ(described.status, 200);
  EXPECT_EQ(described.body["spec"]["warm_pool"], 1);
  EXPECT_EQ(described.body["spec"]["engine"]["max_batch"], 4);

  ApiReply listed = Call("GET", "/v1/endpoints");
  ASSERT_EQ(listed.body["endpoints"].size(), 1u);

  ApiReply deleted = Call("DELETE", "/v1/endpoints/chat");
  ASSERT_EQ(deleted.status, 200) << deleted.body.dump();
  EXPECT_EQ(deleted.body["removed"], true);
  EXPECT_EQ(Call("GET", "/v1/endpoints/chat").status, 404);
  EXPECT_TRUE(Call("GET", "/v1/endpoints").body["endpoints"].empty());
}

TEST_F(EndpointsApiTest, BadInputIsRefusedSayingWhereAndWhy) {
  ApiReply bad = Up("name: chat\nmodel: /m\nreplicas:\n  min: 3\n  max: 2\n");
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(bad.body["error"]["message"],
            "chat.yaml:5: replicas.max: must be at least replicas.min (3), got 2")
      << bad.body.dump();
  EXPECT_EQ(Call("POST", "/v1/endpoints", Json{{"source", "x.yaml"}}).status, 400);
  EXPECT_EQ(Call("POST", "/v1/endpoints", Json{{"spec", kSpec}, {"extra", 1}}).status, 400);

  ApiReply shared = Up(std::string(kSpec) + "resources: {gpu_memory: 8Gi}\n");
  EXPECT_EQ(shared.status, 400) << shared.body.dump();
  EXPECT_NE(shared.body["error"]["message"].get<std::string>().find(
                "resources.gpu_memory: an endpoint declares a replica's share of one GPU as "
                "gpu_memory, at the top level"),
            std::string::npos)
      << shared.body.dump();

  ASSERT_EQ(Up(kSpec).status, 201);
  ApiReply scale = Call("POST", "/v1/endpoints/chat/scale", Json{{"min", 9}});
  EXPECT_EQ(scale.status, 400);
  EXPECT_EQ(scale.body["error"]["message"], "--min: must be at most replicas.max (4), got 9");
  EXPECT_EQ(Call("POST", "/v1/endpoints/chat/scale", Json::object()).status, 400);
  EXPECT_EQ(Call("POST", "/v1/endpoints/chat/scale", Json{{"max", "many"}}).status, 400);
  EXPECT_EQ(Call("POST", "/v1/endpoints/nope/scale", Json{{"max", 2}}).status, 404);
  EXPECT_EQ(Call("DELETE", "/v1/endpoints/nope").status, 404);
  ApiReply missing = Call("GET", "/v1/endpoints/nope");
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(missing.body["error"]["message"], "endpoint 'nope' does not exist");
}

TEST_F(EndpointsApiTest, AnEndpointOfOneProjectDoesNotExistForAnother) {
  ASSERT_EQ(Call("POST", "/v1/projects", Json{{"name", "team-b"}}).status, 201);
  auto issued = Call("POST", "/v1/tokens", Json{{"name", "bob"}, {"project", "team-b"}});
  ASSERT_EQ(issued.status, 201) << issued.body.dump();
  std::string bob = issued.body["secret"];
  ASSERT_EQ(Up(kSpec).status, 201);

  EXPECT_TRUE(Call("GET", "/v1/endpoints", "", bob).body["endpoints"].empty());
  EXPECT_EQ(Call("GET", "/v1/endpoints/chat", "", bob).status, 404);
  EXPECT_EQ(Call("DELETE", "/v1/endpoints/chat", "", bob).status, 404);
  EXPECT_EQ(Call("POST", "/v1/endpoints/chat/scale", R"({"max":1})", bob).status, 404);
  EXPECT_EQ(Call("GET", "/v1/endpoints?all=true", "", bob).status, 403);

  // The same name in the other project is another endpoint.
  ApiReply theirs = Up(std::string(kSpec) + "warm_pool: 2\n", bob);
  EXPECT_EQ(theirs.status, 201);
  EXPECT_EQ(theirs.body["project"], "team-b");
  EXPECT_EQ(Call("GET", "/v1/endpoints/chat").body["spec"]["warm_pool"], 0);
  ApiReply all = Call("GET", "/v1/endpoints?all=true");
  ASSERT_EQ(all.status, 200);
  EXPECT_EQ(all.body["endpoints"].size(), 2u);
}

}  // namespace
}  // namespace tf::testing
