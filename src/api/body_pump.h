// Moves a streamed request body into a writer that blocks (an object upload, a multipart part),
// reading the next piece from the network while the blocking pool writes the last one, so that
// the socket, the digests and the disk work side by side instead of in turn. Two buffers of
// up to kPumpPieceBytes, borrowed from BodyPieceBuffers (kept from one request to the next),
// and no copy between the socket and the writer.
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>

#include "api/piece_buffers.h"
#include "base/pool_task.h"
#include "base/status.h"

namespace tf::api {

// Large enough that handing a piece to the pool costs little beside hashing it, and that the
// blob writer's O_DIRECT write of it keeps several requests in flight (the disk splits writes
// at 4 MiB): 4 MiB pieces wrote at about 570 MB/s, 16 MiB ones at about 840 MB/s.
inline constexpr size_t kPumpPieceBytes = size_t{16} << 20;

// For a body of unknown length (chunked), which is as often small as large: filling two pieces
// of this size costs a small upload about a millisecond, two of kPumpPieceBytes four times that.
inline constexpr size_t kUnsizedPumpPieceBytes = size_t{4} << 20;

// How much of a body to read into the next piece, `already_read` bytes into it: the rest of a
// body of known length, up to kPumpPieceBytes (0 once it has all been read, so that a piece is
// never filled for nothing, and a small upload does not fill megabytes of buffer);
// kUnsizedPumpPieceBytes when its length is unknown.
inline size_t PieceBytesFor(std::optional<uint64_t> content_length, uint64_t already_read) {
  if (!content_length) return kUnsizedPumpPieceBytes;
  if (already_read >= *content_length) return 0;
  return static_cast<size_t>(std::min<uint64_t>(kPumpPieceBytes, *content_length - already_read));
}

// PumpBody's loop, into `pieces`.
template <typename Failure, typename Read, typename Write, typename FailedWrite>
awaitable<std::optional<Failure>> PumpBodyInto(BorrowedPieces& pieces, asio::thread_pool& pool,
                                               Read read, Write write, FailedWrite failed_write) {
  PooledTask<Status> writing;
  for (int i = 0;; i ^= 1) {
    std::optional<Failure> bad = co_await read(pieces[i]);
    if (writing.started()) {
      Status written = co_await writing.Wait();
      if (!written.ok()) co_return failed_write(written);
    }
    if (bad) co_return bad;
    if (pieces[i].empty()) co_return std::nullopt;
    std::string_view data = pieces[i];
    writing = PooledTask<Status>::Start(pool, [&write, data] { return write(data); });
  }
}

// `read(std::string& piece)` is awaited for each piece: it fills `piece` (up to kPumpPieceBytes;
// empty at the end of the body) and returns a Failure to stop. `write(std::string_view)` runs on
// `pool` and returns a Status; `failed_write(Status)` turns a failed one into a Failure. Returns
// the first failure, or nullopt once the whole body is written. Every write has ended by the
// time it returns.
template <typename Failure, typename Read, typename Write, typename FailedWrite>
awaitable<std::optional<Failure>> PumpBody(asio::thread_pool& pool, Read read, Write write,
                                           FailedWrite failed_write) {
  BorrowedPieces pieces(BodyPieceBuffers());
  std::optional<Failure> failed = co_await PumpBodyInto<Failure>(
      pieces, pool, std::move(read), std::move(write), std::move(failed_write));
  pieces.GiveBack();  // every write has ended
  co_return failed;
}

}  // namespace tf::api
