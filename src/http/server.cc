// Server: HTTP/1.1 over Boost.Beast, one coroutine per connection.
//
// Threading: the io_context may be run by any number of threads. Each connection runs on its own
// strand, so everything a connection touches (its stream, its buffers, a handler it started) is
// used from one strand at a time; or, with ServerOptions::connection_contexts, on one of those
// single-threaded io_contexts, which serves as its strand. The acceptor and the shutdown
// sequence run on the control strand. Shared state is either atomic or guarded by Core::mu_.
//
// Timeouts (all through beast::tcp_stream, which closes the socket when one fires, so a timed-out
// read is never answered with 408, the connection is just closed):
//   - waiting for the first byte of a request: read_timeout on a fresh connection, idle_timeout
//     between keep-alive requests;
//   - reading the rest of the request: read_timeout; for a streamed body (ServerOptions::
//     stream_body), read_timeout for the head and then for each BodyReader::Read;
//   - each write of a response or of one streamed chunk: read_timeout.
// Counters: requests_served counts every response to a complete request (the handler's, a 500
// for a throw, a 503 for a deadline or for shutdown), not the 400/413/431 sent to requests that
// could not be read. requests_in_flight counts requests whose handler has started and whose
// response (streamed body included) is not yet fully written.
//
// A handler that runs past handler_timeout is answered with 503, but it is not cancelled (Boost
// 1.74 coroutines cannot be cancelled from outside): it runs on to its end and its response is
// dropped. Shutdown waits for such handlers too, within the grace period. A handler that reads a
// streamed body has its deadline moved on at each read; if it still passes, the connection is
// closed after the 503, since the handler may be in the middle of reading.
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <csignal>
#include <cstdint>
#include <exception>
#include <limits>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "base/async.h"  // first: see the note on <utility> there
#include "base/log.h"
#include "base/mutex.h"
#include "http/http.h"
#include "http/server_io.h"

namespace tf::http {
namespace internal {

// A handler run raced against its deadline. Shared by the connection coroutine and the handler's
// own coroutine, which may outlive the connection when the deadline passes first.
struct HandlerCall {
  explicit HandlerCall(const asio::any_io_executor& ex) : timer(ex) {}
  Request request;
  std::shared_ptr<StreamedBody> body;  // the request's streamed body, if any
  bool done = false;
  Response response;
  std::exception_ptr error;
  asio::steady_timer timer;  // fires at the deadline; cancelled when the handler ends
};

void Connection::Close() {
  closing = true;
  if (call != nullptr) call->timer.cancel();
  error_code ignored;
  stream.socket().shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
  stream.close();
}

}  // namespace internal

namespace {

using namespace internal;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

constexpr size_t kFirstReadBytes = 4096;
// After an error response that closes the connection, the rest of the request is read and
// dropped for at most this long and this much, so that the client sees the response rather than
// a reset.
constexpr std::chrono::milliseconds kLingerTime{2000};
constexpr size_t kLingerBytes = 64 << 20;

// How a request asked to be answered.
struct Framing {
  unsigned version = 11;
  bool is_head = false;
  bool keep_alive = true;
};

// State shared by the Server object, the accept loop and every connection coroutine.
class Core : public std::enable_shared_from_this<Core> {
 public:
  Core(asio::io_context& io, const ServerOptions& options, Handler handler)
      : io_(io),
        options_(options),
        handler_(std::move(handler)),
        control_(asio::make_strand(io)),
        acceptor_(control_) {}

  Status Listen(const tcp::endpoint& endpoint);
  static awaitable<void> AcceptLoop(std::shared_ptr<Core> self);
  static awaitable<void> Drain(std::shared_ptr<Core> self, std::chrono::milliseconds grace);
  // Closes the acceptor and every connection now; for a Server destroyed without Shutdown.
  void Abort();

  asio::any_io_executor control() const { return control_; }
  const tcp::endpoint& local_endpoint() const { return local_; }
  int64_t served() const { return served_.load(); }
  int64_t in_flight() const { return in_flight_.load(); }

 private:
  static awaitable<void> Serve(std::shared_ptr<Core> self, std::shared_ptr<Connection> conn);
  // Answers one parsed request. Returns whether the connection may serve another.
  // Reads a buffered request's body into request->body.
  awaitable<error_code> ReadWholeBody(Connection& conn,
                                      bhttp::request_parser<bhttp::empty_body>& head,
                                      Request* request);
  // Answers one request. Returns whether the connection may serve another.
  awaitable<bool> Respond(Connection& conn, Request request, std::shared_ptr<StreamedBody> body,
                          Framing framing);
  // Returns whether the handler finished (false: its deadline passed or the server closed).
  awaitable<bool> RunHandler(Connection& conn, Request request, std::shared_ptr<StreamedBody> body,
                             Response* response);
  // Takes the response so that its body moves into the message instead of being copied.
  awaitable<bool> WriteResponse(Connection& conn, Response response, unsigned version, bool is_head,
                                bool keep_alive);
  awaitable<bool> WriteStream(Connection& conn, const Response& response, Framing framing);
  // The server's own answer to a request it refuses or fails (ServerOptions::error_response).
  Response Refusal(const Request& head, int status, StatusCode code,
                   std::string_view message) const;
  // Writes an error response, then closes the connection after lingering.
  awaitable<void> RejectAndClose(Connection& conn, const Response& response);
  // Before a close that leaves part of a request unread: stops sending, then reads and drops
  // what the client still sends for a short while, so that it sees the response, not a reset.
  awaitable<void> Linger(Connection& conn);

  // False (and nothing registered) once draining: the caller closes the connection.
  bool Register(const std::shared_ptr<Connection>& conn);
  void Unregister(uint64_t id);
  bool Busy() const { return in_flight_.load() > 0 || handlers_running_.load() > 0; }
  size_t ConnectionCount();
  // Wakes every Drain waiting on the control strand so that it re-checks its condition.
  void WakeDrainers();
  void CloseAllConnections();

  // The accepted connection's socket reopened on the next connection context, on the same
  // descriptor. (Accepting straight onto a connection context would leave io_'s pending accept
  // holding a socket of that context, which the server's owner may destroy before io_.)
  tcp::socket HandOver(tcp::socket& accepted, error_code& ec);

  asio::io_context& io_;
  const ServerOptions options_;
  const Handler handler_;
  const asio::any_io_executor control_;  // runs the accept loop, Drain and WakeDrainers
  tcp::acceptor acceptor_;               // used on control_ only (and in Listen, before that)
  tcp::endpoint local_;

  std::atomic<bool> draining_{false};
  std::atomic<int64_t> served_{0};
  std::atomic<int64_t> in_flight_{0};         // handler started, response not yet fully sent
  std::atomic<int64_t> handlers_running_{0};  // includes handlers that passed their deadline

  std::vector<asio::steady_timer*> drain_waiters_;  // used on control_ only
  size_t next_context_ = 0;                         // used on control_ only

  Mutex mu_;
  uint64_t next_id_ GUARDED_BY(mu_) = 1;
  std::unordered_map<uint64_t, std::shared_ptr<Connection>> connections_ GUARDED_BY(mu_);
};

Status Core::Listen(const tcp::endpoint& endpoint) {
  error_code ec;
  auto fail = [&](const char* step) {
    return Unavailable(std::string("cannot ") + step + " " + FormatEndpoint(endpoint) + ": " +
                       ec.message());
  };
  if (acceptor_.open(endpoint.protocol(), ec); ec) return fail("open a socket for");
  if (acceptor_.set_option(asio::socket_base::reuse_address(true), ec); ec) {
    return fail("set SO_REUSEADDR on");
  }
  if (acceptor_.bind(endpoint, ec); ec) return fail("bind");
  if (acceptor_.listen(asio::socket_base::max_listen_connections, ec); ec) return fail("listen on");
  local_ = acceptor_.local_endpoint(ec);
  if (ec) return fail("read the bound address of");
  return OkStatus();
}

awaitable<void> Core::AcceptLoop(std::shared_ptr<Core> self) {
  for (;;) {
    error_code ec;
    // Accepted on a strand of io_, and only then handed to a connection context (see
    // HandOver): a pending accept never holds a socket of another io_context.
    tcp::socket socket = co_await self->acceptor_.async_accept(
        asio::any_io_executor(asio::make_strand(self->io_)), RedirectTo(ec));
    if (self->draining_.load() || !self->acceptor_.is_open()) break;
    if (!ec && !self->options_.connection_contexts.empty()) socket = self->HandOver(socket, ec);
    if (ec) {
      // Out of file descriptors and the like: back off briefly instead of spinning.
      spdlog::warn("http: accept on {} failed: {}", FormatEndpoint(self->local_), ec.message());
      asio::steady_timer pause(self->control_, std::chrono::milliseconds(50));
      co_await pause.async_wait(RedirectTo(ec));
      continue;
    }
    auto conn = std::make_shared<Connection>(std::move(socket));
    auto remote = conn->stream.socket().remote_endpoint(ec);
    conn->remote = ec ? std::string("unknown") : FormatEndpoint(remote);
    if (!self->Register(conn)) break;
    asio::co_spawn(conn->stream.get_executor(), Serve(self, conn),
                   [self, id = conn->id](const std::exception_ptr& e) {
                     if (e) spdlog::error("http: connection ended by: {}", Describe(e));
                     self->Unregister(id);
                   });
  }
}

tcp::socket Core::HandOver(tcp::socket& accepted, error_code& ec) {
  const std::vector<asio::io_context*>& contexts = options_.connection_contexts;
  tcp::socket moved(contexts[next_context_++ % contexts.size()]->get_executor());
  const tcp::socket::native_handle_type fd = accepted.release(ec);
  if (ec) return moved;
  moved.assign(local_.protocol(), fd, ec);
  if (ec) ::close(fd);
  return moved;
}

awaitable<void> Core::Serve(std::shared_ptr<Core> self, std::shared_ptr<Connection> conn) {
  beast::tcp_stream& stream = conn->stream;
  const ServerOptions& opt = self->options_;
  bool first = true;
  for (;;) {
    error_code ec;
    if (conn->buffer.size() == 0) {  // wait for the next request to begin
      stream.expires_after(first ? opt.read_timeout : opt.idle_timeout);
      size_t n =
          co_await stream.async_read_some(conn->buffer.prepare(kFirstReadBytes), RedirectTo(ec));
      if (ec) break;  // closed by the peer, idle too long, or shut down
      conn->buffer.commit(n);
    }
    first = false;

    bhttp::request_parser<bhttp::empty_body> head;
    head.header_limit(static_cast<std::uint32_t>(
        std::min<size_t>(opt.max_header_bytes, std::numeric_limits<std::uint32_t>::max())));
    // Any body this server could take passes here; which limit applies is known once the
    // request's head is.
    uint64_t limit = std::max<uint64_t>(opt.max_body_bytes, opt.max_streamed_body_bytes);
    head.body_limit(limit);
    stream.expires_after(opt.read_timeout);  // for the whole request, 100 Continue included
    co_await bhttp::async_read_header(stream, conn->buffer, head, RedirectTo(ec));
    Request request;
    std::shared_ptr<StreamedBody> body;
    Framing framing;
    if (!ec && head.is_done() && head.get().version() == 11 &&
        beast::iequals(head.get()[bhttp::field::expect], "100-continue")) {
      // A request with an empty body that still asks whether to send it. HTTP lets a server
      // answer it straight away, but botocore then keeps the connection in a state where its
      // next request waits out the read timeout (a minute, for every empty file `aws s3 sync`
      // uploads): so it is told to go on first, as S3 does.
      bhttp::response<bhttp::empty_body> go_on{bhttp::status::continue_, 11};
      co_await bhttp::async_write(stream, go_on, RedirectTo(ec));
    }
    if (!ec) {
      request = ToRequestHead(head.get(), conn->remote);
      framing = {head.get().version(), head.get().method() == bhttp::verb::head,
                 head.get().keep_alive()};
      if (opt.stream_body && opt.stream_body(request)) {
        limit = opt.max_streamed_body_bytes;
        body = std::make_shared<StreamedBody>(conn, std::move(head), limit, opt.read_timeout);
      } else {
        limit = opt.max_body_bytes;
        ec = co_await self->ReadWholeBody(*conn, head, &request);
      }
    } else if (ec == bhttp::error::body_limit && head.is_header_done()) {
      request = ToRequestHead(head.get(), conn->remote);  // a Content-Length over the limit
    }
    if (ec == bhttp::error::body_limit) {
      co_await self->RejectAndClose(
          *conn, self->Refusal(request, 413, StatusCode::kResourceExhausted,
                               "request body exceeds " + std::to_string(limit) + " bytes"));
      break;
    }
    if (ec == bhttp::error::header_limit) {
      co_await self->RejectAndClose(
          *conn, ErrorResponse(
                     431, StatusCode::kResourceExhausted,
                     "request header exceeds " + std::to_string(opt.max_header_bytes) + " bytes"));
      break;
    }
    if (ec && IsHttpError(ec) && ec != bhttp::error::end_of_stream &&
        ec != bhttp::error::partial_message) {
      co_await self->RejectAndClose(*conn, ErrorResponse(400, StatusCode::kInvalidArgument,
                                                         "malformed request: " + ec.message()));
      break;
    }
    if (ec) break;  // timed out, reset, or shut down: nobody to answer
    if (!co_await self->Respond(*conn, std::move(request), std::move(body), framing)) break;
  }
  error_code ignored;
  stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
  stream.close();
}

awaitable<error_code> Core::ReadWholeBody(Connection& conn,
                                          bhttp::request_parser<bhttp::empty_body>& head,
                                          Request* request) {
  auto length = head.content_length();
  if (length && *length > options_.max_body_bytes) co_return bhttp::error::body_limit;
  bhttp::request_parser<bhttp::string_body> parser(std::move(head));
  parser.body_limit(options_.max_body_bytes);
  error_code ec;
  if (!parser.is_done()) {
    if (beast::iequals(parser.get()[bhttp::field::expect], "100-continue")) {
      bhttp::response<bhttp::empty_body> go_on{bhttp::status::continue_, 11};
      co_await bhttp::async_write(conn.stream, go_on, RedirectTo(ec));
    }
    if (!ec) co_await bhttp::async_read(conn.stream, conn.buffer, parser, RedirectTo(ec));
  }
  request->body = std::move(parser.get().body());
  co_return ec;
}

awaitable<bool> Core::Respond(Connection& conn, Request request, std::shared_ptr<StreamedBody> body,
                              Framing framing) {
  if (draining_.load()) {
    served_.fetch_add(1);
    co_await WriteResponse(
        conn, Refusal(request, 503, StatusCode::kUnavailable, "server is shutting down"),
        framing.version, framing.is_head, /*keep_alive=*/false);
    co_return false;
  }

  in_flight_.fetch_add(1);
  Response response;
  const bool finished = co_await RunHandler(conn, std::move(request), body, &response);
  // A body left partly unread leaves the connection at an unknown place in the byte stream.
  const bool body_read = body == nullptr || body->finished();
  bool keep_alive = framing.keep_alive && body_read;
  bool ok;
  if (response.stream && !framing.is_head) {
    ok = co_await WriteStream(conn, response, {framing.version, false, keep_alive});
    served_.fetch_add(1);
    keep_alive = keep_alive && (framing.version >= 11 || response.content_length.has_value());
  } else {
    served_.fetch_add(1);
    ok = co_await WriteResponse(conn, std::move(response), framing.version, framing.is_head,
                                keep_alive && !draining_.load());
  }
  in_flight_.fetch_sub(1);
  WakeDrainers();
  // A handler still running may be reading the body: then the connection just closes.
  if (ok && !body_read && finished) co_await Linger(conn);
  co_return ok&& keep_alive && !draining_.load();
}

// Runs the handler on this connection's strand and waits for it or for handler_timeout,
// whichever comes first. Never throws: a throwing handler yields a 500.
awaitable<bool> Core::RunHandler(Connection& conn, Request request,
                                 std::shared_ptr<StreamedBody> body, Response* response) {
  auto call = std::make_shared<HandlerCall>(conn.stream.get_executor());
  call->request = std::move(request);
  std::chrono::milliseconds timeout = options_.handler_timeout;
  if (options_.handler_timeout_for) {
    timeout = options_.handler_timeout_for(call->request).value_or(timeout);
  }
  call->timer.expires_after(timeout);
  if (body) {
    call->request.body_reader = body.get();
    // The body lives as long as the call, and is read only while the handler runs.
    body->set_on_progress([timer = &call->timer, timeout] {
      timer->expires_after(timeout);  // also wakes the wait below, which then waits again
    });
    call->body = std::move(body);
  }
  handlers_running_.fetch_add(1);
  auto self = shared_from_this();
  asio::co_spawn(
      conn.stream.get_executor(),
      [self, call]() -> awaitable<Response> { co_return co_await self->handler_(call->request); },
      [self, call](const std::exception_ptr& e, Response r) {
        call->done = true;
        if (e) {
          call->error = e;
        } else {
          call->response = std::move(r);
        }
        call->timer.cancel();
        self->handlers_running_.fetch_sub(1);
        self->WakeDrainers();
      });
  if (!call->done) {
    conn.call = call.get();
    for (;;) {
      error_code ec;
      co_await call->timer.async_wait(RedirectTo(ec));
      if (call->done || conn.closing || call->timer.expiry() <= Clock::now()) break;
    }
    conn.call = nullptr;
  }

  const Request& req = call->request;
  if (!call->done && conn.closing) {
    *response = Refusal(req, 503, StatusCode::kUnavailable, "server is shutting down");
  } else if (!call->done) {
    spdlog::warn("http: {} {} from {} passed its {} ms deadline", req.method, req.target,
                 req.remote_address, timeout.count());
    *response = Refusal(req, 503, StatusCode::kUnavailable,
                        "handler exceeded " + std::to_string(timeout.count()) + " ms");
  } else if (call->error) {
    spdlog::error("http: handler for {} {} threw: {}", req.method, req.target,
                  Describe(call->error));
    *response = Refusal(req, 500, StatusCode::kInternal, "internal error");
  } else if (call->response.status < 100 || call->response.status > 999) {
    spdlog::error("http: handler for {} {} returned invalid status {}", req.method, req.target,
                  call->response.status);
    *response = Refusal(req, 500, StatusCode::kInternal, "internal error");
  } else {
    *response = std::move(call->response);
  }
  co_return call->done;
}

// Fields the server sets itself; a handler's copies of them are dropped.
bool IsFramingHeader(std::string_view name) {
  for (std::string_view f : {"content-length", "transfer-encoding", "connection"}) {
    if (beast::iequals(beast::string_view(name.data(), name.size()),
                       beast::string_view(f.data(), f.size()))) {
      return true;
    }
  }
  return false;
}

template <typename Fields>
void SetCommonFields(Fields& res, const Response& response) {
  res.set(bhttp::field::server, "tensorfleet");
  if (!response.content_type.empty()) res.set(bhttp::field::content_type, response.content_type);
  for (const auto& [name, value] : response.headers) {
    if (!IsFramingHeader(name)) res.insert(name, value);
  }
}

awaitable<bool> Core::WriteResponse(Connection& conn, Response response, unsigned version,
                                    bool is_head, bool keep_alive) {
  bhttp::response<bhttp::string_body> res{static_cast<bhttp::status>(response.status), version};
  SetCommonFields(res, response);
  if (is_head) {
    res.content_length(response.content_length.value_or(response.body.size()));
  } else {
    res.body() = std::move(response.body);
    res.prepare_payload();
  }
  res.keep_alive(keep_alive);
  error_code ec;
  conn.stream.expires_after(options_.read_timeout);
  co_await bhttp::async_write(conn.stream, res, RedirectTo(ec));
  co_return !ec;
}

awaitable<bool> Core::WriteStream(Connection& conn, const Response& response, Framing framing) {
  using Mode = BodyWriter::Framing;
  const Mode mode = response.content_length ? Mode::kSized
                    : framing.version >= 11 ? Mode::kChunked
                                            : Mode::kUntilClose;
  bhttp::response<bhttp::empty_body> res{static_cast<bhttp::status>(response.status),
                                         framing.version};
  SetCommonFields(res, response);
  // Either, not both: Beast's chunked(false) would drop the Content-Length again.
  if (mode == Mode::kSized) res.content_length(*response.content_length);
  if (mode == Mode::kChunked) res.chunked(true);
  res.keep_alive(mode != Mode::kUntilClose && framing.keep_alive && !draining_.load());
  bhttp::response_serializer<bhttp::empty_body> serializer(res);
  error_code ec;
  conn.stream.expires_after(options_.read_timeout);
  co_await bhttp::async_write_header(conn.stream, serializer, RedirectTo(ec));
  if (ec) co_return false;

  BodyWriter writer(conn.stream, mode, response.content_length.value_or(0), options_.read_timeout);
  try {
    co_await response.stream(writer);
  } catch (...) {
    spdlog::error("http: stream producer threw: {}", Describe(std::current_exception()));
    co_return false;  // the body is cut short; closing tells the client
  }
  if (mode == Mode::kUntilClose) co_return false;  // the close ends the body
  co_return co_await writer.Finish();
}

Response Core::Refusal(const Request& head, int status, StatusCode code,
                       std::string_view message) const {
  if (options_.error_response) {
    try {
      if (std::optional<Response> own = options_.error_response(head, status, message)) {
        return std::move(*own);
      }
    } catch (const std::exception& e) {
      spdlog::error("http: error_response for {} {} threw: {}", head.method, head.target, e.what());
    }
  }
  return ErrorResponse(status, code, message);
}

awaitable<void> Core::RejectAndClose(Connection& conn, const Response& response) {
  const bool written =
      co_await WriteResponse(conn, response, 11, /*is_head=*/false, /*keep_alive=*/false);
  if (written) co_await Linger(conn);
}

awaitable<void> Core::Linger(Connection& conn) {
  error_code ec;
  conn.stream.socket().shutdown(tcp::socket::shutdown_send, ec);
  std::array<char, 8192> sink;
  size_t drained = 0;
  conn.stream.expires_after(
      std::min<std::chrono::milliseconds>(kLingerTime, options_.read_timeout));
  while (drained < kLingerBytes) {
    size_t n = co_await conn.stream.async_read_some(asio::buffer(sink), RedirectTo(ec));
    if (ec) break;
    drained += n;
  }
}

bool Core::Register(const std::shared_ptr<Connection>& conn) {
  // Checked under mu_ so that a CloseAllConnections after draining_ was set sees every
  // registered connection.
  MutexLock lock(mu_);
  if (draining_.load()) return false;
  conn->id = next_id_++;
  connections_.emplace(conn->id, conn);
  return true;
}

void Core::Unregister(uint64_t id) {
  bool now_empty;
  {
    MutexLock lock(mu_);
    connections_.erase(id);
    now_empty = connections_.empty();
  }
  if (now_empty) WakeDrainers();
}

size_t Core::ConnectionCount() {
  MutexLock lock(mu_);
  return connections_.size();
}

void Core::WakeDrainers() {
  if (!draining_.load()) return;
  asio::post(control_, [self = shared_from_this()] {
    for (asio::steady_timer* t : self->drain_waiters_) t->cancel();
  });
}

void Core::CloseAllConnections() {
  std::vector<std::shared_ptr<Connection>> conns;
  {
    MutexLock lock(mu_);
    for (const auto& [id, conn] : connections_) conns.push_back(conn);
  }
  for (auto& conn : conns) {
    asio::post(conn->stream.get_executor(), [conn] { conn->Close(); });
  }
}

void Core::Abort() {
  draining_.store(true);
  asio::post(control_, [self = shared_from_this()] {
    error_code ignored;
    self->acceptor_.close(ignored);
  });
  CloseAllConnections();
}

awaitable<void> Core::Drain(std::shared_ptr<Core> self, std::chrono::milliseconds grace) {
  // Runs on control_, like WakeDrainers' callbacks: a wake-up posted after a counter dropped
  // either runs before a check below (which then sees the drop) or cancels the wait after it.
  self->draining_.store(true);
  error_code ec;
  self->acceptor_.close(ec);

  asio::steady_timer waiter(self->control_);
  self->drain_waiters_.push_back(&waiter);
  auto wait_until = [&](Clock::time_point deadline) -> awaitable<void> {
    waiter.expires_at(deadline);
    co_await waiter.async_wait(RedirectTo(ec));
  };
  const auto deadline = Clock::now() + grace;
  while (self->Busy() && Clock::now() < deadline) co_await wait_until(deadline);

  self->CloseAllConnections();
  while (self->ConnectionCount() > 0) co_await wait_until(Clock::time_point::max());
  auto& waiters = self->drain_waiters_;
  waiters.erase(std::find(waiters.begin(), waiters.end(), &waiter));
}

class ServerImpl final : public Server {
 public:
  explicit ServerImpl(std::shared_ptr<Core> core) : core_(std::move(core)) {}
  ~ServerImpl() override { core_->Abort(); }

  uint16_t port() const override { return core_->local_endpoint().port(); }
  std::string address() const override { return core_->local_endpoint().address().to_string(); }

  awaitable<void> Shutdown(std::chrono::milliseconds grace) override {
    co_await asio::co_spawn(core_->control(), Core::Drain(core_, grace), asio::use_awaitable);
  }

  int64_t requests_served() const override { return core_->served(); }
  int64_t requests_in_flight() const override { return core_->in_flight(); }

 private:
  std::shared_ptr<Core> core_;
};

}  // namespace

namespace {

// A peer that hangs up while its response is being sent must end that connection only. Asio's
// writes pass MSG_NOSIGNAL, but sendfile (StreamWriter::SendFile) cannot, and the kernel then
// raises SIGPIPE, whose default action ends the whole process. So a process that serves HTTP
// ignores it, unless someone has already installed a handler of their own; a write to a closed
// peer is then an EPIPE like any other error.
void IgnoreSigpipe() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction now {};
    if (::sigaction(SIGPIPE, nullptr, &now) == 0 && now.sa_handler == SIG_DFL &&
        (now.sa_flags & SA_SIGINFO) == 0) {
      ::signal(SIGPIPE, SIG_IGN);
    }
  });
}

}  // namespace

Result<std::unique_ptr<Server>> Server::Start(asio::io_context& io, const ServerOptions& options,
                                              Handler handler) {
  if (!handler) return InvalidArgument("http server needs a handler");
  IgnoreSigpipe();
  error_code ec;
  asio::ip::address address = asio::ip::make_address(options.address, ec);
  if (ec) return InvalidArgument("not an IP address: '" + options.address + "'");
  auto core = std::make_shared<Core>(io, options, std::move(handler));
  TF_RETURN_IF_ERROR(core->Listen(tcp::endpoint(address, options.port)));
  asio::co_spawn(core->control(), Core::AcceptLoop(core), [](const std::exception_ptr& e) {
    if (e) spdlog::error("http: accept loop ended by an exception");
  });
  return std::unique_ptr<Server>(std::make_unique<ServerImpl>(std::move(core)));
}

}  // namespace tf::http
