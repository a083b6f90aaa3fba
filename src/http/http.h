// The project's one HTTP layer. Everything above it (API routes, the CLI, tests) sees these
// types only; Boost.Beast stays inside http/server.cc, http/client.cc and http/upstream.cc.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/async.h"
#include "base/status.h"
#include "http/url.h"

namespace tf::http {

using Headers = std::vector<std::pair<std::string, std::string>>;

// Case-insensitive header lookup; "" when absent.
const std::string& FindHeader(const Headers& headers, std::string_view name);
// Sets header `name` to `value`, in place of every header of that name (in any case).
void ReplaceHeader(Headers& headers, std::string_view name, std::string value);
// The credentials of an `Authorization: Bearer <token>` header value; "" for another scheme or
// none. The scheme is case-insensitive and the spaces after it may be several (RFC 7235).
std::string_view BearerCredentials(std::string_view authorization);

// Reads a request body as it arrives, for routes that stream their body (see
// ServerOptions::stream_body) instead of receiving it whole in Request::body.
class BodyReader {
 public:
  virtual ~BodyReader() = default;
  // Fills `buffer` from the body, waiting as needed: returns buffer.size(), or fewer bytes only
  // when the body ends (0 once all of it has been read). The first call answers a client that
  // sent "Expect: 100-continue". Each call waits at most read_timeout (ServerOptions).
  // kUnavailable if the client went away or stalled; kResourceExhausted past
  // max_streamed_body_bytes; kInvalidArgument for a malformed chunked body. After an error every
  // later call fails too.
  virtual awaitable<Result<size_t>> Read(std::span<char> buffer) = 0;
  // The Content-Length the client declared; nullopt for a chunked body.
  virtual std::optional<uint64_t> content_length() const = 0;
};

struct Request {
  std::string method;                        // "GET", "POST", ...
  std::string target;                        // as sent: "/v1/queues?prefix=a%20b"
  std::string path;                          // percent-decoded path: "/v1/queues"
  std::map<std::string, std::string> query;  // percent-decoded query parameters
  Headers headers;
  std::string body;            // empty when body_reader is set
  std::string remote_address;  // "127.0.0.1:53211"
  // Set for requests whose body is streamed; valid until the handler's coroutine returns.
  BodyReader* body_reader = nullptr;

  const std::string& Header(std::string_view name) const { return FindHeader(headers, name); }
};

// Writes a streamed response body chunk by chunk (Server-Sent Events, log follow).
class StreamWriter {
 public:
  virtual ~StreamWriter() = default;
  // Sends one chunk. Returns false once the client has gone; the producer should stop then.
  virtual awaitable<bool> Write(std::string chunk) = 0;
  // Sends bytes [offset, offset + length) of the open file `fd` as the next part of the body,
  // from the page cache to the socket without a copy through this process (sendfile) where the
  // framing allows, else read and written as chunks. The caller keeps `fd` open until this
  // returns and checks the bytes first. Returns false once the client has gone, or if the file
  // ended early (the response is then cut short).
  virtual awaitable<bool> SendFile(int fd, uint64_t offset, uint64_t length) = 0;
};

struct Response {
  int status = 200;
  std::string content_type = "application/json";
  Headers headers;
  std::string body;
  // When set, `body` is ignored: the headers are sent with chunked transfer encoding, then
  // `stream` is run to produce the body, and the response ends when it returns.
  std::function<awaitable<void>(StreamWriter&)> stream;
  // With `stream`: the body's exact size, sent as Content-Length instead of chunking. A producer
  // that writes fewer bytes (or tries to write more) ends the response early, and the connection
  // is closed so that the client sees a truncated body, never a short one passed off as whole.
  // For HEAD the producer is not run. Without `stream`: the length a HEAD answer reports
  // (default: body.size()).
  std::optional<uint64_t> content_length;
};

using Handler = std::function<awaitable<Response>(Request&)>;

struct ServerOptions {
  std::string address = "127.0.0.1";   // loopback unless told otherwise
  uint16_t port = 0;                   // 0: pick a free port (see Server::port())
  size_t max_body_bytes = 8 << 20;     // larger bodies get 413 before the handler runs
  size_t max_header_bytes = 64 << 10;  // larger headers get 431
  // Decides from a request's head (method, target, path, query and headers; no body yet) whether
  // its handler reads the body itself through Request::body_reader. Such a body is limited by
  // max_streamed_body_bytes instead of max_body_bytes, read_timeout bounds each read of it
  // rather than the whole request, and handler_timeout counts from the handler's last read
  // of the body. A handler that returns before reading all of it has the connection closed after
  // its response. Empty: every body is buffered.
  std::function<bool(const Request&)> stream_body;
  uint64_t max_streamed_body_bytes = uint64_t{5} << 40;  // 5 TiB
  std::chrono::milliseconds read_timeout{30'000};        // to receive a whole request
  std::chrono::milliseconds handler_timeout{60'000};     // a handler running longer gets 503
  // A request's own bound instead of handler_timeout, decided from its head (a handler that
  // bounds its waits itself: the inference gateway's answers); unset or nullopt: the default.
  std::function<std::optional<std::chrono::milliseconds>(const Request& head)> handler_timeout_for;
  std::chrono::milliseconds idle_timeout{120'000};  // keep-alive connections idle this long close
  // Spreads accepted connections over these io_contexts, round robin, instead of giving each a
  // strand of the io_context that Start is given. Each must be run by exactly one thread: a
  // connection then lives on one thread from its accept to its close, with no hand-off between
  // threads and no strand (as each of nginx's worker processes serves its own connections).
  // They must outlive the server and whatever its handlers start. Empty: strands.
  std::vector<asio::io_context*> connection_contexts;
  // The answer to a request the server refuses or fails itself, before or instead of its
  // handler's: `status` 413 (body over the limit), 503 (handler_timeout passed, or shutting
  // down) or 500 (the handler threw or gave a bad status), with `message` saying why. `head` is
  // the request's head. Unset, or nullopt: {"error":{"code":"...","message":"..."}}, the code
  // being `status`'s kind ("resource_exhausted", "unavailable", "internal"). Requests whose head
  // could not be read (400, 431) always get that JSON.
  std::function<std::optional<Response>(const Request& head, int status, std::string_view message)>
      error_response;
};

// Serves HTTP/1.1 with keep-alive on an io_context that the caller runs (and on
// ServerOptions::connection_contexts, when given). Each connection is a coroutine; no thread is
// held by an idle or waiting connection.
class Server {
 public:
  virtual ~Server() = default;

  // Binds and starts accepting. kUnavailable if the address cannot be bound (the message names
  // the address and the OS error); kInvalidArgument if options.address is not an IP address or
  // the handler is empty. The first Start makes the process ignore SIGPIPE (unless it has a
  // handler for it), so that a client hanging up during a sendfile ends only its connection.
  static Result<std::unique_ptr<Server>> Start(asio::io_context& io, const ServerOptions& options,
                                               Handler handler);

  virtual uint16_t port() const = 0;
  virtual std::string address() const = 0;

  // Stops accepting new connections and new requests on open connections (they get 503 with
  // "Connection: close"), lets in-flight requests finish for up to `grace`, then closes every
  // connection. Completes when all connection coroutines have ended. A stream producer learns
  // of the closing only when its next Write returns false, so one that waits without writing
  // holds Shutdown up until it writes or returns.
  virtual awaitable<void> Shutdown(std::chrono::milliseconds grace) = 0;

  // Requests served so far and requests running now; for /metrics and tests.
  virtual int64_t requests_served() const = 0;
  virtual int64_t requests_in_flight() const = 0;
};

struct ClientResponse {
  int status = 0;
  Headers headers;
  std::string body;
  const std::string& Header(std::string_view name) const { return FindHeader(headers, name); }
};

// A request for Client::Exchange, whose body may come from a callback and whose response body
// may go to one, so that neither has to fit in memory.
struct ClientRequest {
  std::string method = "GET";
  std::string target;
  Headers headers;
  std::string body;  // ignored when body_source is set
  // Produces the body: fills up to `capacity` bytes at `buffer` and returns how many, 0 at the
  // end. An error ends the exchange (the connection is dropped) and is returned. Such a request
  // is sent with "Expect: 100-continue" and its body only once the server asks for it, so that
  // a refusal (a bad token, a missing bucket) comes back before any of the body is sent; that
  // early answer is returned with its body in ClientResponse::body.
  std::function<Result<size_t>(char* buffer, size_t capacity)> body_source;
  // With body_source: the exact size, sent as Content-Length (chunked when absent). A source
  // that produces another amount fails the call with kInvalidArgument.
  std::optional<uint64_t> body_size;
  // For a 2xx answer: on_head sees the status and headers first, then on_chunk gets the body
  // piece by piece instead of ClientResponse::body. Either returning false stops the exchange
  // there (the connection is dropped) and the call returns the status and headers. Answers that
  // are not 2xx are returned whole in ClientResponse::body.
  std::function<bool(const ClientResponse& head)> on_head;
  std::function<bool(std::string_view piece)> on_chunk;
  // Bounds each step (connecting, writing a piece of the body, each wait for the answer or for
  // the next piece of it), not the whole exchange.
  std::chrono::milliseconds timeout{60'000};
};

// A blocking HTTP/1.1 client with one keep-alive connection, reconnecting as needed.
// Not thread-safe: use one per thread.
class Client {
 public:
  virtual ~Client() = default;
  // base_url: "http://127.0.0.1:8080". kInvalidArgument if it does not parse.
  static Result<std::unique_ptr<Client>> Create(const std::string& base_url);

  // kUnavailable if the server cannot be reached or the connection drops before a full
  // response arrives; kDeadlineExceeded after `timeout`. Any HTTP status is a successful call.
  virtual Result<ClientResponse> Send(const std::string& method, const std::string& target,
                                      const Headers& headers, const std::string& body,
                                      std::chrono::milliseconds timeout) = 0;

  // Streams a response: calls on_chunk with each piece of the body as it arrives (a chunked
  // response such as SSE). Returns the status and headers with an empty body. Here `timeout`
  // bounds sending the request and receiving the response header, and then each wait for the
  // next piece, not the whole stream. If on_chunk returns false the connection is dropped and
  // the call returns the status and headers.
  virtual Result<ClientResponse> SendStreaming(
      const std::string& method, const std::string& target, const Headers& headers,
      const std::string& body, std::chrono::milliseconds timeout,
      const std::function<bool(std::string_view chunk)>& on_chunk) = 0;

  // Sends `request` (see ClientRequest). Errors as for Send.
  virtual Result<ClientResponse> Exchange(const ClientRequest& request) = 0;

  // Safe from any thread: ends the call in progress, if any, and every later one, with
  // kUnavailable ("cancelled"). For a thread that must stop while this client waits on a long
  // poll.
  virtual void Cancel() = 0;
};

}  // namespace tf::http
