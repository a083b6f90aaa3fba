// The body pump: how much of a request body each piece takes, the buffers kept between
// requests, and the pump moving a body through them into a writer.
#include <gtest/gtest.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "api/body_pump.h"  // first: it includes base/async.h (see the note on <utility> there)

namespace tf::api {
namespace {

TEST(PieceBytesTest, ABodyOfKnownLengthTakesWhatIsLeftOfItUpToAWholePiece) {
  EXPECT_EQ(PieceBytesFor(uint64_t{4096}, 0), 4096u);
  EXPECT_EQ(PieceBytesFor(uint64_t{kPumpPieceBytes}, 0), kPumpPieceBytes);
  EXPECT_EQ(PieceBytesFor(uint64_t{5} << 40, 0), kPumpPieceBytes);
  EXPECT_EQ(PieceBytesFor(uint64_t{kPumpPieceBytes} + 10, kPumpPieceBytes), 10u);
}

TEST(PieceBytesTest, ABodyAllReadOrEmptyTakesNothing) {
  EXPECT_EQ(PieceBytesFor(uint64_t{0}, 0), 0u);
  EXPECT_EQ(PieceBytesFor(uint64_t{8} << 20, uint64_t{8} << 20), 0u);
}

TEST(PieceBytesTest, ABodyOfUnknownLengthTakesTheSmallerPieceEachTime) {
  EXPECT_EQ(PieceBytesFor(std::nullopt, 0), kUnsizedPumpPieceBytes);
  EXPECT_EQ(PieceBytesFor(std::nullopt, uint64_t{1} << 40), kUnsizedPumpPieceBytes);
  EXPECT_LT(kUnsizedPumpPieceBytes, kPumpPieceBytes);
}

std::string BufferOf(size_t bytes) {
  std::string s;
  s.reserve(bytes);
  return s;
}

TEST(PieceBuffersTest, ABufferGivenBackIsTakenAgainWithItsMemory) {
  PieceBuffers buffers(size_t{64} << 20);
  EXPECT_TRUE(buffers.Take().empty());
  std::string b = BufferOf(size_t{8} << 20);
  b.resize(100, 'x');
  const char* memory = b.data();
  buffers.Give(std::move(b));
  EXPECT_GE(buffers.kept_bytes(), size_t{8} << 20);
  std::string again = buffers.Take();
  EXPECT_EQ(again.data(), memory);
  EXPECT_GE(again.capacity(), size_t{8} << 20);
  EXPECT_EQ(buffers.kept_bytes(), 0u);
  EXPECT_EQ(buffers.Take().capacity(), std::string().capacity());  // none left
}

TEST(PieceBuffersTest, KeepsNoSmallBuffersAndNoMoreThanItsLimit) {
  PieceBuffers buffers(size_t{20} << 20);
  buffers.Give(BufferOf(PieceBuffers::kMinKeptBytes / 2));
  EXPECT_EQ(buffers.kept_bytes(), 0u);
  buffers.Give(BufferOf(size_t{8} << 20));
  buffers.Give(BufferOf(size_t{8} << 20));
  const size_t two = buffers.kept_bytes();
  EXPECT_GE(two, size_t{16} << 20);
  buffers.Give(BufferOf(size_t{8} << 20));  // a third would pass 20 MiB
  EXPECT_EQ(buffers.kept_bytes(), two);
  EXPECT_LE(buffers.kept_bytes(), size_t{20} << 20);
}

TEST(BorrowedPiecesTest, TakesOnlyThePiecesUsedAndGivesThemBack) {
  PieceBuffers buffers(size_t{64} << 20);
  buffers.Give(BufferOf(size_t{4} << 20));
  buffers.Give(BufferOf(size_t{2} << 20));  // taken first
  {
    BorrowedPieces pieces(buffers);
    EXPECT_GE(pieces[0].capacity(), size_t{2} << 20);
    EXPECT_LT(buffers.kept_bytes(), size_t{6} << 20);
    EXPECT_GE(buffers.kept_bytes(), size_t{4} << 20);  // piece 1 not used: still kept
    pieces.GiveBack();
  }
  EXPECT_GE(buffers.kept_bytes(), size_t{6} << 20);
}

TEST(BorrowedPiecesTest, PiecesNotGivenBackAreFreedWithTheirOwner) {
  PieceBuffers buffers(size_t{64} << 20);
  buffers.Give(BufferOf(size_t{4} << 20));
  {
    BorrowedPieces pieces(buffers);
    pieces[0].assign(10, 'a');
  }  // as when a request's coroutine is dropped with a write of the piece perhaps running
  EXPECT_EQ(buffers.kept_bytes(), 0u);
}

// A body of `length` bytes read `chunk` bytes at a time, as a BodyReader gives it.
struct FakeBody {
  std::string content;
  size_t at = 0;
  int reads = 0;
  awaitable<std::optional<Status>> Read(std::string& piece, uint64_t* read_bytes) {
    piece.resize(PieceBytesFor(content.size(), *read_bytes));
    if (!piece.empty()) ++reads;
    const size_t n = std::min(piece.size(), content.size() - at);
    std::copy_n(content.data() + at, n, piece.data());
    at += n;
    piece.resize(n);
    *read_bytes += n;
    co_return std::nullopt;
  }
};

// Pumps `body` from its start into `write` through pieces borrowed from `buffers`, on an event
// loop and a pool of its own, and returns the pump's failure, if any.
std::optional<Status> PumpOnce(PieceBuffers& buffers, FakeBody& body,
                               const std::function<Status(std::string_view)>& write) {
  asio::io_context io;
  asio::thread_pool pool(2);
  body.at = 0;
  std::optional<Status> failed;
  bool finished = false;
  asio::co_spawn(
      io,
      [&]() -> awaitable<void> {
        uint64_t read_bytes = 0;
        BorrowedPieces pieces(buffers);
        auto read = [&](std::string& piece) { return body.Read(piece, &read_bytes); };
        auto same = [](const Status& s) { return s; };
        failed = co_await PumpBodyInto<Status>(pieces, pool, read, write, same);
        pieces.GiveBack();
        finished = true;
      },
      asio::detached);
  io.run();
  pool.join();
  EXPECT_TRUE(finished);
  return failed;
}

TEST(PumpBodyTest, WritesTheWholeBodyInOrderThroughReusedBuffers) {
  PieceBuffers buffers(size_t{128} << 20);
  FakeBody body;
  body.content.resize(kPumpPieceBytes * 2 + 12345);
  for (size_t i = 0; i < body.content.size(); ++i) body.content[i] = static_cast<char>(i * 7);
  for (int upload = 0; upload < 2; ++upload) {
    std::string written;
    std::optional<Status> failed = PumpOnce(buffers, body, [&](std::string_view piece) {
      written.append(piece);
      return Status();
    });
    EXPECT_FALSE(failed.has_value()) << upload;
    EXPECT_EQ(written, body.content) << upload;
  }
  EXPECT_EQ(body.reads, 6);  // 3 pieces an upload; the end of the body costs no read
  EXPECT_GE(buffers.kept_bytes(), 2 * kPumpPieceBytes);  // both pieces kept for the next one
}

TEST(PumpBodyTest, AFailedWriteStopsThePumpAndIsReturned) {
  PieceBuffers buffers(size_t{128} << 20);
  FakeBody body;
  body.content.assign(kPumpPieceBytes * 3, 'z');
  int writes = 0;
  std::optional<Status> failed = PumpOnce(buffers, body, [&](std::string_view) {
    return ++writes == 1 ? Status() : ResourceExhausted("the disk is full");
  });
  ASSERT_TRUE(failed.has_value());
  EXPECT_EQ(failed->code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(writes, 2);  // the third piece is never handed to the writer
}

}  // namespace
}  // namespace tf::api
