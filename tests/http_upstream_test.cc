// http::UpstreamPool (http/upstream.h) against a real http::Server: whole answers and streams
// piece by piece, connections pooled and reused, a connection the server closed passed over, a
// reply dropped mid-stream closing its connection, and the errors a caller tells apart
// (refused, timed out, bad address).
#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <mutex>
#include <set>

#include "http/upstream.h"
#include "http_test_util.h"  // first: includes base/async.h

namespace tf::http::testing {
namespace {

class UpstreamTest : public ServerTest {
 protected:
  void SetUp() override { pool_ = UpstreamPool::Create(io_.io().get_executor()); }

  std::string address() const { return "127.0.0.1:" + std::to_string(server_->port()); }

  // Runs `body` as a coroutine on the io thread and waits for it.
  template <typename Body>
  void Run(Body body) {
    io_.Await([&]() -> awaitable<void> { co_await body(); });
  }

  Result<ClientResponse> Send(const std::string& target, std::string_view body = "",
                              std::chrono::milliseconds step_timeout = 5s) {
    Result<ClientResponse> out = Internal("not run");
    UpstreamRequest request;
    request.target = target;
    request.body = body;
    request.step_timeout = step_timeout;
    Run([&]() -> awaitable<void> { out = co_await pool_->Send(address(), request); });
    return out;
  }

  std::shared_ptr<UpstreamPool> pool_;
};

TEST_F(UpstreamTest, SendsAndReusesOneKeptAliveConnection) {
  std::atomic<int> seen{0};
  std::set<std::string> peers;
  std::mutex mu;
  StartServer([&](Request& r) -> awaitable<Response> {
    ++seen;
    {
      std::lock_guard<std::mutex> lock(mu);
      peers.insert(r.remote_address);
    }
    co_return Text(r.method + " " + r.target + " " + r.body + " " + r.Header("X-Tag"), 201);
  });
  for (int i = 0; i < 3; ++i) {
    UpstreamRequest request;
    request.target = "/v1/echo?n=" + std::to_string(i);
    request.headers = {{"X-Tag", "t" + std::to_string(i)}};
    request.body = "payload";
    Result<ClientResponse> answer = Internal("not run");
    Run([&]() -> awaitable<void> { answer = co_await pool_->Send(address(), request); });
    ASSERT_TRUE(answer.ok()) << answer.status().ToString();
    EXPECT_EQ(answer->status, 201);
    EXPECT_EQ(answer->body,
              "POST /v1/echo?n=" + std::to_string(i) + " payload t" + std::to_string(i));
    EXPECT_EQ(answer->Header("Content-Type"), "text/plain");
    EXPECT_EQ(pool_->idle_connections(), 1u);
  }
  EXPECT_EQ(seen.load(), 3);
  EXPECT_EQ(peers.size(), 1u) << "one connection, reused";
}

TEST_F(UpstreamTest, StreamsTheBodyPieceByPieceAsItComes) {
  Gate gate(io_.io());
  StartServer([&](Request&) -> awaitable<Response> {
    Response r;
    r.content_type = "text/event-stream";
    r.stream = [&](StreamWriter& w) -> awaitable<void> {
      co_await w.Write("data: one\n\n");
      co_await gate.Wait();  // the second piece only once the first has been read
      co_await w.Write("data: two\n\n");
    };
    co_return r;
  });
  std::vector<std::string> pieces;
  Run([&]() -> awaitable<void> {
    UpstreamRequest request;
    request.target = "/stream";
    auto reply = co_await pool_->Open(address(), request);
    EXPECT_TRUE(reply.ok()) << reply.status().ToString();
    if (!reply.ok()) co_return;
    EXPECT_EQ((*reply)->head().status, 200);
    EXPECT_EQ((*reply)->head().Header("Content-Type"), "text/event-stream");
    for (;;) {
      auto piece = co_await (*reply)->Next();
      EXPECT_TRUE(piece.ok()) << piece.status().ToString();
      if (!piece.ok() || piece->empty()) break;
      pieces.push_back(*piece);
      gate.Open();
    }
  });
  EXPECT_EQ(pieces, (std::vector<std::string>{"data: one\n\n", "data: two\n\n"}));
  EXPECT_EQ(pool_->idle_connections(), 1u) << "read to the end: back in the pool";
}

TEST_F(UpstreamTest, AReplyDroppedMidStreamClosesItsConnection) {
  std::promise<bool> writer_saw;
  Gate gate(io_.io());
  StartServer([&](Request&) -> awaitable<Response> {
    Response r;
    r.content_type = "text/event-stream";
    r.stream = [&](StreamWriter& w) -> awaitable<void> {
      co_await w.Write("data: one\n\n");
      co_await gate.Wait();
      bool sent = true;
      for (int i = 0; i < 100 && sent; ++i) sent = co_await w.Write(std::string(64 << 10, 'x'));
      writer_saw.set_value(sent);
    };
    co_return r;
  });
  Run([&]() -> awaitable<void> {
    UpstreamRequest request;
    request.target = "/stream";
    auto reply = co_await pool_->Open(address(), request);
    EXPECT_TRUE(reply.ok());
    if (!reply.ok()) co_return;
    auto piece = co_await (*reply)->Next();
    EXPECT_TRUE(piece.ok() && *piece == "data: one\n\n");
  });  // the reply is dropped here, its body unread
  gate.Open();
  auto saw = writer_saw.get_future();
  ASSERT_EQ(saw.wait_for(10s), std::future_status::ready);
  EXPECT_FALSE(saw.get()) << "the server's writes must fail once the client has gone";
  EXPECT_EQ(pool_->idle_connections(), 0u);
}

TEST(UpstreamPoolTest, AConnectionTheServerClosedIsPassedOver) {
  // Each reply keeps the connection alive by HTTP's rules; the server closes it anyway.
  const std::string ok = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
  ScriptedServer server({ok, ok});
  const std::string address = server.url().substr(std::string("http://").size());
  IoThread io;
  auto pool = UpstreamPool::Create(io.io().get_executor());
  UpstreamRequest request;
  request.target = "/";
  request.step_timeout = 5s;
  for (int i = 0; i < 2; ++i) {
    Result<ClientResponse> answer = Internal("not run");
    io.Await([&]() -> awaitable<void> { answer = co_await pool->Send(address, request); });
    ASSERT_TRUE(answer.ok()) << i << ": " << answer.status().ToString();
    EXPECT_EQ(answer->body, "ok");
    EXPECT_EQ(pool->idle_connections(), 1u);
    server.closed(i).wait();  // the pooled connection is stale from here
  }
}

// A coroutine on one of the pool's homes uses connections of its own io_context, pooled for it:
// another home opens its own, and a coroutine elsewhere uses the pool's executor's.
TEST_F(UpstreamTest, EachHomeKeepsItsOwnConnections) {
  std::set<std::string> peers;
  std::mutex mu;
  StartServer([&](Request& r) -> awaitable<Response> {
    std::lock_guard<std::mutex> lock(mu);
    peers.insert(r.remote_address);
    co_return Text("ok");
  });
  IoThread home_a, home_b;
  auto pool = UpstreamPool::Create(io_.io().get_executor(), {&home_a.io(), &home_b.io()});
  UpstreamRequest request;
  request.target = "/";
  request.step_timeout = 5s;
  auto send_from = [&](IoThread& thread) {
    Result<ClientResponse> answer = Internal("not run");
    thread.Await([&]() -> awaitable<void> { answer = co_await pool->Send(address(), request); });
    EXPECT_TRUE(answer.ok()) << answer.status().ToString();
    std::lock_guard<std::mutex> lock(mu);
    return peers.size();
  };
  EXPECT_EQ(send_from(home_a), 1u);
  EXPECT_EQ(send_from(home_a), 1u) << "home a reuses its connection";
  EXPECT_EQ(send_from(home_b), 2u) << "home b does not take home a's";
  EXPECT_EQ(send_from(home_b), 2u);
  EXPECT_EQ(send_from(home_a), 2u);
  EXPECT_EQ(pool->idle_connections(), 2u);
  IoThread elsewhere;
  EXPECT_EQ(send_from(elsewhere), 3u) << "a coroutine on no home uses the pool's own";
  EXPECT_EQ(send_from(elsewhere), 3u);
  EXPECT_EQ(pool->idle_connections(), 3u);
  // The last reply was read on the pool's io thread, which then hands it to `elsewhere` and only
  // after that lets go of its hold on elsewhere's io_context: wait for it to have done so before
  // `elsewhere` goes (AddressSanitizer once saw it let go of a context already destroyed).
  io_.Await([]() -> awaitable<void> { co_return; });
}

TEST_F(UpstreamTest, ErrorsSayWhatFailed) {
  Gate gate(io_.io());
  StartServer([&](Request&) -> awaitable<Response> {
    co_await gate.Wait();
    co_return Text("late");
  });
  Result<ClientResponse> slow = Send("/slow", "", 200ms);
  ASSERT_FALSE(slow.ok());
  EXPECT_EQ(slow.status().code(), StatusCode::kDeadlineExceeded) << slow.status().ToString();
  EXPECT_NE(slow.status().message().find("POST /slow at " + address()), std::string::npos)
      << slow.status().ToString();
  gate.Open();
  EXPECT_EQ(pool_->idle_connections(), 0u) << "a timed-out connection is not kept";

  // Nothing listens on a port just closed.
  asio::ip::tcp::acceptor closed(io_.io(), {asio::ip::address_v4::loopback(), 0});
  std::string nowhere = "127.0.0.1:" + std::to_string(closed.local_endpoint().port());
  closed.close();
  Result<ClientResponse> refused = Internal("not run");
  UpstreamRequest request;
  request.target = "/";
  Run([&]() -> awaitable<void> { refused = co_await pool_->Send(nowhere, request); });
  EXPECT_EQ(refused.status().code(), StatusCode::kUnavailable) << refused.status().ToString();

  for (const char* bad : {"nohost", "127.0.0.1:", "127.0.0.1:0", "127.0.0.1:70000"}) {
    Result<ClientResponse> r = Internal("not run");
    Run([&]() -> awaitable<void> { r = co_await pool_->Send(bad, request); });
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument)
        << bad << ": " << r.status().ToString();
  }
  request.target = "no-slash";
  Result<ClientResponse> r = Internal("not run");
  Run([&]() -> awaitable<void> { r = co_await pool_->Send(address(), request); });
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << r.status().ToString();
}

}  // namespace
}  // namespace tf::http::testing
