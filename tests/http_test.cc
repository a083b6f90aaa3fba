// The HTTP server and client end to end: a Server on 127.0.0.1:0 on a background io thread,
// driven by http::Client or by raw sockets.
#include <sys/resource.h>

#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/write.hpp>
#include <future>
#include <map>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "base/mutex.h"
#include "eventually.h"
#include "http_test_util.h"  // first: includes base/async.h

namespace tf::http::testing {
namespace {

using tcp = asio::ip::tcp;

// Sends `bytes` on a new raw connection and returns everything the server sends until it closes.
std::string RawExchange(uint16_t port, const std::string& bytes) {
  asio::io_context io;
  tcp::socket socket(io);
  socket.connect(tcp::endpoint(asio::ip::address_v4::loopback(), port));
  asio::write(socket, asio::buffer(bytes));
  std::string reply;
  boost::system::error_code ec;
  asio::read(socket, asio::dynamic_buffer(reply), ec);  // until EOF
  return reply;
}

using HttpServerTest = ServerTest;

TEST_F(HttpServerTest, GetDecodesPathAndQuery) {
  StartServer(Sync([](Request& r) {
    std::string out = r.method + " " + r.path;
    for (const auto& [k, v] : r.query) out += "|" + k + "=" + v;
    return Text(out);
  }));
  auto r = Get("/v1/queues/a%20b?prefix=a%20b&plus=x+y&empty=&flag");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "GET /v1/queues/a b|empty=|flag=|plus=x y|prefix=a b");
  EXPECT_EQ(r->Header("server"), "tensorfleet");
  EXPECT_EQ(r->Header("Content-Type"), "text/plain");
}

TEST_F(HttpServerTest, PostEchoesBodyAndHeaders) {
  StartServer(Sync([](Request& r) {
    Response out = Text(r.body, 201);
    out.headers.emplace_back("X-Echo", r.Header("x-custom"));
    out.headers.emplace_back("X-Agent", r.Header("User-Agent"));
    out.headers.emplace_back("X-Remote-Set", r.remote_address.empty() ? "no" : "yes");
    return out;
  }));
  std::string body(100'000, 'b');
  body += "end";
  auto r = NewClient()->Send("POST", "/echo", {{"X-Custom", "v 1"}}, body, 10s);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 201);
  EXPECT_EQ(r->body, body);
  EXPECT_EQ(r->Header("x-echo"), "v 1");
  EXPECT_EQ(r->Header("x-agent"), "tensorfleet");
  EXPECT_EQ(r->Header("x-remote-set"), "yes");
}

TEST_F(HttpServerTest, KeepAliveReusesOneConnection) {
  StartServer(Sync([](Request& r) { return Text(r.remote_address); }));
  auto client = NewClient();
  std::string first;
  for (int i = 0; i < 200; ++i) {
    auto r = client->Send("GET", "/whoami", {}, "", 10s);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    if (i == 0) first = r->body;
    ASSERT_EQ(r->body, first) << "request " << i << " came on another connection";
  }
  EXPECT_GE(server_->requests_served(), 200);
}

TEST_F(HttpServerTest, OversizedBodyGets413WithoutRunningTheHandler) {
  std::atomic<int> calls{0};
  ServerOptions options;
  options.max_body_bytes = 1024;
  StartServer(Sync([&](Request& r) {
                ++calls;
                return Text("ok");
              }),
              options);
  auto client = NewClient();
  auto r = client->Send("POST", "/upload", {}, std::string(100'000, 'x'), 10s);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 413);
  EXPECT_EQ(
      r->body,
      R"({"error":{"code":"resource_exhausted","message":"request body exceeds 1024 bytes"}})");
  EXPECT_EQ(r->Header("Content-Type"), "application/json");
  EXPECT_EQ(r->Header("Connection"), "close");
  EXPECT_EQ(calls.load(), 0);
  // A body at the limit is fine, and the client reconnects after the close.
  r = client->Send("POST", "/upload", {}, std::string(1024, 'x'), 10s);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(calls.load(), 1);
}

TEST_F(HttpServerTest, AnEmptyBodyThatAsksWhetherToSendIsToldToGoOnFirst) {
  StartServer(Sync([](Request& r) { return Text("got " + std::to_string(r.body.size())); }));
  // With "Connection: close" the server closes after its answer, so that everything it sent
  // can be read to the end.
  std::string reply = RawExchange(server_->port(),
                                  "PUT /empty HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n"
                                  "Expect: 100-continue\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(reply.rfind("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n", 0), 0u) << reply;
  EXPECT_NE(reply.find("got 0"), std::string::npos) << reply;
  // Without the expectation, no interim answer.
  reply = RawExchange(server_->port(),
                      "PUT /empty HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n"
                      "Connection: close\r\n\r\n");
  EXPECT_EQ(reply.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << reply;
}

TEST_F(HttpServerTest, OversizedHeaderGets431) {
  ServerOptions options;
  options.max_header_bytes = 1024;
  StartServer(Sync([](Request&) { return Text("ok"); }), options);
  auto r = NewClient()->Send("GET", "/", {{"X-Big", std::string(4096, 'h')}}, "", 10s);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 431);
}

TEST_F(HttpServerTest, GarbageGets400AndClose) {
  StartServer(Sync([](Request&) { return Text("ok"); }));
  std::string reply = RawExchange(server_->port(), "HELLO?? this is not http\r\n\r\n");
  EXPECT_EQ(reply.rfind("HTTP/1.1 400", 0), 0u) << reply;
  EXPECT_NE(reply.find("invalid_argument"), std::string::npos) << reply;
  auto r = Get("/");  // still serving
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 200);
}

TEST_F(HttpServerTest, SlowAndIdleConnectionsAreClosed) {
  ServerOptions options;
  options.read_timeout = 50ms;
  options.idle_timeout = 50ms;
  StartServer(Sync([](Request&) { return Text("ok"); }), options);
  // A request that never completes: closed without an answer once read_timeout passes.
  EXPECT_EQ(RawExchange(server_->port(), "GET / HTTP/1.1\r\nHost: x\r\n"), "");
  // A kept-alive connection left idle: closed after its response once idle_timeout passes.
  std::string reply = RawExchange(server_->port(), "GET / HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(reply.rfind("HTTP/1.1 200 OK", 0), 0u) << reply;
  EXPECT_EQ(reply.substr(reply.size() - 2), "ok") << reply;
}

TEST_F(HttpServerTest, ThrowingHandlerGets500AndServerKeepsServing) {
  StartServer([](Request& r) -> awaitable<Response> {
    if (r.path == "/throw") throw std::runtime_error("boom");
    co_return Text("fine");
  });
  auto client = NewClient();
  auto r = client->Send("GET", "/throw", {}, "", 10s);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 500);
  EXPECT_EQ(r->body, R"({"error":{"code":"internal","message":"internal error"}})");
  r = client->Send("GET", "/fine", {}, "", 10s);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "fine");
}

TEST_F(HttpServerTest, HandlerPastItsDeadlineGets503) {
  ServerOptions options;
  options.handler_timeout = 50ms;
  StartServer(
      [this](Request& r) -> awaitable<Response> {
        if (r.path == "/stuck") co_await gate_.Wait();
        co_return Text("done");
      },
      options);
  auto client = NewClient();
  auto r = client->Send("GET", "/stuck", {}, "", 10s);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 503);
  EXPECT_NE(r->body.find("unavailable"), std::string::npos) << r->body;
  r = client->Send("GET", "/quick", {}, "", 10s);  // the same connection still works
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->body, "done");
  gate_.Open();  // let the abandoned handler end
}

// A request whose head asks for a bound of its own (handler_timeout_for) runs past the
// server's handler_timeout, which still holds for the rest.
TEST_F(HttpServerTest, ARequestMayHaveAHandlerTimeoutOfItsOwn) {
  ServerOptions options;
  options.handler_timeout = 50ms;
  options.handler_timeout_for =
      [](const Request& head) -> std::optional<std::chrono::milliseconds> {
    if (head.path == "/long") return std::chrono::minutes(10);
    return std::nullopt;
  };
  std::atomic<bool> long_started{false};
  StartServer(
      [this, &long_started](Request& r) -> awaitable<Response> {
        if (r.path == "/long") long_started = true;
        co_await gate_.Wait();
        co_return Text("done " + r.path);
      },
      options);
  std::future<Result<ClientResponse>> long_call = std::async(
      std::launch::async, [this] { return NewClient()->Send("GET", "/long", {}, "", 10s); });
  ASSERT_TRUE(tf::testing::Eventually([&] { return long_started.load(); }));
  // Another request, started after it, passes its 50 ms: /long has run longer than that.
  auto short_call = NewClient()->Send("GET", "/short", {}, "", 10s);
  ASSERT_TRUE(short_call.ok()) << short_call.status().ToString();
  EXPECT_EQ(short_call->status, 503);
  gate_.Open();  // the abandoned /short's wait
  gate_.Open();  // /long's
  auto answered = long_call.get();
  ASSERT_TRUE(answered.ok()) << answered.status().ToString();
  EXPECT_EQ(answered->status, 200);
  EXPECT_EQ(answered->body, "done /long");
}

TEST_F(HttpServerTest, TheServersOwnRefusalsTakeTheFormTheOptionsGive) {
  // Requests under /xml/ are answered in a protocol of their own; the rest get the JSON.
  ServerOptions options;
  options.max_body_bytes = 1024;
  options.handler_timeout = 50ms;
  options.error_response = [](const Request& head, int status,
                              std::string_view message) -> std::optional<Response> {
    if (!head.path.starts_with("/xml/")) return std::nullopt;
    Response r = Text("<Error>" + std::to_string(status) + " " + head.method + " " + head.path +
                          ": " + std::string(message) + "</Error>",
                      status == 413 ? 400 : status);
    r.content_type = "application/xml";
    return r;
  };
  StartServer(
      [this](Request& r) -> awaitable<Response> {
        if (r.path.ends_with("/throw")) throw std::runtime_error("boom");
        if (r.path.ends_with("/stuck")) co_await gate_.Wait();
        co_return Text("done");
      },
      options);
  auto client = NewClient();
  auto big = client->Send("POST", "/xml/upload", {}, std::string(100'000, 'x'), 10s);
  ASSERT_TRUE(big.ok()) << big.status().ToString();
  EXPECT_EQ(big->status, 400);
  EXPECT_EQ(big->body, "<Error>413 POST /xml/upload: request body exceeds 1024 bytes</Error>");
  EXPECT_EQ(big->Header("Content-Type"), "application/xml");
  auto late = client->Send("GET", "/xml/stuck", {}, "", 10s);
  ASSERT_TRUE(late.ok()) << late.status().ToString();
  EXPECT_EQ(late->status, 503);
  EXPECT_EQ(late->body, "<Error>503 GET /xml/stuck: handler exceeded 50 ms</Error>");
  auto threw = client->Send("GET", "/xml/throw", {}, "", 10s);
  ASSERT_TRUE(threw.ok()) << threw.status().ToString();
  EXPECT_EQ(threw->body, "<Error>500 GET /xml/throw: internal error</Error>");
  auto json = client->Send("GET", "/json/throw", {}, "", 10s);  // nullopt: the server's own
  ASSERT_TRUE(json.ok()) << json.status().ToString();
  EXPECT_EQ(json->body, R"({"error":{"code":"internal","message":"internal error"}})");
  gate_.Open();  // let the abandoned handler end
}

TEST_F(HttpServerTest, StreamsChunkByChunk) {
  // Each chunk is written only after the client has received the one before, so the pieces
  // can only arrive one by one.
  StartServer([this](Request&) -> awaitable<Response> {
    Response r;
    r.content_type = "text/event-stream";
    r.stream = [this](StreamWriter& w) -> awaitable<void> {
      for (int i = 0; i < 5; ++i) {
        if (!co_await w.Write("data: " + std::to_string(i) + "\n\n")) co_return;
        co_await gate_.Wait();
      }
    };
    co_return r;
  });
  std::vector<std::string> pieces;
  auto r = NewClient()->SendStreaming("GET", "/events", {}, "", 10s, [&](std::string_view piece) {
    pieces.emplace_back(piece);
    gate_.Open();
    return true;
  });
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->Header("Transfer-Encoding"), "chunked");
  EXPECT_EQ(r->Header("Content-Type"), "text/event-stream");
  EXPECT_TRUE(r->body.empty());
  EXPECT_EQ(pieces, (std::vector<std::string>{"data: 0\n\n", "data: 1\n\n", "data: 2\n\n",
                                              "data: 3\n\n", "data: 4\n\n"}));
}

TEST_F(HttpServerTest, ClientLeavingMidStreamMakesWriteReturnFalse) {
  constexpr int kMaxWrites = 100'000;
  std::promise<int> writes_until_false;
  StartServer([&](Request&) -> awaitable<Response> {
    Response r;
    r.stream = [&](StreamWriter& w) -> awaitable<void> {
      int writes = 0;
      while (writes < kMaxWrites && co_await w.Write(std::string(1024, 'x'))) ++writes;
      writes_until_false.set_value(writes);
    };
    co_return r;
  });
  auto client = NewClient();
  auto r =
      client->SendStreaming("GET", "/follow", {}, "", 10s, [](std::string_view) { return false; });
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 200);
  client.reset();
  auto result = writes_until_false.get_future();
  ASSERT_EQ(result.wait_for(30s), std::future_status::ready);
  EXPECT_LT(result.get(), kMaxWrites);
}

TEST_F(HttpServerTest, GracefulShutdownFinishesInFlightAndRefusesNew) {
  std::promise<void> slow_started;
  StartServer([&](Request& r) -> awaitable<Response> {
    if (r.path == "/slow") {
      slow_started.set_value();
      co_await gate_.Wait();
      co_return Text("slow done");
    }
    co_return Text("fast");
  });
  auto idle_client = NewClient();  // holds a kept-alive connection
  ASSERT_TRUE(idle_client->Send("GET", "/fast", {}, "", 10s).ok());
  auto slow = std::async(std::launch::async, [&] { return Get("/slow"); });
  slow_started.get_future().wait();
  EXPECT_EQ(server_->requests_in_flight(), 1);

  std::promise<void> shutdown_done;
  asio::co_spawn(io_.io(), server_->Shutdown(10s),
                 [&](const std::exception_ptr&) { shutdown_done.set_value(); });
  // Shutdown begins on the io thread; from then on a new connection is refused.
  bool refused = false;
  for (int attempt = 0; attempt < 1000 && !refused; ++attempt) {
    auto r = Get("/fast");
    if (!r.ok()) {
      EXPECT_EQ(r.status().code(), StatusCode::kUnavailable) << r.status().ToString();
      refused = true;
    }
  }
  EXPECT_TRUE(refused);
  // A new request on an open connection gets 503 and is told to close.
  auto r = idle_client->Send("GET", "/fast", {}, "", 10s);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 503);
  EXPECT_EQ(r->Header("Connection"), "close");

  auto done = shutdown_done.get_future();
  EXPECT_EQ(done.wait_for(0s), std::future_status::timeout);  // the slow request still runs
  gate_.Open();
  auto slow_result = slow.get();
  ASSERT_TRUE(slow_result.ok()) << slow_result.status().ToString();
  EXPECT_EQ(slow_result->status, 200);
  EXPECT_EQ(slow_result->body, "slow done");
  EXPECT_EQ(slow_result->Header("Connection"), "close");
  ASSERT_EQ(done.wait_for(30s), std::future_status::ready);
  EXPECT_EQ(server_->requests_in_flight(), 0);
}

TEST_F(HttpServerTest, ShutdownClosesRequestsStillRunningAfterGrace) {
  std::promise<void> started;
  StartServer([&](Request&) -> awaitable<Response> {
    started.set_value();
    co_await gate_.Wait();  // never opened
    co_return Text("never");
  });
  auto stuck = std::async(std::launch::async, [&] { return Get("/stuck"); });
  started.get_future().wait();
  Shutdown(50ms);
  auto r = stuck.get();
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable) << r.status().ToString();
}

TEST_F(HttpServerTest, ThousandIdleConnectionsAndStillAnswering) {
  constexpr int kConnections = 1000;
  rlimit limit{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &limit), 0);
  const rlim_t needed = 2 * kConnections + 100;  // both ends live in this process
  if (limit.rlim_cur < needed) {
    if (limit.rlim_max < needed) GTEST_SKIP() << "RLIMIT_NOFILE hard limit too low";
    limit.rlim_cur = needed;
    ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &limit), 0);
  }
  StartServer(Sync([](Request&) { return Text("pong"); }));
  asio::io_context io;
  const tcp::endpoint endpoint(asio::ip::address_v4::loopback(), server_->port());
  std::vector<tcp::socket> sockets;
  sockets.reserve(kConnections);
  for (int i = 0; i < kConnections; ++i) {
    sockets.emplace_back(io);
    sockets.back().connect(endpoint);
  }
  auto r = Get("/ping");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->body, "pong");
  // Every idle connection is alive and served.
  const std::string request = "GET /ping HTTP/1.1\r\nHost: test\r\n\r\n";
  for (auto& socket : sockets) asio::write(socket, asio::buffer(request));
  for (auto& socket : sockets) {
    std::string reply;
    asio::read_until(socket, asio::dynamic_buffer(reply), "pong");
    ASSERT_EQ(reply.rfind("HTTP/1.1 200 OK", 0), 0u) << reply;
  }
}

TEST_F(HttpServerTest, BindFailureIsUnavailableAndNamesTheAddress) {
  StartServer(Sync([](Request&) { return Text("ok"); }));
  ServerOptions options;
  options.port = server_->port();
  auto second = Server::Start(io_.io(), options, Sync([](Request&) { return Text("ok"); }));
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(second.status().message().find("127.0.0.1:" + std::to_string(options.port)),
            std::string::npos)
      << second.status().ToString();
}

// `clients` threads, each with a keep-alive connection of its own, POST `requests` bodies to
// /echo; returns how many came back as "echo:" and the body.
int EchoFromClients(const std::string& url, int clients, int requests) {
  std::atomic<int> good{0};
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      auto client = Client::Create(url);
      if (!client.ok()) return;
      for (int i = 0; i < requests; ++i) {
        std::string body = std::to_string(c) + "/" + std::to_string(i);
        auto r = (*client)->Send("POST", "/echo", {}, body, 10s);
        if (r.ok() && r->body == "echo:" + body) ++good;
      }
    });
  }
  for (auto& t : threads) t.join();
  return good.load();
}

TEST(HttpServerThreadsTest, ServesConcurrentClientsOnSeveralIoThreads) {
  constexpr int kClients = 8;
  constexpr int kRequests = 100;
  asio::io_context io;
  auto work = asio::make_work_guard(io);
  asio::thread_pool pool(2);
  auto server = Server::Start(io, {}, [&pool](Request& r) -> awaitable<Response> {
    auto echo = [body = r.body] { return "echo:" + body; };  // named: see RunBlocking
    co_return Text(co_await RunBlocking(pool, std::move(echo)));
  });
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  std::vector<std::thread> io_threads;
  for (int i = 0; i < 4; ++i) io_threads.emplace_back([&io] { io.run(); });

  const std::string url = "http://127.0.0.1:" + std::to_string((*server)->port());
  EXPECT_EQ(EchoFromClients(url, kClients, kRequests), kClients * kRequests);
  EXPECT_EQ((*server)->requests_served(), kClients * kRequests);

  std::promise<void> stopped;
  asio::co_spawn(io, (*server)->Shutdown(1s),
                 [&](const std::exception_ptr&) { stopped.set_value(); });
  stopped.get_future().wait();
  work.reset();
  for (auto& t : io_threads) t.join();
  pool.join();
}

// With connection_contexts, each connection lives on one of those single-threaded io_contexts
// for its whole life (its handler, and what the handler waits for, resume there), the
// connections are spread over all of them, and Shutdown still ends every one.
TEST(HttpServerThreadsTest, ConnectionContextsKeepEachConnectionOnOneThread) {
  constexpr int kClients = 6;
  constexpr int kRequests = 40;
  asio::io_context io;
  auto work = asio::make_work_guard(io);
  std::vector<std::unique_ptr<asio::io_context>> contexts;
  std::vector<asio::executor_work_guard<asio::io_context::executor_type>> context_work;
  ServerOptions options;
  for (int i = 0; i < 2; ++i) {
    contexts.push_back(std::make_unique<asio::io_context>(1));
    context_work.emplace_back(contexts.back()->get_executor());
    options.connection_contexts.push_back(contexts.back().get());
  }
  asio::thread_pool pool(2);
  Mutex mu;
  std::map<std::string, std::set<std::thread::id>> threads_of;  // by client connection
  auto server = Server::Start(io, options, [&](Request& r) -> awaitable<Response> {
    const auto before = std::this_thread::get_id();
    auto echo = [body = r.body] { return "echo:" + body; };  // named: see RunBlocking
    std::string answer = co_await RunBlocking(pool, std::move(echo));
    MutexLock lock(mu);
    threads_of[r.remote_address].insert(before);
    threads_of[r.remote_address].insert(std::this_thread::get_id());
    co_return Text(answer);
  });
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  std::vector<std::thread> threads;
  threads.emplace_back([&io] { io.run(); });
  for (auto& context : contexts) threads.emplace_back([c = context.get()] { c->run(); });

  const std::string url = "http://127.0.0.1:" + std::to_string((*server)->port());
  EXPECT_EQ(EchoFromClients(url, kClients, kRequests), kClients * kRequests);

  std::set<std::thread::id> used;
  {
    MutexLock lock(mu);
    ASSERT_EQ(threads_of.size(), static_cast<size_t>(kClients));
    for (const auto& [remote, ids] : threads_of) {
      EXPECT_EQ(ids.size(), 1u) << remote << " was served on " << ids.size() << " threads";
      used.insert(ids.begin(), ids.end());
    }
  }
  EXPECT_EQ(used.size(), contexts.size()) << "the connections were not spread over the contexts";
  EXPECT_EQ(used.count(threads[0].get_id()), 0u) << "a connection ran on the acceptor's context";

  // A connection left open is closed by Shutdown, on its own context.
  auto idle = Client::Create(url);
  ASSERT_TRUE(idle.ok());
  ASSERT_TRUE((*idle)->Send("POST", "/echo", {}, "x", 10s).ok());
  std::promise<void> stopped;
  asio::co_spawn(io, (*server)->Shutdown(1s),
                 [&](const std::exception_ptr&) { stopped.set_value(); });
  ASSERT_EQ(stopped.get_future().wait_for(10s), std::future_status::ready);
  work.reset();
  context_work.clear();
  for (auto& t : threads) t.join();
  pool.join();
}

}  // namespace
}  // namespace tf::http::testing
