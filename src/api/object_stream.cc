#include "api/object_stream.h"

#include <boost/asio/strand.hpp>
#include <deque>

#include "base/log.h"
#include "base/pool_task.h"

namespace tf::api {

using objects::ObjectReader;

namespace {

awaitable<void> SendFromFile(asio::thread_pool& pool, std::shared_ptr<ObjectReader> reader,
                             const std::string& api, http::StreamWriter& out) {
  using Checked = Result<ObjectReader::Span>;
  // The checks run one at a time, in order, on a strand, up to kCheckAheadPieces ahead of the
  // send, so that the disk keeps reading while a piece is sent. Each task holds the reader, so
  // those queued may be left running if the client goes.
  auto checks = asio::make_strand(pool);
  auto check = [reader] { return reader->NextChecked(kSendPieceBytes); };
  std::deque<PooledTask<Checked>> ahead;
  for (int i = 0; i < kCheckAheadPieces; ++i)
    ahead.push_back(PooledTask<Checked>::Start(checks, check));
  for (;;) {
    Checked span = co_await ahead.front().Wait();
    ahead.pop_front();
    if (!span.ok()) {
      spdlog::error("{}: {}; the download was cut short", api, span.status().ToString());
      co_return;
    }
    if (span->length == 0) co_return;
    ahead.push_back(PooledTask<Checked>::Start(checks, check));
    if (!co_await out.SendFile(span->fd, span->file_offset, span->length)) co_return;
  }
}

awaitable<void> SendPieces(asio::thread_pool& pool, std::shared_ptr<ObjectReader> reader,
                           const std::string& api, http::StreamWriter& out) {
  for (;;) {
    auto piece = co_await RunBlocking(pool, [&reader] { return reader->Next(); });
    if (!piece.ok()) {
      spdlog::error("{}: {}; the download was cut short", api, piece.status().ToString());
      co_return;
    }
    if (piece->empty()) co_return;
    if (!co_await out.Write(std::move(*piece))) co_return;
  }
}

}  // namespace

std::function<awaitable<void>(http::StreamWriter&)> StreamContent(
    asio::thread_pool& pool, std::shared_ptr<ObjectReader> reader, std::string api) {
  return [&pool, reader = std::move(reader),
          api = std::move(api)](http::StreamWriter& out) -> awaitable<void> {
    if (reader->sends_from_files()) {
      co_await SendFromFile(pool, reader, api, out);
    } else {
      co_await SendPieces(pool, reader, api, out);
    }
  };
}

}  // namespace tf::api
