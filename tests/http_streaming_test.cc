// Streamed request and response bodies: 100 MB each way through the server and client with
// memory that stays flat, Content-Length responses, early answers to uploads, and the limits.
#include <sys/resource.h>

#include <array>
#include <atomic>

#include "http_test_util.h"  // first: includes base/async.h
#include "sanitizers.h"

namespace tf::http::testing {
namespace {

constexpr uint64_t kBig = 100 << 20;

// Deterministic bytes: the same `n` bytes for the same seed, produced piece by piece.
class Pattern {
 public:
  explicit Pattern(uint64_t seed) : state_(seed | 1) {}
  void Fill(char* out, size_t n) {
    for (size_t i = 0; i < n; ++i) {
      state_ ^= state_ << 13;
      state_ ^= state_ >> 7;
      state_ ^= state_ << 17;
      out[i] = static_cast<char>(state_);
    }
  }

 private:
  uint64_t state_;
};

// FNV-1a over everything fed to it.
struct Digest {
  uint64_t value = 14695981039346656037ull;
  uint64_t bytes = 0;
  void Add(std::string_view s) {
    for (unsigned char c : s) value = (value ^ c) * 1099511628211ull;
    bytes += s.size();
  }
};

Digest DigestOf(uint64_t seed, uint64_t n) {
  Pattern p(seed);
  Digest d;
  std::vector<char> buf(1 << 20);
  while (n > 0) {
    size_t k = static_cast<size_t>(std::min<uint64_t>(n, buf.size()));
    p.Fill(buf.data(), k);
    d.Add(std::string_view(buf.data(), k));
    n -= k;
  }
  return d;
}

// The most memory this process has held so far, in bytes.
int64_t PeakRss() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<int64_t>(u.ru_maxrss) * 1024;
}

// A body source of `n` pattern bytes.
std::function<Result<size_t>(char*, size_t)> Source(uint64_t seed, uint64_t n) {
  auto pattern = std::make_shared<Pattern>(seed);
  auto left = std::make_shared<uint64_t>(n);
  return [pattern, left](char* out, size_t cap) -> Result<size_t> {
    size_t k = static_cast<size_t>(std::min<uint64_t>(*left, cap));
    pattern->Fill(out, k);
    *left -= k;
    return k;
  };
}

class HttpStreamingTest : public ServerTest {
 protected:
  // Serves POST /upload (streamed: answers "<bytes> <digest>"), PUT /refuse (streamed, but
  // answers 404 without reading) and GET /download?n=&seed=
  // (a Content-Length stream of pattern bytes; `short` sends one byte fewer than announced).
  void StartStreamingServer(ServerOptions options = {}) {
    options.stream_body = [](const Request& head) {
      return head.path == "/upload" || head.path == "/refuse" || head.path == "/give-up";
    };
    StartServer(
        [](Request& r) -> awaitable<Response> {
          if (r.path == "/upload") {
            Digest d;
            std::vector<char> buf(1 << 20);
            for (;;) {
              Result<size_t> n = co_await r.body_reader->Read(buf);
              if (!n.ok()) co_return Text(n.status().ToString(), 400);
              if (*n == 0) break;
              d.Add(std::string_view(buf.data(), *n));
            }
            co_return Text(std::to_string(d.bytes) + " " + std::to_string(d.value));
          }
          if (r.path == "/refuse") co_return Text("no such bucket", 404);
          if (r.path == "/give-up") {  // reads a little, then fails like a full disk
            std::vector<char> buf(1 << 20);
            (void)co_await r.body_reader->Read(buf);
            co_return Text("disk full", 507);
          }
          uint64_t n = std::stoull(r.query["n"]);
          uint64_t seed = std::stoull(r.query["seed"]);
          bool cut = r.query.count("short") > 0;
          Response out;
          out.content_type = "application/octet-stream";
          out.content_length = n;
          out.stream = [n, seed, cut](StreamWriter& w) -> awaitable<void> {
            Pattern p(seed);
            uint64_t left = cut ? n - 1 : n;
            while (left > 0) {
              std::string piece(static_cast<size_t>(std::min<uint64_t>(left, 1 << 20)), '\0');
              p.Fill(piece.data(), piece.size());
              left -= piece.size();
              if (!co_await w.Write(std::move(piece))) co_return;
            }
          };
          co_return out;
        },
        options);
  }
};

TEST_F(HttpStreamingTest, HundredMegabyteUploadIsStreamedWithFlatMemory) {
  if (::tf::testing::kUnderSanitizer) {
    GTEST_SKIP() << "a sanitizer keeps freed memory resident: peak RSS measures it, not streaming";
  }
  StartStreamingServer();
  auto client = NewClient();
  const int64_t before = PeakRss();
  for (bool sized : {true, false}) {
    ClientRequest req;
    req.method = "POST";
    req.target = "/upload";
    req.body_source = Source(sized ? 1 : 2, kBig);
    if (sized) req.body_size = kBig;
    auto r = client->Exchange(req);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->status, 200) << r->body;
    Digest want = DigestOf(sized ? 1 : 2, kBig);
    EXPECT_EQ(r->body, std::to_string(kBig) + " " + std::to_string(want.value));
  }
  // Neither side held a whole body: 200 MB went through.
  EXPECT_LT(PeakRss() - before, 48 << 20);
}

TEST_F(HttpStreamingTest, HundredMegabyteDownloadHasContentLengthAndFlatMemory) {
  if (::tf::testing::kUnderSanitizer) {
    GTEST_SKIP() << "a sanitizer keeps freed memory resident: peak RSS measures it, not streaming";
  }
  StartStreamingServer();
  const int64_t before = PeakRss();
  Digest got;
  std::string length_header, chunked_header;
  ClientRequest req;
  req.target = "/download?n=" + std::to_string(kBig) + "&seed=7";
  req.on_head = [&](const ClientResponse& head) {
    length_header = head.Header("Content-Length");
    chunked_header = head.Header("Transfer-Encoding");
    return true;
  };
  req.on_chunk = [&](std::string_view piece) {
    got.Add(piece);
    return true;
  };
  auto client = NewClient();
  auto r = client->Exchange(req);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(length_header, std::to_string(kBig));
  EXPECT_EQ(chunked_header, "");
  EXPECT_EQ(got.bytes, kBig);
  EXPECT_EQ(got.value, DigestOf(7, kBig).value);
  EXPECT_LT(PeakRss() - before, 48 << 20);
  // The connection is kept: a second exchange reuses it.
  auto again = client->Send("GET", "/download?n=3&seed=1", {}, "", 10s);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->body.size(), 3u);
}

TEST_F(HttpStreamingTest, ShortSizedStreamIsACutConnectionNotAShortBody) {
  StartStreamingServer();
  auto r = NewClient()->Send("GET", "/download?n=3000000&seed=1&short=1", {}, "", 10s);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable) << r.status().ToString();
}

TEST_F(HttpStreamingTest, HeadOfASizedStreamReportsItsLength) {
  StartStreamingServer();
  auto r = NewClient()->Send("HEAD", "/download?n=12345&seed=1", {}, "", 10s);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->Header("Content-Length"), "12345");
  EXPECT_TRUE(r->body.empty());
}

TEST_F(HttpStreamingTest, RefusalArrivesBeforeTheBodyIsSent) {
  StartStreamingServer();
  std::atomic<uint64_t> produced{0};
  ClientRequest req;
  req.method = "PUT";
  req.target = "/refuse";
  req.body_size = kBig;
  auto source = Source(1, kBig);
  req.body_source = [&](char* out, size_t cap) {
    auto n = source(out, cap);
    produced += *n;
    return n;
  };
  auto client = NewClient();
  auto r = client->Exchange(req);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 404);
  EXPECT_EQ(r->body, "no such bucket");
  EXPECT_EQ(produced.load(), 0u);
  // The client reconnects for the next request.
  auto next = client->Send("GET", "/download?n=1&seed=1", {}, "", 10s);
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  EXPECT_EQ(next->status, 200);
}

TEST_F(HttpStreamingTest, AnAnswerToAnUploadGivenUpMidwayReachesTheClient) {
  StartStreamingServer();
  ClientRequest req;
  req.method = "PUT";
  req.target = "/give-up";
  req.body_size = kBig;
  req.body_source = Source(1, kBig);
  auto r = NewClient()->Exchange(req);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 507);
  EXPECT_EQ(r->body, "disk full");
}

TEST_F(HttpStreamingTest, StreamedBodiesHaveTheirOwnLimit) {
  ServerOptions options;
  options.max_body_bytes = 1024;
  options.max_streamed_body_bytes = 1 << 20;
  StartStreamingServer(options);
  auto client = NewClient();
  // Past the buffered limit is fine on a streamed route...
  ClientRequest req;
  req.method = "POST";
  req.target = "/upload";
  req.body = std::string(100'000, 'x');
  auto r = client->Send("POST", "/upload", {}, std::string(100'000, 'x'), 10s);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 200) << r->body;
  // ...a declared length past the streamed limit is refused before the handler runs...
  req.body_source = Source(1, 2 << 20);
  req.body_size = 2 << 20;
  r = client->Exchange(req);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 413);
  // ...and a chunked body that grows past it fails the handler's read.
  req.body_source = Source(1, 2 << 20);
  req.body_size.reset();
  r = client->Exchange(req);
  if (r.ok()) {  // the server may close before the client has sent everything
    EXPECT_EQ(r->status, 400);
    EXPECT_NE(r->body.find("resource_exhausted"), std::string::npos) << r->body;
  }
  // Other routes keep the buffered limit.
  r = client->Send("POST", "/other", {}, std::string(100'000, 'x'), 10s);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 413);
}

TEST_F(HttpStreamingTest, ASourceGivingTheWrongSizeFailsTheCall) {
  StartStreamingServer();
  ClientRequest req;
  req.method = "POST";
  req.target = "/upload";
  req.body_source = Source(1, 1000);
  req.body_size = 2000;
  auto r = NewClient()->Exchange(req);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << r.status().ToString();
}

}  // namespace
}  // namespace tf::http::testing
