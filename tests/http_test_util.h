// Helpers for tests that run an http::Server: an io_context on a background thread, a gate that
// a test opens to let a server-side coroutine go on, and a fixture holding one server.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/async.h"  // first: see the note on <utility> there
#include "http/http.h"

namespace tf::http::testing {

using namespace std::chrono_literals;

// An io_context run by one background thread until Stop() or destruction.
class IoThread {
 public:
  IoThread() : work_(asio::make_work_guard(io_)), thread_([this] { io_.run(); }) {}
  ~IoThread() { Stop(); }

  asio::io_context& io() { return io_; }

  void Stop() {
    if (!thread_.joinable()) return;
    work_.reset();
    io_.stop();
    thread_.join();
  }

  // Runs the awaitable made by `make` on the io thread and blocks until it completes.
  template <typename Make>
  void Await(Make make) {
    std::promise<void> done;
    asio::co_spawn(io_, make(), [&done](std::exception_ptr) { done.set_value(); });
    done.get_future().wait();
  }

 private:
  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> work_;
  std::thread thread_;
};

// A counting gate: Wait() (a coroutine on the io thread) returns once Open() (any thread) has
// been called more times than earlier Waits returned. The io_context must run on one thread.
class Gate {
 public:
  // The timer never expires; Open cancels every wait and waiters check their permit again.
  explicit Gate(asio::io_context& io)
      : io_(io), timer_(io, asio::steady_timer::time_point::max()) {}

  void Open() {
    asio::post(io_, [this] {
      ++permits_;
      timer_.cancel();
    });
  }

  awaitable<void> Wait() {
    while (permits_ == 0) {
      boost::system::error_code ec;
      co_await timer_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    }
    --permits_;
  }

 private:
  asio::io_context& io_;
  asio::steady_timer timer_;
  int permits_ = 0;
};

// Accepts one connection per scripted reply on 127.0.0.1:0, from its own thread: reads one
// request head, writes the reply, closes the connection, then fulfils closed(i).
class ScriptedServer {
  using tcp = asio::ip::tcp;

 public:
  explicit ScriptedServer(std::vector<std::string> replies)
      : acceptor_(io_, tcp::endpoint(asio::ip::address_v4::loopback(), 0)),
        replies_(std::move(replies)),
        closed_(replies_.size()) {
    thread_ = std::thread([this] { Run(); });
  }
  ~ScriptedServer() {
    // Closing the acceptor does not wake a blocked accept(); a connection does.
    stopping_ = true;
    boost::system::error_code ignored;
    tcp::socket wake(io_);
    wake.connect(acceptor_.local_endpoint(), ignored);
    thread_.join();
  }

  std::string url() const {
    return "http://127.0.0.1:" + std::to_string(acceptor_.local_endpoint().port());
  }
  std::future<void> closed(size_t i) { return closed_[i].get_future(); }

 private:
  void Run() {
    for (size_t i = 0; i < replies_.size(); ++i) {
      boost::system::error_code ec;
      tcp::socket socket(io_);
      acceptor_.accept(socket, ec);
      if (ec || stopping_) return;
      std::string head;
      asio::read_until(socket, asio::dynamic_buffer(head), "\r\n\r\n", ec);
      asio::write(socket, asio::buffer(replies_[i]), ec);
      socket.close(ec);
      closed_[i].set_value();
    }
  }

  asio::io_context io_;
  tcp::acceptor acceptor_;
  std::vector<std::string> replies_;
  std::vector<std::promise<void>> closed_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

// Makes a Handler from a plain function.
inline Handler Sync(std::function<Response(Request&)> fn) {
  return [fn = std::move(fn)](Request& request) -> awaitable<Response> { co_return fn(request); };
}

inline Response Text(std::string body, int status = 200) {
  Response r;
  r.status = status;
  r.content_type = "text/plain";
  r.body = std::move(body);
  return r;
}

// Owns one server on 127.0.0.1:0, served by io_. TearDown shuts it down with no grace and
// stops the io thread, so that Gates and other members are destroyed with no coroutine running.
class ServerTest : public ::testing::Test {
 protected:
  void StartServer(Handler handler, ServerOptions options = {}) {
    auto server = Server::Start(io_.io(), options, std::move(handler));
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(server).value();
    base_url_ = "http://127.0.0.1:" + std::to_string(server_->port());
  }

  void Shutdown(std::chrono::milliseconds grace) {
    io_.Await([&] { return server_->Shutdown(grace); });
  }

  void TearDown() override {
    if (server_) Shutdown(0ms);
    io_.Stop();
  }

  std::unique_ptr<Client> NewClient() {
    auto client = Client::Create(base_url_);
    EXPECT_TRUE(client.ok()) << client.status().ToString();
    return std::move(client).value();
  }

  // GET `target` with a fresh client.
  Result<ClientResponse> Get(const std::string& target) {
    return NewClient()->Send("GET", target, {}, "", 10s);
  }

  IoThread io_;  // first: destroyed last
  Gate gate_{io_.io()};
  std::unique_ptr<Server> server_;
  std::string base_url_;
};

}  // namespace tf::http::testing
