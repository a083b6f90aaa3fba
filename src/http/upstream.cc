// UpstreamPool: asynchronous HTTP/1.1 over raw Asio sockets and Beast's parsers, with
// keep-alive connections pooled per address.
//
// Timeouts: a timer per connection cancels the socket when a step outlasts its bound. The timer
// and the socket live on the pool's executor (the io_context's, not on the strand of the
// coroutine that uses them, because a pooled connection serves coroutines of different strands
// one after the other; completions still resume each coroutine on its own executor), or on the
// opener's own io_context when that is one of the pool's homes: idle connections are pooled
// per io_context as well as per address, so that a server whose connections each stay on one
// single-threaded io_context (http::ServerOptions::connection_contexts) relays on that thread
// alone. A timer
// that fires as its step completes is told apart by the step's number, so it never cancels the
// next step, whoever runs it.
//
// Stale connections: an idle connection is peeked before reuse, and one the server has closed
// (EOF, reset, stray bytes) is dropped. A request whose write fails on a reused connection is
// sent again on a new one (the server cannot have read it whole); one that fails later is not,
// so that a POST is never run twice.
#include "http/upstream.h"

#include <sys/socket.h>

#include <array>
#include <atomic>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <cerrno>
#include <charconv>
#include <limits>
#include <map>
#include <vector>

#include "base/async.h"  // first: see the note on <utility> there
#include "base/mutex.h"
#include "http/beast.h"
#include "http/client_checks.h"

namespace tf::http {
namespace {

using namespace internal;  // http/beast.h: Beast's names and helpers
using tcp = asio::ip::tcp;

constexpr std::uint32_t kMaxHeaderBytes = 1 << 20;
constexpr size_t kPieceBytes = 16 << 10;

// One connection to one address, used by one request at a time.
struct Connection : std::enable_shared_from_this<Connection> {
  Connection(const asio::any_io_executor& executor, std::string address)
      : address(std::move(address)),
        home(&asio::query(executor, asio::execution::context)),
        socket(executor),
        timer(executor) {}

  // Bounds the next step: the socket is cancelled if it is still running after `timeout`.
  void Arm(std::chrono::milliseconds timeout) {
    uint64_t step = ++steps;
    timed_out = false;
    timer.expires_after(timeout);
    // A handler that runs after its step (or its connection) has ended does nothing.
    timer.async_wait([weak = weak_from_this(), step](const error_code& ec) {
      auto self = weak.lock();
      if (ec || !self || self->steps.load() != step) return;
      self->timed_out = true;
      error_code ignored;
      self->socket.cancel(ignored);
    });
  }
  void Disarm() {
    ++steps;
    timer.cancel();
  }

  // A failed step as the caller sees it.
  Status Failed(const error_code& ec, const std::string& what) const {
    if (timed_out) return DeadlineExceeded(what + ": timed out");
    return Unavailable(what + ": " + ec.message());
  }

  // True when the idle connection is open and the server has sent nothing since the last
  // response (no EOF, no reset, no stray bytes).
  // One syscall: a peek that does not wait.
  bool LooksAlive() {
    if (buffer.size() > 0) return false;
    char byte;
    ssize_t n = ::recv(socket.native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
  }

  const std::string address;
  const asio::execution_context* const home;  // where the socket's I/O runs
  tcp::socket socket;
  asio::steady_timer timer;
  std::atomic<uint64_t> steps{0};
  std::atomic<bool> timed_out{false};
  beast::flat_buffer buffer;  // bytes read past the last response
};

// "host:port", "[v6]:port" -> host and port.
Result<std::pair<std::string, std::string>> SplitAddress(const std::string& address) {
  size_t colon = address.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == address.size()) {
    return InvalidArgument("bad upstream address '" + address + "': want host:port");
  }
  std::string host = address.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  std::string port = address.substr(colon + 1);
  unsigned value = 0;
  auto [end, err] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (err != std::errc() || end != port.data() + port.size() || value == 0 || value > 65535) {
    return InvalidArgument("bad port in upstream address '" + address + "'");
  }
  return std::make_pair(host, port);
}

class PoolImpl;

class ReplyImpl final : public UpstreamReply {
 public:
  ReplyImpl(std::shared_ptr<PoolImpl> pool, std::shared_ptr<Connection> conn,
            std::unique_ptr<bhttp::response_parser<bhttp::buffer_body>> parser,
            std::chrono::milliseconds step_timeout, std::string what)
      : pool_(std::move(pool)),
        conn_(std::move(conn)),
        parser_(std::move(parser)),
        step_timeout_(step_timeout),
        what_(std::move(what)) {
    head_.status = static_cast<int>(parser_->get().result_int());
    for (const auto& field : parser_->get()) {
      head_.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
    }
  }
  ~ReplyImpl() override;

  const ClientResponse& head() const override { return head_; }

  awaitable<Result<std::string>> Next() override {
    if (failure_) co_return *failure_;
    while (!parser_->is_done()) {
      auto& body = parser_->get().body();
      body.data = piece_.data();
      body.size = piece_.size();
      error_code ec;
      conn_->Arm(step_timeout_);
      co_await bhttp::async_read_some(conn_->socket, conn_->buffer, *parser_, RedirectTo(ec));
      conn_->Disarm();
      if (ec == bhttp::error::need_buffer) ec = {};
      if (ec) {
        failure_ = conn_->Failed(ec, "receive the response to " + what_);
        co_return *failure_;
      }
      size_t n = piece_.size() - parser_->get().body().size;
      if (n > 0) co_return std::string(piece_.data(), n);
    }
    co_return std::string();
  }

 private:
  std::shared_ptr<PoolImpl> pool_;
  std::shared_ptr<Connection> conn_;
  std::unique_ptr<bhttp::response_parser<bhttp::buffer_body>> parser_;
  std::chrono::milliseconds step_timeout_;
  std::string what_;
  ClientResponse head_;
  std::optional<Status> failure_;
  std::array<char, kPieceBytes> piece_;
};

class PoolImpl final : public UpstreamPool, public std::enable_shared_from_this<PoolImpl> {
 public:
  PoolImpl(asio::any_io_executor executor, std::vector<asio::io_context*> homes, size_t max_idle)
      : executor_(std::move(executor)), homes_(std::move(homes)), max_idle_(max_idle) {}

  awaitable<Result<std::unique_ptr<UpstreamReply>>> Open(const std::string& address,
                                                         const UpstreamRequest& request) override {
    Status checked = CheckRequest(request.method, request.target, request.headers);
    if (!checked.ok()) co_return checked;
    const std::string what = request.method + " " + request.target + " at " + address;
    const asio::any_io_executor home = HomeOf(co_await asio::this_coro::executor);
    for (int attempt = 0;; ++attempt) {
      std::shared_ptr<Connection> conn = attempt == 0 ? TakeIdle(home, address) : nullptr;
      const bool reused = conn != nullptr;
      if (!conn) {
        auto made = co_await Connect(home, address, request.step_timeout);
        if (!made.ok()) co_return made.status();
        conn = std::move(made).value();
      }
      bhttp::request<bhttp::span_body<const char>> req;
      req.method_string(AsBeast(request.method));
      req.target(AsBeast(request.target));
      req.version(11);
      req.set(bhttp::field::host, address);
      for (const auto& [name, value] : request.headers) req.insert(AsBeast(name), value);
      req.body() = beast::span<const char>(request.body.data(), request.body.size());
      req.content_length(request.body.size());
      req.keep_alive(true);

      error_code ec;
      conn->Arm(request.step_timeout);
      co_await bhttp::async_write(conn->socket, req, RedirectTo(ec));
      conn->Disarm();
      if (ec) {
        if (reused && !conn->timed_out) continue;  // the server closed it: a new connection
        co_return conn->Failed(ec, "send " + what);
      }
      auto parser = std::make_unique<bhttp::response_parser<bhttp::buffer_body>>();
      parser->header_limit(kMaxHeaderBytes);
      // Not boost::none: Beast 1.74 compares the Content-Length against the optional and an
      // empty one then rejects every body.
      parser->body_limit(std::numeric_limits<std::uint64_t>::max());
      if (request.method == "HEAD") parser->skip(true);
      conn->Arm(request.step_timeout);
      co_await bhttp::async_read_header(conn->socket, conn->buffer, *parser, RedirectTo(ec));
      conn->Disarm();
      if (ec) co_return conn->Failed(ec, "receive the response to " + what);
      co_return std::unique_ptr<UpstreamReply>(std::make_unique<ReplyImpl>(
          shared_from_this(), std::move(conn), std::move(parser), request.step_timeout, what));
    }
  }

  size_t idle_connections() const override {
    MutexLock lock(mu_);
    size_t n = 0;
    for (const auto& [address, conns] : idle_) n += conns.size();
    return n;
  }

  // A connection whose response was read to the end, kept alive by its server.
  void GiveBack(std::shared_ptr<Connection> conn) {
    MutexLock lock(mu_);
    auto& conns = idle_[{conn->home, conn->address}];
    if (conns.size() < max_idle_) conns.push_back(std::move(conn));
  }

 private:
  // Where the connections that `caller` uses live: its own io_context if that is a home, else
  // the pool's executor.
  asio::any_io_executor HomeOf(const asio::any_io_executor& caller) const {
    const asio::execution_context* context = &asio::query(caller, asio::execution::context);
    for (asio::io_context* home : homes_) {
      if (home == context) return home->get_executor();
    }
    return executor_;
  }

  std::shared_ptr<Connection> TakeIdle(const asio::any_io_executor& home,
                                       const std::string& address) {
    const asio::execution_context* context = &asio::query(home, asio::execution::context);
    for (;;) {
      std::shared_ptr<Connection> conn;
      {
        MutexLock lock(mu_);
        auto it = idle_.find({context, address});
        if (it == idle_.end() || it->second.empty()) return nullptr;
        conn = std::move(it->second.back());
        it->second.pop_back();
      }
      if (conn->LooksAlive()) return conn;
    }
  }

  awaitable<Result<std::shared_ptr<Connection>>> Connect(const asio::any_io_executor& home,
                                                         const std::string& address,
                                                         std::chrono::milliseconds timeout) {
    auto split = SplitAddress(address);
    if (!split.ok()) co_return split.status();
    const auto& [host, port] = *split;
    auto conn = std::make_shared<Connection>(home, address);
    error_code ec;
    std::vector<tcp::endpoint> endpoints;
    asio::ip::address ip = asio::ip::make_address(host, ec);
    if (!ec) {
      endpoints.emplace_back(ip, static_cast<uint16_t>(std::stoi(port)));
    } else {
      tcp::resolver resolver(home);
      auto found = co_await resolver.async_resolve(host, port, RedirectTo(ec));
      if (ec) co_return Unavailable("resolve " + host + ": " + ec.message());
      for (const auto& entry : found) endpoints.push_back(entry.endpoint());
    }
    conn->Arm(timeout);
    co_await asio::async_connect(conn->socket, endpoints, RedirectTo(ec));
    conn->Disarm();
    if (ec) co_return conn->Failed(ec, "connect to " + address);
    conn->socket.set_option(tcp::no_delay(true), ec);
    co_return std::move(conn);
  }

  asio::any_io_executor executor_;
  const std::vector<asio::io_context*> homes_;
  const size_t max_idle_;
  mutable Mutex mu_;
  // By the io_context the connections live on, and their address.
  std::map<std::pair<const asio::execution_context*, std::string>,
           std::vector<std::shared_ptr<Connection>>>
      idle_ GUARDED_BY(mu_);
};

ReplyImpl::~ReplyImpl() {
  if (!failure_ && parser_->is_done() && parser_->get().keep_alive() && !parser_->need_eof()) {
    pool_->GiveBack(std::move(conn_));
    return;
  }
  error_code ignored;
  conn_->socket.shutdown(tcp::socket::shutdown_both, ignored);
  conn_->socket.close(ignored);
}

}  // namespace

awaitable<Result<ClientResponse>> UpstreamReply::ReadAll() {
  ClientResponse whole = head();
  for (;;) {
    Result<std::string> piece = co_await Next();
    if (!piece.ok()) co_return piece.status();
    if (piece->empty()) co_return whole;
    whole.body.append(*piece);
  }
}

awaitable<Result<ClientResponse>> UpstreamPool::Send(const std::string& address,
                                                     const UpstreamRequest& request) {
  auto reply = co_await Open(address, request);
  if (!reply.ok()) co_return reply.status();
  co_return co_await (*reply)->ReadAll();
}

std::shared_ptr<UpstreamPool> UpstreamPool::Create(asio::any_io_executor executor,
                                                   std::vector<asio::io_context*> homes,
                                                   size_t max_idle_per_address) {
  return std::make_shared<PoolImpl>(std::move(executor), std::move(homes), max_idle_per_address);
}

}  // namespace tf::http
