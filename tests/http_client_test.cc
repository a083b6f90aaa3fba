// http::Client failure handling against scripted raw servers, and the URL and header helpers.
#include <atomic>
#include <vector>

#include "http_test_util.h"  // first: includes base/async.h

namespace tf::http::testing {
namespace {

using tcp = asio::ip::tcp;

std::unique_ptr<Client> ClientFor(const std::string& url) {
  auto client = Client::Create(url);
  EXPECT_TRUE(client.ok()) << client.status().ToString();
  return std::move(client).value();
}

TEST(HttpClientTest, CreateRejectsHttpsAndMalformedUrls) {
  for (const char* url : {"https://127.0.0.1:8443", "127.0.0.1:80", "http://", "http://h:0",
                          "http://h:99999", "http://h:12x", "http://h:80/api", "ftp://h"}) {
    auto client = Client::Create(url);
    EXPECT_FALSE(client.ok()) << url;
    EXPECT_EQ(client.status().code(), StatusCode::kInvalidArgument) << url;
  }
  for (const char* url : {"http://127.0.0.1:8080", "http://localhost", "http://[::1]:9000/"}) {
    EXPECT_TRUE(Client::Create(url).ok()) << url;
  }
}

TEST(HttpClientTest, RejectsTargetsAndHeadersThatWouldSplitTheRequest) {
  auto client = ClientFor("http://127.0.0.1:9");
  auto r = client->Send("GET", "/a b", {}, "", 1s);
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  r = client->Send("GET", "/", {{"X-A", "1\r\nX-B: 2"}}, "", 1s);
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  r = client->Send("GET", "no-slash", {}, "", 1s);
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
}

TEST(HttpClientTest, ConnectionRefusedIsUnavailable) {
  std::string url;
  {
    asio::io_context io;
    tcp::acceptor acceptor(io, tcp::endpoint(asio::ip::address_v4::loopback(), 0));
    url = "http://127.0.0.1:" + std::to_string(acceptor.local_endpoint().port());
  }  // closed: nothing listens there now
  auto r = ClientFor(url)->Send("GET", "/", {}, "", 5s);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable) << r.status().ToString();
}

TEST(HttpClientTest, ReconnectsWhenTheServerClosedTheKeptAliveConnection) {
  ScriptedServer server({"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\none",
                         "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\ntwo"});
  auto client = ClientFor(server.url());
  auto r = client->Send("GET", "/", {}, "", 5s);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->body, "one");
  server.closed(0).wait();  // the connection the client keeps is now closed by the server
  r = client->Send("POST", "/", {}, "payload", 5s);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->body, "two");
}

TEST(HttpClientTest, ConnectionDroppedMidResponseIsUnavailable) {
  ScriptedServer server({"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly part"});
  auto r = ClientFor(server.url())->Send("GET", "/", {}, "", 5s);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable) << r.status().ToString();
}

// A long poll that the server never answers ends when another thread cancels the client, and
// the client refuses calls after that. Without Cancel the call would wait its whole minute and
// end as kDeadlineExceeded.
TEST(HttpClientTest, CancelEndsACallInProgressAndEveryLaterOne) {
  asio::io_context io;
  tcp::acceptor acceptor(io, tcp::endpoint(asio::ip::address_v4::loopback(), 0));
  auto client = ClientFor("http://127.0.0.1:" + std::to_string(acceptor.local_endpoint().port()));
  std::promise<Result<ClientResponse>> answered;
  std::thread caller([&] { answered.set_value(client->Send("GET", "/poll", {}, "", 60s)); });
  tcp::socket socket(io);
  acceptor.accept(socket);
  std::string head;
  asio::read_until(socket, asio::dynamic_buffer(head), "\r\n\r\n");
  EXPECT_NE(head.find("GET /poll"), std::string::npos);
  client->Cancel();  // the request has arrived: the client now waits for an answer
  Result<ClientResponse> r = answered.get_future().get();
  caller.join();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable) << r.status().ToString();
  EXPECT_NE(r.status().message().find("cancelled"), std::string::npos) << r.status().ToString();
  r = client->Send("GET", "/again", {}, "", 60s);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("cancelled"), std::string::npos) << r.status().ToString();
}

TEST(HttpClientTest, StreamingAcceptsAPlainBody) {
  ScriptedServer server({"HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\n\r\nnot found"});
  std::string got;
  auto r = ClientFor(server.url())->SendStreaming("GET", "/", {}, "", 5s, [&](std::string_view p) {
    got += p;
    return true;
  });
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 404);
  EXPECT_EQ(got, "not found");
}

using HttpClientServerTest = ServerTest;

TEST_F(HttpClientServerTest, SlowServerIsDeadlineExceeded) {
  StartServer([this](Request&) -> awaitable<Response> {
    co_await gate_.Wait();
    co_return Text("late");
  });
  auto client = NewClient();
  auto r = client->Send("GET", "/", {}, "", 100ms);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDeadlineExceeded) << r.status().ToString();
  gate_.Open();  // for the abandoned request
  gate_.Open();  // for the next one
  // The client recovers on a new connection.
  r = client->Send("GET", "/", {}, "", 10s);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->body, "late");
}

TEST(HttpUtilTest, PercentDecode) {
  EXPECT_EQ(PercentDecode("a%20b%2Fc", false), "a b/c");
  EXPECT_EQ(PercentDecode("a+b", false), "a+b");
  EXPECT_EQ(PercentDecode("a+b", true), "a b");
  EXPECT_EQ(PercentDecode("%e2%82%AC", false), "\xe2\x82\xac");
  EXPECT_EQ(PercentDecode("100%", false), "100%");    // a lone % stays
  EXPECT_EQ(PercentDecode("%zz%4", false), "%zz%4");  // so do bad escapes
}

TEST(HttpUtilTest, PercentEncodeKeepsUnreservedOnly) {
  EXPECT_EQ(PercentEncode("AZaz09-._~"), "AZaz09-._~");
  EXPECT_EQ(PercentEncode("a b/c?d=e&f"), "a%20b%2Fc%3Fd%3De%26f");
  EXPECT_EQ(PercentEncode("\xe2\x82\xac"), "%E2%82%AC");
  std::string all;
  for (int c = 0; c < 256; ++c) all.push_back(static_cast<char>(c));
  EXPECT_EQ(PercentDecode(PercentEncode(all), false), all);
}

TEST(HttpUtilTest, ParseQuery) {
  auto q = ParseQuery("a=1&b=two+words&c=%26&&d&a=last&=empty-key");
  EXPECT_EQ(q, (std::map<std::string, std::string>{
                   {"a", "last"}, {"b", "two words"}, {"c", "&"}, {"d", ""}, {"", "empty-key"}}));
  EXPECT_TRUE(ParseQuery("").empty());
}

TEST(HttpUtilTest, FindHeaderIgnoresCase) {
  Headers headers = {{"Content-Type", "text/plain"}, {"X-A", "1"}, {"x-a", "2"}};
  EXPECT_EQ(FindHeader(headers, "content-type"), "text/plain");
  EXPECT_EQ(FindHeader(headers, "X-A"), "1");  // the first of repeated headers
  EXPECT_EQ(FindHeader(headers, "missing"), "");
}

}  // namespace
}  // namespace tf::http::testing
