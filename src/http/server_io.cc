#include "http/server_io.h"

#include <sys/sendfile.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/write.hpp>
#include <cerrno>

namespace tf::http::internal {
namespace {

std::string JsonEscape(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\u00";
      out += kHex[(c >> 4) & 0xF];
      out += kHex[c & 0xF];
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

Response ErrorResponse(int status, StatusCode code, std::string_view message) {
  Response r;
  r.status = status;
  r.body = "{\"error\":{\"code\":\"" + std::string(StatusCodeName(code)) + "\",\"message\":\"" +
           JsonEscape(message) + "\"}}";
  return r;
}

std::string FormatEndpoint(const asio::ip::tcp::endpoint& ep) {
  std::string host = ep.address().to_string();
  if (ep.address().is_v6()) host = "[" + host + "]";
  return host + ":" + std::to_string(ep.port());
}

std::string Describe(std::exception_ptr e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& ex) {
    return ex.what();
  } catch (...) {
    return "non-standard exception";
  }
}

bool IsHttpError(const error_code& ec) {
  return ec.category() == bhttp::make_error_code(bhttp::error::bad_method).category();
}

Request ToRequestHead(const bhttp::request_header<>& req, const std::string& remote) {
  Request out;
  out.method = std::string(req.method_string());
  out.target = std::string(req.target());
  std::string_view target = out.target;
  size_t q = target.find('?');
  out.path = PercentDecode(target.substr(0, q), /*plus_is_space=*/false);
  if (q != std::string_view::npos) out.query = ParseQuery(target.substr(q + 1));
  for (const auto& field : req) {
    out.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
  }
  out.remote_address = remote;
  return out;
}

StreamedBody::StreamedBody(std::shared_ptr<Connection> conn,
                           bhttp::request_parser<bhttp::empty_body>&& head, uint64_t limit,
                           std::chrono::milliseconds read_timeout)
    : conn_(std::move(conn)), parser_(std::move(head)), limit_(limit), read_timeout_(read_timeout) {
  parser_.body_limit(limit);
  if (!parser_.chunked()) {
    auto length = parser_.content_length();
    content_length_ = length ? *length : 0;
    remaining_ = *content_length_;
  }
  finished_ = parser_.is_done() || (content_length_ && remaining_ == 0);
  expect_continue_ =
      !finished_ && beast::iequals(parser_.get()[bhttp::field::expect], "100-continue");
}

awaitable<Result<size_t>> StreamedBody::Read(std::span<char> buffer) {
  if (!failed_.ok()) co_return failed_;
  if (finished_ || buffer.empty()) co_return size_t{0};
  if (on_progress_) on_progress_();
  error_code ec;
  if (expect_continue_) {
    expect_continue_ = false;
    bhttp::response<bhttp::empty_body> go_on{bhttp::status::continue_, 11};
    conn_->stream.expires_after(read_timeout_);
    co_await bhttp::async_write(conn_->stream, go_on, RedirectTo(ec));
    if (ec) co_return Fail(ec);
  }
  size_t filled = 0;
  conn_->stream.expires_after(read_timeout_);  // for this whole call: one timer, not one a read
  // Not a conditional expression: g++ 12 mishandles co_await in the arms of ?:.
  if (content_length_) {
    ec = co_await ReadSized(buffer, &filled);
  } else {
    ec = co_await ReadChunked(buffer, &filled);
  }
  if (ec) co_return Fail(ec);
  if (on_progress_) on_progress_();
  co_return filled;
}

// Takes what the head's read left in the connection's buffer first, then reads the socket
// directly, never past the end of the body (the next request's bytes stay in the socket).
awaitable<error_code> StreamedBody::ReadSized(std::span<char> out, size_t* filled) {
  error_code ec;
  while (*filled < out.size() && remaining_ > 0) {
    size_t want = static_cast<size_t>(std::min<uint64_t>(out.size() - *filled, remaining_));
    size_t n;
    if (conn_->buffer.size() > 0) {
      n = asio::buffer_copy(asio::buffer(out.data() + *filled, want), conn_->buffer.data());
      conn_->buffer.consume(n);
    } else {
      n = co_await conn_->stream.async_read_some(asio::buffer(out.data() + *filled, want),
                                                 RedirectTo(ec));
      if (ec) co_return ec;
    }
    *filled += n;
    remaining_ -= n;
  }
  if (remaining_ == 0) finished_ = true;
  co_return ec;
}

awaitable<error_code> StreamedBody::ReadChunked(std::span<char> out, size_t* filled) {
  error_code ec;
  while (*filled < out.size() && !parser_.is_done()) {
    auto& body = parser_.get().body();
    body.data = out.data() + *filled;
    body.size = out.size() - *filled;
    co_await bhttp::async_read_some(conn_->stream, conn_->buffer, parser_, RedirectTo(ec));
    if (ec == bhttp::error::need_buffer) ec = {};
    *filled = out.size() - parser_.get().body().size;
    if (ec) co_return ec;
  }
  if (parser_.is_done()) finished_ = true;
  co_return ec;
}

Status StreamedBody::Fail(const error_code& ec) {
  if (ec == bhttp::error::body_limit) {
    failed_ =
        ResourceExhausted("request body exceeds the limit of " + std::to_string(limit_) + " bytes");
  } else if (ec.category() == bhttp::make_error_code(bhttp::error::bad_chunk).category() &&
             ec != bhttp::error::end_of_stream && ec != bhttp::error::partial_message) {
    failed_ = InvalidArgument("malformed request body: " + ec.message());
  } else if (ec == beast::error::timeout) {
    failed_ =
        Unavailable("the client sent nothing for " + std::to_string(read_timeout_.count()) + " ms");
  } else {
    failed_ = Unavailable("the request body was cut short: " + ec.message());
  }
  return failed_;
}

awaitable<bool> BodyWriter::Write(std::string chunk) {
  if (failed_) co_return false;
  if (chunk.empty()) co_return true;  // an empty chunk would end a chunked body
  error_code ec;
  stream_.expires_after(timeout_);
  switch (framing_) {
    case Framing::kChunked:
      co_await asio::async_write(stream_, bhttp::make_chunk(asio::buffer(chunk)), RedirectTo(ec));
      break;
    case Framing::kSized:
      if (chunk.size() > left_) {  // more than was announced: the response cannot be right
        failed_ = true;
        co_return false;
      }
      left_ -= chunk.size();
      [[fallthrough]];
    case Framing::kUntilClose:
      co_await asio::async_write(stream_, asio::buffer(chunk), RedirectTo(ec));
      break;
  }
  if (ec) failed_ = true;
  co_return !failed_;
}

awaitable<bool> BodyWriter::SendFile(int fd, uint64_t offset, uint64_t length) {
  if (failed_) co_return false;
  if (framing_ == Framing::kChunked) {  // each piece needs its chunk header: read, then write
    constexpr uint64_t kPiece = 1 << 20;
    std::string piece;
    while (length > 0) {
      piece.resize(static_cast<size_t>(std::min(kPiece, length)));
      ssize_t n = ::pread(fd, piece.data(), piece.size(), static_cast<off_t>(offset));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        failed_ = true;
        co_return false;
      }
      piece.resize(static_cast<size_t>(n));
      offset += static_cast<uint64_t>(n);
      length -= static_cast<uint64_t>(n);
      if (!co_await Write(std::move(piece))) co_return false;
    }
    co_return true;
  }
  if (framing_ == Framing::kSized) {
    if (length > left_) {  // more than was announced: the response cannot be right
      failed_ = true;
      co_return false;
    }
    left_ -= length;
  }
  auto& socket = stream_.socket();
  error_code ec;
  socket.native_non_blocking(true, ec);
  if (ec) failed_ = true;
  while (!failed_ && length > 0) {
    off_t at = static_cast<off_t>(offset);
    ssize_t n = ::sendfile(socket.native_handle(), fd, &at,
                           static_cast<size_t>(std::min<uint64_t>(length, 1 << 30)));
    if (n > 0) {
      offset += static_cast<uint64_t>(n);
      length -= static_cast<uint64_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (!co_await WaitWritable()) failed_ = true;
    } else {  // an error, or the file ended before `length`
      failed_ = true;
    }
  }
  co_return !failed_;
}

awaitable<bool> BodyWriter::WaitWritable() {
  // The stream's own timer covers only its reads and writes: this wait has a timer of its own,
  // which cancels the wait if it fires first.
  auto& socket = stream_.socket();
  auto executor = co_await asio::this_coro::executor;
  asio::steady_timer timer(executor, timeout_);
  auto waiting = std::make_shared<bool>(true);
  timer.async_wait(asio::bind_executor(executor, [&socket, waiting](const error_code& ec) {
    if (!ec && *waiting) socket.cancel();
  }));
  error_code ec;
  co_await socket.async_wait(asio::ip::tcp::socket::wait_write, RedirectTo(ec));
  *waiting = false;
  timer.cancel();
  co_return !ec;
}

awaitable<bool> BodyWriter::Finish() {
  if (failed_) co_return false;
  if (framing_ == Framing::kSized) co_return left_ == 0;
  if (framing_ == Framing::kUntilClose) co_return true;
  error_code ec;
  stream_.expires_after(timeout_);
  co_await asio::async_write(stream_, bhttp::make_chunk_last(), RedirectTo(ec));
  co_return !ec;
}

}  // namespace tf::http::internal
