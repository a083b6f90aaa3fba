// Private to the HTTP server (server.cc): one connection's socket and read buffer, the reader
// of a streamed request body, the writer of a streamed response body, and small helpers. Beast
// lives here and in the .cc files of http/ only.
//
// Threading: everything here is used on the connection's strand only.
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "base/async.h"  // first: see the note on <utility> there
#include "http/beast.h"
#include "http/http.h"

namespace tf::http::internal {

struct HandlerCall;

// {"error":{"code":"resource_exhausted","message":"..."}}
Response ErrorResponse(int status, StatusCode code, std::string_view message);
// "127.0.0.1:8470", "[::1]:8470"
std::string FormatEndpoint(const asio::ip::tcp::endpoint& ep);
// The message of an exception caught as a std::exception_ptr.
std::string Describe(std::exception_ptr e);
// Whether `ec` is one of Beast's HTTP parse errors.
bool IsHttpError(const error_code& ec);
// The request without its body.
Request ToRequestHead(const bhttp::request_header<>& req, const std::string& remote);

// One accepted connection. Every member is used only on the connection's strand, except id and
// remote, which are set before the connection's coroutine starts.
struct Connection {
  explicit Connection(asio::ip::tcp::socket socket) : stream(std::move(socket)) {}

  // Closes the socket and stops waiting for a running handler (server.cc).
  void Close();

  beast::tcp_stream stream;
  beast::flat_buffer buffer;  // bytes read past the current request's head
  uint64_t id = 0;
  std::string remote;
  bool closing = false;         // Close() was called
  HandlerCall* call = nullptr;  // the handler being waited for, if any
};

// The body of one request, read as the handler asks for it. Content-Length bodies are read
// straight from the socket into the caller's buffer; chunked ones through Beast's parser.
class StreamedBody final : public BodyReader {
 public:
  // `head` has read the request's head and nothing of its body.
  StreamedBody(std::shared_ptr<Connection> conn, bhttp::request_parser<bhttp::empty_body>&& head,
               uint64_t limit, std::chrono::milliseconds read_timeout);

  awaitable<Result<size_t>> Read(std::span<char> buffer) override;
  std::optional<uint64_t> content_length() const override { return content_length_; }

  // Whether the whole body has been read, so that the connection may serve another request.
  bool finished() const { return finished_; }
  // Called at the start and the end of each Read (the server moves the handler's deadline).
  void set_on_progress(std::function<void()> fn) { on_progress_ = std::move(fn); }

 private:
  awaitable<error_code> ReadSized(std::span<char> out, size_t* filled);
  awaitable<error_code> ReadChunked(std::span<char> out, size_t* filled);
  Status Fail(const error_code& ec);

  std::shared_ptr<Connection> conn_;
  bhttp::request_parser<bhttp::buffer_body> parser_;
  const uint64_t limit_;
  const std::chrono::milliseconds read_timeout_;
  std::optional<uint64_t> content_length_;
  uint64_t remaining_ = 0;        // of a Content-Length body
  bool expect_continue_ = false;  // "100 Continue" still owed to the client
  bool finished_ = false;
  Status failed_;
  std::function<void()> on_progress_;
};

// Writes a streamed response body: as chunks (HTTP/1.1), as raw bytes up to the end of the
// connection (HTTP/1.0), or as exactly `length` raw bytes (a Content-Length response).
class BodyWriter final : public StreamWriter {
 public:
  enum class Framing { kChunked, kUntilClose, kSized };
  BodyWriter(beast::tcp_stream& stream, Framing framing, uint64_t length,
             std::chrono::milliseconds timeout)
      : stream_(stream), framing_(framing), left_(length), timeout_(timeout) {}

  awaitable<bool> Write(std::string chunk) override;
  awaitable<bool> SendFile(int fd, uint64_t offset, uint64_t length) override;
  // Ends the body. False if a write failed, or a sized body is short: the connection must then
  // be closed.
  awaitable<bool> Finish();

 private:
  // Waits until the socket takes more, up to timeout_. False on a timeout or error.
  awaitable<bool> WaitWritable();

  beast::tcp_stream& stream_;
  const Framing framing_;
  uint64_t left_;  // kSized: bytes still owed
  const std::chrono::milliseconds timeout_;
  bool failed_ = false;
};

}  // namespace tf::http::internal
