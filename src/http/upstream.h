// An asynchronous HTTP/1.1 client for coroutines that pass requests on to other servers (the
// inference gateway to its replicas): no thread is held while it waits, and keep-alive
// connections are pooled per address and per io_context, so that a request relayed costs no
// thread hop and, once warm, no connect.
//
//   auto pool = UpstreamPool::Create(io.get_executor());
//   auto reply = co_await pool->Open("10.0.0.7:30001", request);   // the head
//   while (...) { auto piece = co_await (*reply)->Next(); ... }    // the body as it comes
//
// A connection goes back to the pool once its response has been read to the end (and the
// server keeps it alive); a reply dropped before that closes its connection, which is how the
// upstream server learns that the client went away.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "http/http.h"

namespace tf::http {

struct UpstreamRequest {
  std::string method = "POST";
  std::string target;  // "/v1/completions"
  Headers headers;
  std::string_view body;  // must outlive the Open call
  // Bounds each step: connecting, writing, waiting for the head, each wait for the next piece.
  std::chrono::milliseconds step_timeout{60'000};
};

// A response as it arrives.
class UpstreamReply {
 public:
  virtual ~UpstreamReply() = default;
  // The status and headers (the body is left empty: it comes through Next).
  virtual const ClientResponse& head() const = 0;
  // The next piece of the body, as soon as some has arrived; "" once the body has ended.
  // kUnavailable if the connection drops first, kDeadlineExceeded after the step timeout.
  virtual awaitable<Result<std::string>> Next() = 0;
  // Reads the rest of the body into head's body: the whole response.
  awaitable<Result<ClientResponse>> ReadAll();
};

class UpstreamPool {
 public:
  virtual ~UpstreamPool() = default;
  // Sockets and timers run on `executor` (an io_context's, not a strand: a pooled connection
  // serves coroutines of any strand, one at a time), except for coroutines that run on one of
  // `homes` (single-threaded io_contexts, such as http::ServerOptions::connection_contexts):
  // their connections live on their own io_context and are pooled for it, so that a relay
  // stays on its thread. At most `max_idle_per_address` idle connections are kept per address
  // and io_context.
  static std::shared_ptr<UpstreamPool> Create(asio::any_io_executor executor,
                                              std::vector<asio::io_context*> homes = {},
                                              size_t max_idle_per_address = 256);

  // Sends `request` to `address` ("host:port"; a name is resolved) on an idle pooled connection
  // (one the server has closed meanwhile is passed over), or a new one, and waits for the
  // response's head. A request whose write fails on a reused connection is sent again on a new
  // one. kUnavailable if it cannot connect, or the connection drops before the head;
  // kDeadlineExceeded after the step timeout; kInvalidArgument for a bad address or request.
  virtual awaitable<Result<std::unique_ptr<UpstreamReply>>> Open(
      const std::string& address, const UpstreamRequest& request) = 0;

  // Open, then ReadAll.
  awaitable<Result<ClientResponse>> Send(const std::string& address,
                                         const UpstreamRequest& request);

  // Idle connections now, over every address (for tests and metrics).
  virtual size_t idle_connections() const = 0;
};

}  // namespace tf::http
