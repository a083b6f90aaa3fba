// StreamWriter::SendFile: a file's bytes as a response body, sent with sendfile under a
// Content-Length, read and written as chunks under chunked framing, and a file that ends before
// the announced length is a cut connection, never a short body passed off as whole. A client
// that goes away half way through ends its own response, not the server (sendfile raises
// SIGPIPE where Asio's own writes do not).
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <condition_variable>
#include <mutex>

#include "file_test_util.h"
#include "http_test_util.h"  // first: includes base/async.h
#include "store_test_env.h"

namespace tf::http::testing {
namespace {

class HttpSendFileTest : public ServerTest {
 protected:
  void SetUp() override {
    content_.resize(5 * 1024 * 1024 + 11);
    for (size_t i = 0; i < content_.size(); ++i) {
      content_[i] = static_cast<char>((i * 2654435761u) >> 13);
    }
    path_ = dir_.path() / "content";
    tf::testing::WriteFile(path_, content_);
    // GET /file?offset=&length=[&chunked=1][&announce=N]: bytes of the file, sent with SendFile.
    StartServer([this](Request& r) -> awaitable<Response> {
      const uint64_t offset = std::stoull(r.query["offset"]);
      const uint64_t length = std::stoull(r.query["length"]);
      Response out;
      out.content_type = "application/octet-stream";
      if (r.query.count("chunked") == 0) {
        out.content_length = r.query.count("announce") ? std::stoull(r.query["announce"]) : length;
      }
      auto fd =
          std::shared_ptr<int>(new int(::open(path_.c_str(), O_RDONLY | O_CLOEXEC)), [](int* p) {
            ::close(*p);
            delete p;
          });
      out.stream = [this, fd, offset, length](StreamWriter& w) -> awaitable<void> {
        // In two calls, to check that they follow on.
        const uint64_t first = length / 3;
        if (co_await w.SendFile(*fd, offset, first)) {
          (void)co_await w.SendFile(*fd, offset + first, length - first);
        }
        std::lock_guard lock(mu_);
        ++streams_ended_;
        ended_.notify_all();
      };
      co_return out;
    });
  }

  std::string Target(uint64_t offset, uint64_t length, const std::string& extra = "") {
    return "/file?offset=" + std::to_string(offset) + "&length=" + std::to_string(length) + extra;
  }

  // Waits until `n` responses' streams have ended, for at most 30 s.
  bool StreamsEnded(int n) {
    std::unique_lock lock(mu_);
    return ended_.wait_for(lock, 30s, [&] { return streams_ended_ >= n; });
  }

  tf::testing::TempDir dir_;
  std::filesystem::path path_;
  std::string content_;
  std::mutex mu_;
  std::condition_variable ended_;
  int streams_ended_ = 0;
};

// A plain socket that asks for a whole large file and reads only `keep` bytes of the answer
// before it closes.
void AskAndHangUp(uint16_t port, const std::string& target, size_t keep) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  const std::string request = "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
  ASSERT_EQ(::send(fd, request.data(), request.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(request.size()));
  std::string got(keep, '\0');
  size_t have = 0;
  while (have < keep) {
    ssize_t n = ::recv(fd, got.data() + have, keep - have, 0);
    ASSERT_GT(n, 0);
    have += static_cast<size_t>(n);
  }
  ::close(fd);
}

TEST_F(HttpSendFileTest, SizedBodyIsTheFilesBytes) {
  auto client = NewClient();
  for (auto [offset, length] : {std::pair<uint64_t, uint64_t>{0, 5 * 1024 * 1024 + 11},
                                {4097, 3 * 1024 * 1024 + 5},
                                {123, 1}}) {
    auto r = client->Send("GET", Target(offset, length), {}, "", 10s);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->status, 200);
    EXPECT_EQ(r->Header("Content-Length"), std::to_string(length));
    EXPECT_TRUE(r->body == content_.substr(offset, length)) << offset << "+" << length;
  }
}

TEST_F(HttpSendFileTest, ChunkedBodyIsTheFilesBytes) {
  auto r = Get(Target(1000, 2 * 1024 * 1024 + 3, "&chunked=1"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->Header("Transfer-Encoding"), "chunked");
  EXPECT_TRUE(r->body == content_.substr(1000, 2 * 1024 * 1024 + 3));
}

TEST_F(HttpSendFileTest, FileEndingBeforeTheAnnouncedLengthCutsTheConnection) {
  // Asks for 100 bytes past the end of the file, and announces them.
  const uint64_t length = content_.size() - 4096 + 100;
  auto r = Get(Target(4096, length));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable) << r.status().ToString();
  // Sending more than was announced is refused the same way.
  auto more = Get(Target(0, 5000, "&announce=4000"));
  ASSERT_FALSE(more.ok());
}

TEST_F(HttpSendFileTest, ClientHangingUpHalfWayEndsOnlyItsResponse) {
  // Some hang up with unread bytes in their receive buffer (the kernel answers with a reset),
  // some after reading a few, as `curl | head -c` and a cancelled boto3 download do.
  const std::string whole = Target(0, content_.size());
  const int kClients = 12;
  for (int i = 0; i < kClients; ++i) {
    AskAndHangUp(server_->port(), whole, i % 2 == 0 ? 10 : 300 * 1024);
  }
  ASSERT_TRUE(StreamsEnded(kClients));
  // Still serving, and SIGPIPE is ignored, so a peer gone between two writes is an EPIPE.
  auto r = Get(Target(0, content_.size()));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->body == content_);
  struct sigaction now {};
  ASSERT_EQ(::sigaction(SIGPIPE, nullptr, &now), 0);
  EXPECT_EQ(now.sa_handler, SIG_IGN);
}

}  // namespace
}  // namespace tf::http::testing
