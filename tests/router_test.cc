// Route matching: fixed segments, {name} captures, and a trailing {name+} that takes the rest of
// the path as it is (slashes, empty segments, dots).
#include "api/router.h"

#include <gtest/gtest.h>

#include "base/async.h"  // first: see the note on <utility> there
#include "store/store.h"
#include "store_test_env.h"

namespace tf::api {
namespace {

class RouterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = store::OpenStore(tf::testing::StoreUrl("sqlite", dir_));
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(store).value();
    auth_ = std::make_unique<auth::AuthService>(store_->auth(), clock_);
    router_ = std::make_unique<Router>(*auth_, pool_, metrics_);
    for (const char* pattern : {"/v1/buckets/{bucket}/objects",
                                "/v1/buckets/{bucket}/objects/{key+}", "/v1/queues/{name}"}) {
      router_->Add("GET", pattern, Echo(pattern), Access::kPublic);
    }
    router_->Add("PUT", "/v1/buckets/{bucket}/objects/{key+}", Echo("put"), Access::kPublic,
                 Body::kStreamed);
  }

  static RouteHandler Echo(const std::string& label) {
    return [label](Context& ctx) -> awaitable<http::Response> {
      http::Response r;
      r.body = label;
      for (const auto& [name, value] : ctx.params) r.body += "|" + name + "=" + value;
      co_return r;
    };
  }

  // Routes a request with this decoded path (and Host); returns "status body".
  std::string Route(const std::string& method, const std::string& path,
                    const std::string& host = "") {
    http::Request request;
    request.method = method;
    request.path = path;
    if (!host.empty()) request.headers.emplace_back("Host", host);
    http::Response response;
    asio::io_context io;
    asio::co_spawn(
        io, [&]() -> awaitable<void> { response = co_await router_->Handle(request); },
        asio::detached);
    io.run();
    return std::to_string(response.status) + " " + response.body;
  }

  bool Streams(const std::string& method, const std::string& path, const std::string& host = "") {
    http::Request head;
    head.method = method;
    head.path = path;
    if (!host.empty()) head.headers.emplace_back("Host", host);
    return router_->StreamsBody(head);
  }

  tf::testing::TempDir dir_;
  FakeClock clock_;
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<auth::AuthService> auth_;
  asio::thread_pool pool_{1};
  Metrics metrics_;
  std::unique_ptr<Router> router_;
};

TEST_F(RouterTest, RestCaptureTakesTheRestOfThePathAsItIs) {
  const std::string key_route = "200 /v1/buckets/{bucket}/objects/{key+}|bucket=b|key=";
  EXPECT_EQ(Route("GET", "/v1/buckets/b/objects/a"), key_route + "a");
  EXPECT_EQ(Route("GET", "/v1/buckets/b/objects/a/b/c.txt"), key_route + "a/b/c.txt");
  EXPECT_EQ(Route("GET", "/v1/buckets/b/objects//etc/passwd"), key_route + "/etc/passwd");
  EXPECT_EQ(Route("GET", "/v1/buckets/b/objects/../../x"), key_route + "../../x");
  EXPECT_EQ(Route("GET", "/v1/buckets/b/objects/a//b/"), key_route + "a//b/");
  EXPECT_EQ(Route("GET", "/v1/buckets/b/objects/dir/"), key_route + "dir/");
  EXPECT_EQ(Route("GET", "/v1//buckets/b/objects/k"), key_route + "k");
  // Without anything after the fixed part it is the listing route.
  EXPECT_EQ(Route("GET", "/v1/buckets/b/objects"), "200 /v1/buckets/{bucket}/objects|bucket=b");
  EXPECT_EQ(Route("GET", "/v1/buckets/b/objects/"), "200 /v1/buckets/{bucket}/objects|bucket=b");
  // Plain captures still take exactly one segment.
  EXPECT_EQ(Route("GET", "/v1/queues/q"), "200 /v1/queues/{name}|name=q");
  EXPECT_EQ(Route("GET", "/v1/queues/q/extra").substr(0, 3), "404");
  EXPECT_EQ(Route("DELETE", "/v1/buckets/b/objects/a/b").substr(0, 3), "405");
}

TEST_F(RouterTest, OnlyRoutesThatAskForItStreamTheirBody) {
  EXPECT_TRUE(Streams("PUT", "/v1/buckets/b/objects/a/b"));
  EXPECT_FALSE(Streams("GET", "/v1/buckets/b/objects/a/b"));
  EXPECT_FALSE(Streams("PUT", "/v1/queues/q"));
  EXPECT_FALSE(Streams("PUT", "/nowhere"));
}

// A route may have a handler timeout of its own; the others keep the server's.
TEST_F(RouterTest, ARouteMayHaveAHandlerTimeoutOfItsOwn) {
  router_->SetHandlerTimeout("GET", "/v1/queues/{name}", std::chrono::hours(2));
  http::Request head;
  head.method = "GET";
  head.path = "/v1/queues/q";
  EXPECT_EQ(router_->HandlerTimeout(head), std::chrono::milliseconds(std::chrono::hours(2)));
  head.method = "PUT";
  EXPECT_EQ(router_->HandlerTimeout(head), std::nullopt);
  head.method = "GET";
  head.path = "/v1/buckets/b/objects";
  EXPECT_EQ(router_->HandlerTimeout(head), std::nullopt);
}

// A fallback takes paths no route knows, and, before any route, what claims_first takes (S3's
// virtual-hosted requests, whose whole path is a key).
TEST_F(RouterTest, AFallbackTakesUnknownPathsAndWhatItClaimsFirst) {
  router_->AddFallback(Fallback{
      [](const http::Request& head) { return head.path.rfind("/v1/", 0) != 0; },
      [](const http::Request& head) { return head.method == "PUT"; },
      [](http::Request& request) -> awaitable<http::Response> {
        http::Response r;
        r.body = "fallback " + request.path;
        co_return r;
      },
      "fallback", [](const http::Request& head) { return head.Header("Host") == "b.s3.test"; }});
  EXPECT_EQ(Route("GET", "/bucket/key"), "200 fallback /bucket/key");
  EXPECT_EQ(Route("GET", "/v1/queues/q"), "200 /v1/queues/{name}|name=q");
  EXPECT_EQ(Route("GET", "/v1/queues/q", "b.s3.test"), "200 fallback /v1/queues/q");
  EXPECT_EQ(Route("DELETE", "/v1/queues/q").substr(0, 3), "405");
  EXPECT_TRUE(Streams("PUT", "/v1/queues/q", "b.s3.test"));
  EXPECT_FALSE(Streams("PUT", "/v1/queues/q"));
  EXPECT_TRUE(Streams("PUT", "/bucket/key"));
}

}  // namespace
}  // namespace tf::api
