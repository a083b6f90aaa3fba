// StreamWriter::SendFile: a file's bytes as a response body, sent with sendfile under a
// Content-Length, read and written as chunks under chunked framing, and a file that ends before
// the announced length is a cut connection, never a short body passed off as whole.
#include "http_test_util.h"  // first: includes base/async.h

#include <fcntl.h>
#include <unistd.h>

#include "file_test_util.h"
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
      auto fd = std::shared_ptr<int>(new int(::open(path_.c_str(), O_RDONLY | O_CLOEXEC)),
                                     [](int* p) {
                                       ::close(*p);
                                       delete p;
                                     });
      out.stream = [fd, offset, length](StreamWriter& w) -> awaitable<void> {
        // In two calls, to check that they follow on.
        const uint64_t first = length / 3;
        if (!co_await w.SendFile(*fd, offset, first)) co_return;
        (void)co_await w.SendFile(*fd, offset + first, length - first);
      };
      co_return out;
    });
  }

  std::string Target(uint64_t offset, uint64_t length, const std::string& extra = "") {
    return "/file?offset=" + std::to_string(offset) + "&length=" + std::to_string(length) + extra;
  }

  tf::testing::TempDir dir_;
  std::filesystem::path path_;
  std::string content_;
};

TEST_F(HttpSendFileTest, SizedBodyIsTheFilesBytes) {
  auto client = NewClient();
  for (auto [offset, length] : {std::pair<uint64_t, uint64_t>{0, 5 * 1024 * 1024 + 11},
                                {4097, 3 * 1024 * 1024 + 5}, {123, 1}}) {
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

}  // namespace
}  // namespace tf::http::testing
