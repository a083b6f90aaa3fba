// The object client over HTTP (client/object_client.h) against a real in-process
// server: round trips streamed both ways, missing objects, checked puts, listings across pages,
// credentials, and checkpoints and logs end to end over it.
#include <fstream>

#include "api_test_util.h"
#include "base/crypto.h"
#include "child_process.h"
#include "client/object_client.h"
#include "file_test_util.h"
#include "worker/checkpoint_sync.h"
#include "worker/log_shipper.h"

namespace tf::testing {
namespace {

namespace fs = std::filesystem;
using client::ObjectClient;

class WorkerObjectClientTest : public ApiFixture {
 protected:
  void SetUp() override {
    ApiFixture::SetUp();
    auto client = client::MakeHttpObjectClient(app_->url(), admin_token_);
    ASSERT_TRUE(client.ok()) << client.status().ToString();
    client_ = std::move(client).value();
    ASSERT_TRUE(client_->EnsureBucket("work").ok());
  }
  // Files in `dir`, other than the ones named.
  static int FilesIn(const fs::path& dir) {
    int n = 0;
    for (const auto& e : fs::directory_iterator(dir)) n += e.is_regular_file();
    return n;
  }

  std::unique_ptr<ObjectClient> client_;
};

TEST_F(WorkerObjectClientTest, FilesAndBytesMakeTheRoundTrip) {
  EXPECT_TRUE(client_->EnsureBucket("work").ok());  // again: already there is fine

  std::string big(5 << 20, '\0');
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>((i * 7919) >> 3);
  fs::path src = dir_.path() / "src.bin";
  WriteFile(src, big);
  ASSERT_TRUE(client_->PutFile("work", "a/b/big.bin", src).ok());
  ASSERT_TRUE(client_->PutBytes("work", "small", "hello").ok());

  fs::path down = dir_.path() / "down";
  fs::create_directories(down);
  WriteFile(down / "big.bin", "an older version");
  Status got = client_->GetToFile("work", "a/b/big.bin", down / "big.bin");
  ASSERT_TRUE(got.ok()) << got.ToString();
  EXPECT_EQ(ReadFile(down / "big.bin"), big);
  EXPECT_EQ(FilesIn(down), 1);  // no temporary file left beside it
  EXPECT_EQ(*client_->GetBytes("work", "small"), "hello");
  EXPECT_EQ(*client_->GetBytes("work", "a/b/big.bin"), big);

  // Missing objects.
  auto none = client_->GetBytes("work", "missing");
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_FALSE(none->has_value());
  EXPECT_EQ(client_->GetToFile("work", "missing", down / "big.bin").code(), StatusCode::kNotFound);
  EXPECT_EQ(ReadFile(down / "big.bin"), big);  // untouched
  EXPECT_EQ(FilesIn(down), 1);

  ASSERT_TRUE(client_->Delete("work", "small").ok());
  EXPECT_TRUE(client_->Delete("work", "small").ok());  // already gone is fine
  EXPECT_FALSE(client_->GetBytes("work", "small")->has_value());
}

TEST_F(WorkerObjectClientTest, ACheckedPutStoresOnlyTheExpectedContent) {
  fs::path file = dir_.path() / "ckpt.pt";
  WriteFile(file, "the content that was hashed");
  const std::string sha = Sha256Hex("the content that was hashed");
  ASSERT_TRUE(client_->PutFileChecked("work", "blobs/" + sha, file, sha).ok());
  EXPECT_EQ(*client_->GetBytes("work", "blobs/" + sha), "the content that was hashed");

  WriteFile(file, "rewritten after it was hashed");
  Status s = client_->PutFileChecked("work", "blobs/other", file, sha);
  EXPECT_EQ(s.code(), StatusCode::kAborted) << s.ToString();
  EXPECT_FALSE(client_->GetBytes("work", "blobs/other")->has_value());
}

TEST_F(WorkerObjectClientTest, BytesOverAMegabyteStreamAndACheckedPutOfBytesKeepsOnlyTheirOwnHash) {
  // Over 1 MiB the body is sent from the caller's memory a piece at a time.
  std::string big(3 << 20, '\0');
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>((i * 7919) >> 5);
  ASSERT_TRUE(client_->PutBytes("work", "shards/big", big).ok());
  EXPECT_EQ(*client_->GetBytes("work", "shards/big"), big);

  ASSERT_TRUE(client_->PutBytesChecked("work", "shards/checked", big, Sha256Hex(big)).ok());
  EXPECT_EQ(*client_->GetBytes("work", "shards/checked"), big);
  for (const std::string& bytes : {std::string("small"), big}) {
    Status s = client_->PutBytesChecked("work", "shards/wrong", bytes, Sha256Hex("not them"));
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
    EXPECT_FALSE(client_->GetBytes("work", "shards/wrong")->has_value());
  }
}

TEST_F(WorkerObjectClientTest, ListingsCoverEveryPage) {
  for (int i = 0; i < 7; ++i) {
    ASSERT_TRUE(client_->PutBytes("work", "logs/" + std::to_string(i), "x").ok());
  }
  ASSERT_TRUE(client_->PutBytes("work", "other", "x").ok());
  const std::vector<std::string> want = {"logs/0", "logs/1", "logs/2", "logs/3",
                                         "logs/4", "logs/5", "logs/6"};
  EXPECT_EQ(*client_->ListKeys("work", "logs/"), want);

  // The same listing two keys a page, through the transfer the CLI shares.
  auto http = http::Client::Create(app_->url());
  ASSERT_TRUE(http.ok());
  int pages = 0;
  client::ObjectExchange exchange =
      [&](http::ClientRequest request) -> Result<http::ClientResponse> {
    ++pages;
    request.headers.emplace_back("Authorization", "Bearer " + admin_token_);
    return (*http)->Exchange(request);
  };
  auto keys = client::ListObjectKeys(exchange, "work", "logs/", /*page_size=*/2);
  ASSERT_TRUE(keys.ok()) << keys.status().ToString();
  EXPECT_EQ(*keys, want);
  EXPECT_EQ(pages, 4);
}

TEST_F(WorkerObjectClientTest, ErrorsSayWhatWentWrong) {
  auto wrong = client::MakeHttpObjectClient(app_->url(), "not-a-token");
  ASSERT_TRUE(wrong.ok());
  EXPECT_EQ((*wrong)->PutBytes("work", "k", "v").code(), StatusCode::kUnauthenticated);
  EXPECT_EQ(client_->ListKeys("no-such-bucket", "").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(client_->EnsureBucket("X").code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(client_->PutFile("work", "k", dir_.path() / "missing").code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(client::MakeHttpObjectClient("not a url", "t").status().code(),
            StatusCode::kInvalidArgument);

  auto gone =
      client::MakeHttpObjectClient("http://127.0.0.1:" + std::to_string(FreePort()), admin_token_);
  ASSERT_TRUE(gone.ok());
  Status s = (*gone)->PutBytes("work", "k", "v");
  EXPECT_EQ(s.code(), StatusCode::kUnavailable) << s.ToString();
  EXPECT_NE(s.message().find("cannot reach the object service"), std::string::npos);
}

TEST_F(WorkerObjectClientTest, CheckpointsAndLogsEndToEnd) {
  fs::path work = dir_.path() / "attempt-1" / "checkpoints";
  WriteFile(work / "step-10" / "model.pt", std::string(2 << 20, 'w'));
  WriteFile(work / "step-10" / "model.pt.tmp", "torn");
  worker::CheckpointSync sync(*client_, "work", "jobs/job_1/checkpoints");
  auto synced = sync.Sync(work);
  ASSERT_TRUE(synced.ok()) << synced.status().ToString();
  EXPECT_EQ(synced->files, 1);

  fs::path next = dir_.path() / "attempt-2" / "checkpoints";
  worker::CheckpointSync other(*client_, "work", "jobs/job_1/checkpoints");
  auto restored = other.Restore(next);
  ASSERT_TRUE(restored.ok()) << restored.status().ToString();
  EXPECT_EQ(restored->files, 1);
  EXPECT_EQ(ReadFile(next / "step-10" / "model.pt"), std::string(2 << 20, 'w'));
  EXPECT_FALSE(fs::exists(next / "step-10" / "model.pt.tmp"));

  fs::path log = dir_.path() / "attempt-1" / "rank-0.log";
  WriteFile(log, "epoch 1\n");
  worker::LogShipper shipper(*client_, "work", "jobs/job_1/logs/1/0", log);
  ASSERT_EQ(*shipper.ShipNow(), 1);
  std::ofstream(log, std::ios::app) << "epoch 2\n";
  ASSERT_EQ(*shipper.Flush(), 1);
  auto chunks = worker::ReadLogChunks(*client_, "work", "jobs/job_1/logs/1/0", 0);
  ASSERT_TRUE(chunks.ok());
  ASSERT_EQ(chunks->size(), 2u);
  EXPECT_EQ((*chunks)[0].bytes + (*chunks)[1].bytes, "epoch 1\nepoch 2\n");
}

}  // namespace
}  // namespace tf::testing
