// Client: blocking HTTP/1.1 over Boost.Beast with one kept-alive connection.
//
// Each call runs a coroutine on the client's private io_context until it completes, so that every
// network step can be bounded by beast::tcp_stream's timer (and name resolution by a timer that
// cancels the resolver).
//
// Stale keep-alive connections: before a request is written on a reused connection the socket is
// peeked; if the server has closed it (EOF, reset, or unexpected bytes) a new connection is made.
// If the server closes it in the short window after that check, the call is retried once on a new
// connection when nothing of a response was received and either the write itself failed or the
// method is idempotent (GET, HEAD, PUT, DELETE, OPTIONS), so a POST is never sent twice after
// the server may have seen it. A body from a source (Exchange) is never sent twice: only a
// request whose head found the connection closed is retried, before the source is first called.
#include <array>
#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <charconv>
#include <exception>
#include <limits>
#include <optional>

#include "base/async.h"  // first: see the note on <utility> there
#include "http/beast.h"
#include "http/client_checks.h"
#include "http/http.h"

namespace tf::http {
namespace {

using namespace internal;  // http/beast.h: Beast's names and helpers
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

constexpr std::uint32_t kMaxResponseHeaderBytes = 1 << 20;
constexpr size_t kStreamPieceBytes = 16 << 10;
constexpr size_t kUploadPieceBytes = 1 << 20;

bool IEquals(std::string_view a, std::string_view b) {
  return beast::iequals(AsBeast(a), AsBeast(b));
}

bool IsIdempotent(const std::string& method) {
  for (std::string_view m : {"GET", "HEAD", "PUT", "DELETE", "OPTIONS"}) {
    if (method == m) return true;
  }
  return false;
}

// A failed network step as the caller sees it.
Status NetError(const error_code& ec, const std::string& what) {
  if (ec == beast::error::timeout) return DeadlineExceeded(what + ": timed out");
  return Unavailable(what + ": " + ec.message());
}

struct BaseUrl {
  std::string host;  // without brackets for IPv6
  std::string port;
};

Result<BaseUrl> ParseBaseUrl(const std::string& url) {
  constexpr std::string_view kScheme = "http://";
  std::string_view s = url;
  if (s.substr(0, 8) == "https://") {
    return InvalidArgument("https is not supported: '" + url + "'");
  }
  if (s.substr(0, kScheme.size()) != kScheme) {
    return InvalidArgument("base URL must start with http://: '" + url + "'");
  }
  s.remove_prefix(kScheme.size());
  if (!s.empty() && s.back() == '/') s.remove_suffix(1);
  if (s.find('/') != std::string_view::npos || s.find('@') != std::string_view::npos) {
    return InvalidArgument("base URL must be http://host[:port]: '" + url + "'");
  }
  BaseUrl out;
  std::string_view port = "80";
  if (!s.empty() && s[0] == '[') {  // [::1]:8080
    size_t close = s.find(']');
    if (close == std::string_view::npos) return InvalidArgument("bad IPv6 host in '" + url + "'");
    out.host = std::string(s.substr(1, close - 1));
    std::string_view rest = s.substr(close + 1);
    if (!rest.empty()) {
      if (rest[0] != ':') return InvalidArgument("bad port in '" + url + "'");
      port = rest.substr(1);
    }
  } else {
    size_t colon = s.rfind(':');
    out.host = std::string(s.substr(0, colon));
    if (colon != std::string_view::npos) port = s.substr(colon + 1);
  }
  unsigned value = 0;
  auto [end, err] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (out.host.empty() || port.empty() || err != std::errc() || end != port.data() + port.size() ||
      value == 0 || value > 65535) {
    return InvalidArgument("bad host or port in '" + url + "'");
  }
  out.port = std::string(port);
  return out;
}

// One request as given to Send, SendStreaming or Exchange.
struct Call {
  const std::string& method;
  const std::string& target;
  const Headers& headers;
  const std::string& body;
  std::chrono::milliseconds timeout;
  Clock::time_point deadline;                             // Send and SendStreaming only
  const std::function<bool(std::string_view)>* on_chunk;  // null: buffer the body
  const ClientRequest* exchange = nullptr;  // Exchange: per-step timeouts, body source, on_head
};

class ClientImpl final : public Client {
 public:
  explicit ClientImpl(BaseUrl url)
      : url_(std::move(url)),
        host_header_(url_.host.find(':') != std::string::npos ? "[" + url_.host + "]:" + url_.port
                                                              : url_.host + ":" + url_.port) {}

  Result<ClientResponse> Send(const std::string& method, const std::string& target,
                              const Headers& headers, const std::string& body,
                              std::chrono::milliseconds timeout) override {
    return Run({method, target, headers, body, timeout, Clock::now() + timeout, nullptr});
  }

  Result<ClientResponse> SendStreaming(
      const std::string& method, const std::string& target, const Headers& headers,
      const std::string& body, std::chrono::milliseconds timeout,
      const std::function<bool(std::string_view chunk)>& on_chunk) override {
    return Run({method, target, headers, body, timeout, Clock::now() + timeout, &on_chunk});
  }

  Result<ClientResponse> Exchange(const ClientRequest& r) override {
    return Run({r.method, r.target, r.headers, r.body, r.timeout, Clock::time_point::max(),
                r.on_chunk ? &r.on_chunk : nullptr, &r});
  }

  void Cancel() override {
    cancelled_ = true;
    // Runs on the calling thread's io_.run(), if a call is in progress; a call that has not got
    // that far sees cancelled_ before and after connecting. Closing, not cancelling: a cancel
    // reaches only the step under way, and one that lands between two steps (the request
    // written, the answer not yet awaited) would leave the next step waiting with no timer.
    // Every step on a closed socket fails at once.
    asio::post(io_, [this] {
      if (stream_) stream_->close();
    });
  }

 private:
  enum class Outcome { kDone, kRetry };

  Result<ClientResponse> Run(const Call& call);
  awaitable<void> Converse(const Call& call, std::optional<Result<ClientResponse>>* out);
  awaitable<Status> Connect(Clock::time_point deadline);
  awaitable<Outcome> Attempt(const Call& call, bool reused,
                             std::optional<Result<ClientResponse>>* out);
  // Writes the head and, once the server asks for it, the body from call.exchange->body_source.
  // Sets *out only when the exchange ends here (an error, or an answer before the body).
  awaitable<Outcome> SendFromSource(const Call& call, bool reused,
                                    std::optional<Result<ClientResponse>>* out);
  // Sets *write_failed when the connection failed (rather than the source).
  awaitable<Status> WriteSourceBody(const Call& call, bool* write_failed);
  awaitable<Outcome> ReadResponse(const Call& call, bool reused,
                                  std::optional<Result<ClientResponse>>* out);
  // Sets the socket's timer for the next step of `call`.
  void Arm(const Call& call) {
    if (call.exchange != nullptr) {
      stream_->expires_after(call.timeout);
    } else {
      stream_->expires_at(call.deadline);
    }
  }
  template <typename Parser>
  awaitable<Outcome> ReadHeader(const Call& call, bool reused, Parser& parser, Status* status);
  awaitable<Status> ReadStreamedBody(const Call& call,
                                     bhttp::response_parser<bhttp::buffer_body>& parser,
                                     const std::function<bool(std::string_view)>& on_piece,
                                     bool* stopped);
  awaitable<Status> ReadSizedBody(const Call& call, uint64_t length, std::vector<char>& piece,
                                  const std::function<bool(std::string_view)>& on_piece,
                                  bool* stopped);
  bool LooksAlive();
  void Disconnect();

  const BaseUrl url_;
  const std::string host_header_;
  asio::io_context io_{1};
  std::optional<beast::tcp_stream> stream_;  // engaged while a connection is open
  beast::flat_buffer buffer_;                // bytes read past the last response
  std::atomic<bool> cancelled_{false};
};

Status Cancelled(const Call& call) {
  return Unavailable("http client: " + call.method + " " + call.target + ": cancelled");
}

Result<ClientResponse> ClientImpl::Run(const Call& call) {
  TF_RETURN_IF_ERROR(CheckRequest(call.method, call.target, call.headers));
  if (cancelled_) return Cancelled(call);
  std::optional<Result<ClientResponse>> result;
  std::string failure;
  io_.restart();
  asio::co_spawn(io_, Converse(call, &result), [&failure](const std::exception_ptr& e) {
    if (!e) return;
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& ex) {
      failure = ex.what();
    } catch (...) {
      failure = "non-standard exception";
    }
  });
  io_.run();
  if (cancelled_) {
    Disconnect();
    return Cancelled(call);
  }
  if (!result) {
    Disconnect();
    return Internal("http client: " + call.method + " " + call.target + " failed: " + failure);
  }
  return std::move(*result);
}

awaitable<void> ClientImpl::Converse(const Call& call, std::optional<Result<ClientResponse>>* out) {
  for (int attempt = 0;; ++attempt) {
    bool reused = stream_.has_value();
    if (reused && !LooksAlive()) {
      Disconnect();
      reused = false;
    }
    if (!stream_) {
      Status status = co_await Connect(call.exchange ? Clock::now() + call.timeout : call.deadline);
      if (!status.ok()) {
        *out = status;
        co_return;
      }
      if (cancelled_) {
        *out = Cancelled(call);
        co_return;
      }
    }
    Outcome outcome = co_await Attempt(call, reused && attempt == 0, out);
    if (out->has_value() && !(*out)->ok()) Disconnect();
    if (outcome == Outcome::kDone) co_return;
    out->reset();
  }
}

awaitable<Status> ClientImpl::Connect(Clock::time_point deadline) {
  const std::string where = url_.host + ":" + url_.port;
  error_code ec;
  // The guard's callback may run after this frame is gone, so it shares the resolver.
  auto resolver = std::make_shared<tcp::resolver>(io_);
  asio::steady_timer guard(io_, deadline);
  guard.async_wait([resolver](error_code wait_ec) {
    if (!wait_ec) resolver->cancel();
  });
  auto endpoints = co_await resolver->async_resolve(url_.host, url_.port, RedirectTo(ec));
  guard.cancel();
  if (ec == asio::error::operation_aborted)
    co_return DeadlineExceeded("resolve " + where + ": timed out");
  if (ec) co_return Unavailable("resolve " + where + ": " + ec.message());

  stream_.emplace(io_);
  stream_->expires_at(deadline);
  co_await stream_->async_connect(endpoints, RedirectTo(ec));
  if (ec) {
    stream_.reset();
    co_return NetError(ec, "connect to " + where);
  }
  stream_->socket().set_option(tcp::no_delay(true), ec);
  buffer_.clear();
  co_return OkStatus();
}

template <typename Message>
void SetRequestFields(Message& req, const Call& call, const std::string& host_header) {
  req.method_string(AsBeast(call.method));
  req.target(AsBeast(call.target));
  req.version(11);
  req.set(bhttp::field::host, host_header);
  req.set(bhttp::field::user_agent, "tensorfleet");
  for (const auto& [name, value] : call.headers) {
    if (IEquals(name, "content-length") || IEquals(name, "transfer-encoding") ||
        IEquals(name, "expect")) {
      continue;
    }
    if (IEquals(name, "host") || IEquals(name, "user-agent")) {
      req.set(AsBeast(name), value);
    } else {
      req.insert(AsBeast(name), value);
    }
  }
}

awaitable<ClientImpl::Outcome> ClientImpl::Attempt(const Call& call, bool reused,
                                                   std::optional<Result<ClientResponse>>* out) {
  if (call.exchange != nullptr && call.exchange->body_source) {
    Outcome outcome = co_await SendFromSource(call, reused, out);
    if (out->has_value()) co_return outcome;
    // The server has asked for the body and had it: the request is never sent again.
    co_return co_await ReadResponse(call, /*reused=*/false, out);
  }
  bhttp::request<bhttp::span_body<const char>> req;
  SetRequestFields(req, call, host_header_);
  req.body() = beast::span<const char>(call.body.data(), call.body.size());
  req.content_length(call.body.size());

  error_code ec;
  Arm(call);
  co_await bhttp::async_write(*stream_, req, RedirectTo(ec));
  if (ec) {
    *out = NetError(ec, "send " + call.method + " " + call.target);
    // A failed write means the server cannot have read the whole request.
    co_return reused&& ec != beast::error::timeout ? Outcome::kRetry : Outcome::kDone;
  }
  co_return co_await ReadResponse(call, reused, out);
}

awaitable<ClientImpl::Outcome> ClientImpl::SendFromSource(
    const Call& call, bool reused, std::optional<Result<ClientResponse>>* out) {
  const ClientRequest& request = *call.exchange;
  bhttp::request<bhttp::empty_body> req;
  SetRequestFields(req, call, host_header_);
  req.set(bhttp::field::expect, "100-continue");
  if (request.body_size) {
    req.content_length(*request.body_size);
  } else {
    req.chunked(true);
  }
  bhttp::request_serializer<bhttp::empty_body> serializer(req);
  error_code ec;
  Arm(call);
  co_await bhttp::async_write_header(*stream_, serializer, RedirectTo(ec));
  if (ec) {
    *out = NetError(ec, "send " + call.method + " " + call.target);
    co_return reused&& ec != beast::error::timeout ? Outcome::kRetry : Outcome::kDone;
  }

  // "100 Continue", or the final answer when the server refuses without reading the body.
  Status status;
  bhttp::response_parser<bhttp::string_body> first;
  if (co_await ReadHeader(call, reused, first, &status) == Outcome::kRetry) {
    *out = status;
    co_return Outcome::kRetry;
  }
  if (status.ok() && first.get().result() != bhttp::status::continue_) {
    Arm(call);
    co_await bhttp::async_read(*stream_, buffer_, first, RedirectTo(ec));
    if (ec) status = NetError(ec, "receive the response to " + call.method + " " + call.target);
    if (status.ok()) {
      ClientResponse response;
      response.status = static_cast<int>(first.get().result_int());
      for (const auto& field : first.get()) {
        response.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
      }
      response.body = std::move(first.get().body());
      *out = std::move(response);
      Disconnect();  // the body the request announced was never sent
      co_return Outcome::kDone;
    }
  }
  bool write_failed = false;
  if (status.ok()) status = co_await WriteSourceBody(call, &write_failed);
  if (!status.ok() && write_failed) {
    // A server that gives up on the body (a full disk, say) answers, then closes: its answer
    // may be waiting, and says more than the broken pipe.
    std::optional<Result<ClientResponse>> answer;
    co_await ReadResponse(call, /*reused=*/false, &answer);
    if (answer && answer->ok()) {
      *out = std::move(*answer);
      Disconnect();
      co_return Outcome::kDone;
    }
  }
  if (!status.ok()) {
    Disconnect();
    *out = status;
  }
  co_return Outcome::kDone;
}

awaitable<Status> ClientImpl::WriteSourceBody(const Call& call, bool* write_failed) {
  const ClientRequest& request = *call.exchange;
  const std::string what = "send the body of " + call.method + " " + call.target;
  std::vector<char> piece(kUploadPieceBytes);
  uint64_t sent = 0;
  error_code ec;
  for (;;) {
    Result<size_t> n = request.body_source(piece.data(), piece.size());
    if (!n.ok()) co_return n.status();
    if (*n == 0) break;
    sent += *n;
    if (request.body_size && sent > *request.body_size) break;
    Arm(call);
    if (request.body_size) {
      co_await asio::async_write(*stream_, asio::buffer(piece.data(), *n), RedirectTo(ec));
    } else {
      co_await asio::async_write(*stream_, bhttp::make_chunk(asio::buffer(piece.data(), *n)),
                                 RedirectTo(ec));
    }
    if (ec) {
      *write_failed = true;
      co_return NetError(ec, what);
    }
  }
  if (request.body_size && sent != *request.body_size) {
    co_return InvalidArgument("the body of " + call.method + " " + call.target + " was to be " +
                              std::to_string(*request.body_size) + " bytes, but its source gave " +
                              (sent > *request.body_size ? "more" : std::to_string(sent)));
  }
  if (!request.body_size) {
    Arm(call);
    co_await asio::async_write(*stream_, bhttp::make_chunk_last(), RedirectTo(ec));
    if (ec) co_return NetError(ec, what);
  }
  co_return OkStatus();
}

awaitable<ClientImpl::Outcome> ClientImpl::ReadResponse(
    const Call& call, bool reused, std::optional<Result<ClientResponse>>* out) {
  const std::string what = call.method + " " + call.target;
  error_code ec;
  Status status;
  ClientResponse response;
  auto take_header = [&response](const auto& message) {
    response.status = static_cast<int>(message.result_int());
    for (const auto& field : message) {
      response.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
    }
  };
  bool keep = false;
  if (call.on_chunk == nullptr) {
    bhttp::response_parser<bhttp::string_body> parser;
    if (co_await ReadHeader(call, reused, parser, &status) == Outcome::kRetry) {
      *out = status;
      co_return Outcome::kRetry;
    }
    if (status.ok()) {
      Arm(call);
      co_await bhttp::async_read(*stream_, buffer_, parser, RedirectTo(ec));
      if (ec) status = NetError(ec, "receive the response to " + what);
    }
    if (!status.ok()) {
      *out = status;
      co_return Outcome::kDone;
    }
    take_header(parser.get());
    response.body = std::move(parser.get().body());
    keep = parser.get().keep_alive() && !parser.need_eof();
  } else {
    bhttp::response_parser<bhttp::buffer_body> parser;
    if (co_await ReadHeader(call, reused, parser, &status) == Outcome::kRetry) {
      *out = status;
      co_return Outcome::kRetry;
    }
    bool stopped = false;
    if (status.ok()) {
      take_header(parser.get());
      // Exchange hands over only a 2xx body; any other answer is an error, kept whole.
      const bool to_caller = call.exchange == nullptr || response.status / 100 == 2;
      if (to_caller && call.exchange != nullptr && call.exchange->on_head &&
          !call.exchange->on_head(response)) {
        stopped = true;
      } else if (to_caller) {
        status = co_await ReadStreamedBody(call, parser, *call.on_chunk, &stopped);
      } else {
        auto keep_piece = [&response](std::string_view piece) {
          response.body.append(piece);
          return response.body.size() < kMaxResponseHeaderBytes;  // errors are small
        };
        status = co_await ReadStreamedBody(call, parser, keep_piece, &stopped);
      }
    }
    if (!status.ok()) {
      *out = status;
      co_return Outcome::kDone;
    }
    keep = !stopped && parser.get().keep_alive() && !parser.need_eof();
  }
  if (!keep) Disconnect();
  *out = std::move(response);
  co_return Outcome::kDone;
}

template <typename Parser>
awaitable<ClientImpl::Outcome> ClientImpl::ReadHeader(const Call& call, bool reused, Parser& parser,
                                                      Status* status) {
  parser.header_limit(kMaxResponseHeaderBytes);
  // Not boost::none: Beast 1.74 compares the Content-Length against the optional and an empty
  // one then rejects every body.
  parser.body_limit(std::numeric_limits<std::uint64_t>::max());
  if (call.method == "HEAD") parser.skip(true);
  error_code ec;
  Arm(call);
  co_await bhttp::async_read_header(*stream_, buffer_, parser, RedirectTo(ec));
  if (!ec) co_return Outcome::kDone;
  *status = NetError(ec, "receive the response to " + call.method + " " + call.target);
  bool closed_before_answer = ec == bhttp::error::end_of_stream ||
                              ec == asio::error::connection_reset || ec == asio::error::broken_pipe;
  if (reused && !parser.got_some() && closed_before_answer && IsIdempotent(call.method)) {
    co_return Outcome::kRetry;
  }
  co_return Outcome::kDone;
}

// Hands each piece of the body to on_piece as it arrives; `timeout` bounds each wait for the
// next piece. Sets *stopped when on_piece asked to stop (the connection is then dropped).
awaitable<Status> ClientImpl::ReadStreamedBody(
    const Call& call, bhttp::response_parser<bhttp::buffer_body>& parser,
    const std::function<bool(std::string_view)>& on_piece, bool* stopped) {
  // Larger pieces for Exchange, which moves whole objects; SSE wants each event at once anyway.
  std::vector<char> piece(call.exchange != nullptr ? kUploadPieceBytes : kStreamPieceBytes);
  auto length = parser.content_length();
  if (call.exchange != nullptr && length && !parser.is_done()) {
    co_return co_await ReadSizedBody(call, *length, piece, on_piece, stopped);
  }
  while (!parser.is_done()) {
    auto& body = parser.get().body();
    body.data = piece.data();
    body.size = piece.size();
    error_code ec;
    stream_->expires_after(call.timeout);
    co_await bhttp::async_read_some(*stream_, buffer_, parser, RedirectTo(ec));
    if (ec == bhttp::error::need_buffer) ec = {};
    if (ec) co_return NetError(ec, "receive the streamed response to " + call.target);
    size_t n = piece.size() - parser.get().body().size;
    if (n > 0 && !on_piece(std::string_view(piece.data(), n))) {
      *stopped = true;
      co_return OkStatus();
    }
  }
  co_return OkStatus();
}

// A Content-Length body read past the parser: what the head's read brought along, then straight
// from the socket into `piece`, one whole piece per callback and never past the body's end.
awaitable<Status> ClientImpl::ReadSizedBody(const Call& call, uint64_t length,
                                            std::vector<char>& piece,
                                            const std::function<bool(std::string_view)>& on_piece,
                                            bool* stopped) {
  while (length > 0) {
    const size_t want = static_cast<size_t>(std::min<uint64_t>(length, piece.size()));
    size_t filled = asio::buffer_copy(asio::buffer(piece.data(), want), buffer_.data());
    buffer_.consume(filled);
    stream_->expires_after(call.timeout);
    while (filled < want) {
      error_code ec;
      size_t n = co_await stream_->async_read_some(
          asio::buffer(piece.data() + filled, want - filled), RedirectTo(ec));
      if (ec) co_return NetError(ec, "receive the streamed response to " + call.target);
      filled += n;
    }
    length -= filled;
    if (!on_piece(std::string_view(piece.data(), filled))) {
      *stopped = true;
      co_return OkStatus();
    }
  }
  co_return OkStatus();
}

// True when the idle connection is open and the server has sent nothing since the last response
// (no EOF, no reset, no stray bytes).
bool ClientImpl::LooksAlive() {
  if (buffer_.size() > 0) return false;
  tcp::socket& socket = stream_->socket();
  error_code ec;
  socket.non_blocking(true, ec);
  if (ec) return false;
  char byte;
  socket.receive(asio::buffer(&byte, 1), tcp::socket::message_peek, ec);
  error_code ignored;
  socket.non_blocking(false, ignored);
  return ec == asio::error::would_block;
}

void ClientImpl::Disconnect() {
  if (stream_) {
    error_code ignored;
    stream_->socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream_->close();
    stream_.reset();
  }
  buffer_.clear();
}

}  // namespace

Result<std::unique_ptr<Client>> Client::Create(const std::string& base_url) {
  TF_ASSIGN_OR_RETURN(BaseUrl url, ParseBaseUrl(base_url));
  return std::unique_ptr<Client>(std::make_unique<ClientImpl>(std::move(url)));
}

}  // namespace tf::http
