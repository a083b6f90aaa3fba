// Crash tests against the real `tensorfleet server` binary: SIGKILL while a large object is being
// uploaded over an existing one, and SIGKILL in the middle of a part of an S3 multipart upload.
// After a restart the interrupted upload left nothing (no object, no temp file, no orphan blob
// or part, no pending record), a multipart upload goes on with the parts stored whole before
// the kill, and the objects written before are intact, checked by SHA-256. Runs on SQLite and
// on PostgreSQL.
#include <gtest/gtest.h>

#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "base/crypto.h"
#include "child_process.h"
#include "http/http.h"
#include "s3/request_signer.h"
#include "s3/sigv4.h"
#include "server_process.h"
#include "store/store.h"
#include "store_test_env.h"

namespace tf::testing {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;
using namespace std::chrono_literals;

constexpr uint64_t kPiece = 1 << 20;
constexpr uint64_t kBigBytes = 200 * kPiece;  // announced by the interrupted upload
constexpr uint64_t kSentBeforeKill = 64 * kPiece;

// Pattern bytes: piece i of an object with this seed.
std::string Piece(uint64_t seed, uint64_t i, size_t n) {
  std::string s(n, '\0');
  uint64_t x = (seed * 0x9e3779b97f4a7c15ull) ^ (i + 1);
  for (auto& c : s) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    c = static_cast<char>(x);
  }
  return s;
}

// Holds an upload's body at a chosen point until the server has been killed: the body source
// calls HoldUntilKilled, the test waits with WaitUntilHeld, kills the server, then calls Killed.
class KillSwitch {
 public:
  Status HoldUntilKilled() {
    std::unique_lock lock(mu_);
    held_ = true;
    cv_.notify_all();
    cv_.wait(lock, [&] { return killed_; });
    return Unavailable("the server was killed");
  }
  void WaitUntilHeld() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return held_; });
  }
  void Killed() {
    std::lock_guard lock(mu_);
    killed_ = true;
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool held_ = false, killed_ = false;  // guarded by mu_
};

class ObjectsReliabilityTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { TF_SKIP_UNLESS_STORE_REACHABLE(GetParam()); }

  // The server's flags for the store under test (SQLite in its data directory by default).
  std::vector<std::string> StoreFlags() const {
    if (GetParam() != "postgresql") return {};
    return {"--store", TestPostgresUrl()};
  }

  void StartServer() {
    ASSERT_TRUE(server_.Start());
    token_ = server_.token();
    client_ = std::move(http::Client::Create(url())).value();
  }

  std::string data_dir() const { return dir_.path().string(); }
  std::string url() const { return server_.url(); }
  std::string Target(const std::string& key) const {
    return "/v1/buckets/" + bucket_ + "/objects/" + key;
  }
  http::Headers Auth() const { return {{"Authorization", "Bearer " + token_}}; }

  // Uploads `pieces` pattern pieces; returns the SHA-256 the server reports.
  std::string Upload(const std::string& key, uint64_t seed, uint64_t pieces) {
    http::ClientRequest req;
    req.method = "PUT";
    req.target = Target(key);
    req.headers = Auth();
    req.body_size = pieces * kPiece;
    auto next = std::make_shared<uint64_t>(0);
    req.body_source = [seed, next, pieces](char* out, size_t cap) -> Result<size_t> {
      if (*next == pieces) return size_t{0};
      EXPECT_GE(cap, kPiece);
      std::string p = Piece(seed, (*next)++, kPiece);
      std::memcpy(out, p.data(), p.size());
      return p.size();
    };
    auto r = client_->Exchange(req);
    EXPECT_TRUE(r.ok() && r->status == 200) << (r.ok() ? r->body : r.status().ToString());
    return r.ok() ? Json::parse(r->body).value("sha256", "") : "";
  }

  static std::string ExpectedSha(uint64_t seed, uint64_t pieces) {
    std::string all;
    for (uint64_t i = 0; i < pieces; ++i) all += Piece(seed, i, kPiece);
    return Sha256Hex(all);
  }

  // The SHA-256 of what GET returns, checked against the server's header; "" on failure.
  std::string Download(const std::string& key) {
    auto r = client_->Send("GET", Target(key), Auth(), "", 60s);
    if (!r.ok() || r->status != 200) return "";
    std::string sha = Sha256Hex(r->body);
    EXPECT_EQ(sha, r->Header("x-tf-checksum-sha256"));
    return sha;
  }

  // Files under DATA_DIR/objects: blob files (fan-out directories) and temp files.
  void CountFiles(int* blobs, int* temps) {
    *blobs = *temps = 0;
    for (const auto& e : fs::recursive_directory_iterator(dir_.path() / "objects")) {
      if (!e.is_regular_file() || e.path().filename() == "owner") continue;
      if (e.path().parent_path().filename() == "tmp") {
        ++*temps;
      } else {
        ++*blobs;
      }
    }
  }

  // Pending blob records of this data directory's blob store.
  size_t PendingBlobs() {
    std::string url =
        GetParam() == "postgresql" ? TestPostgresUrl() : data_dir() + "/tensorfleet.db";
    auto store = store::OpenStore(url);
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    std::ifstream f(dir_.path() / "objects" / "owner");
    std::string owner;
    std::getline(f, owner);
    auto pending = (*store)->objects().ListPendingBlobs(owner);
    EXPECT_TRUE(pending.ok());
    return pending.ok() ? pending->size() : 0;
  }

  // An S3 request signed with `key`; the body's SHA-256 is signed unless `unsigned_payload`.
  Result<http::ClientResponse> S3Call(const s3::BucketLocation& key, http::ClientRequest req,
                                      bool unsigned_payload = false) {
    std::string path = req.target, query;
    if (size_t q = path.find('?'); q != std::string::npos) {
      query = path.substr(q + 1);
      path.resize(q);
    }
    s3::SignRequest(key, req.method, path, query,
                    unsigned_payload ? std::string(s3::kUnsignedPayload) : Sha256Hex(req.body),
                    SystemClock::Get().Now(), &req.headers);
    return client_->Exchange(req);
  }

  // An access key of the admin's project, as a location of the bucket under test.
  s3::BucketLocation NewS3Key() {
    auto r = client_->Send("POST", "/v1/s3-keys", Auth(), R"({"name":"crash"})", 10s);
    EXPECT_TRUE(r.ok() && r->status == 201);
    Json j = Json::parse(r.ok() ? r->body : "{}");
    s3::BucketLocation key;
    key.bucket = bucket_;
    key.host = url().substr(std::string("http://").size());
    key.access_key_id = j.value("id", "");
    key.secret_access_key = j.value("secret", "");
    return key;
  }

  // The text of the first <name>...</name> in an S3 answer.
  static std::string XmlText(const std::string& body, const std::string& name) {
    size_t b = body.find("<" + name + ">");
    if (b == std::string::npos) return "";
    b += name.size() + 2;
    return body.substr(b, body.find("</" + name + ">", b) - b);
  }

  TempDir dir_;
  // On a fixed port, so that a client finds it again after a restart.
  TensorfleetServer server_{data_dir(), FreePort(), StoreFlags()};
  std::string bucket_ = "crash-" + RandomHex(4);
  std::string token_;
  std::unique_ptr<http::Client> client_;
};

TEST_P(ObjectsReliabilityTest, KillNineDuringALargeUploadLeavesNothingAndLosesNothing) {
  StartServer();
  auto created = client_->Send("POST", "/v1/buckets", Auth(), Json{{"name", bucket_}}.dump(), 10s);
  ASSERT_TRUE(created.ok() && created->status == 201);
  const std::string done_sha = Upload("done.bin", 1, 20);
  const std::string old_sha = Upload("model.bin", 2, 24);
  ASSERT_EQ(done_sha, ExpectedSha(1, 20));
  ASSERT_EQ(old_sha, ExpectedSha(2, 24));

  // Replace model.bin with 200 MB, sent until 64 MB are out, then held until the kill.
  KillSwitch kill_switch;
  std::thread uploader([&] {
    auto client = std::move(http::Client::Create(url())).value();
    http::ClientRequest req;
    req.method = "PUT";
    req.target = Target("model.bin");
    req.headers = Auth();
    req.body_size = kBigBytes;
    uint64_t sent = 0;
    req.body_source = [&](char* out, size_t cap) -> Result<size_t> {
      if (sent == kSentBeforeKill) return kill_switch.HoldUntilKilled();
      std::string p = Piece(3, sent / kPiece, kPiece);
      std::memcpy(out, p.data(), p.size());
      sent += p.size();
      return p.size();
    };
    auto r = client->Exchange(req);
    EXPECT_FALSE(r.ok() && r->status == 200);
  });
  kill_switch.WaitUntilHeld();
  // The server has the upload's temp file; wait until most of what was sent is in it.
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  auto temp_bytes = [&] {
    uint64_t bytes = 0;
    for (const auto& e : fs::directory_iterator(dir_.path() / "objects" / "tmp")) {
      bytes += e.file_size();
    }
    return bytes;
  };
  while (temp_bytes() < kSentBeforeKill / 2 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::yield();
  }
  server_.Crash();
  kill_switch.Killed();
  uploader.join();

  int blobs, temps;
  CountFiles(&blobs, &temps);
  EXPECT_EQ(temps, 1) << "the kill should have caught the upload mid-way";
  EXPECT_GE(temp_bytes(), kSentBeforeKill / 2);
  EXPECT_EQ(PendingBlobs(), 1u);

  StartServer();
  CountFiles(&blobs, &temps);
  EXPECT_EQ(temps, 0) << "the torn upload's temp file is gone";
  EXPECT_EQ(blobs, 2) << "only done.bin and the old model.bin remain";
  EXPECT_EQ(PendingBlobs(), 0u);
  auto head = client_->Send("HEAD", Target("model.bin"), Auth(), "", 10s);
  ASSERT_TRUE(head.ok());
  EXPECT_EQ(head->Header("Content-Length"), std::to_string(24 * kPiece));
  EXPECT_EQ(Download("model.bin"), old_sha);
  EXPECT_EQ(Download("done.bin"), done_sha);
  std::cout << "[ objects crash ] killed with " << kSentBeforeKill / kPiece << " of "
            << kBigBytes / kPiece << " MiB sent; after restart: " << blobs << " blobs, " << temps
            << " temp files\n";
}

// SIGKILL while part 3 of a multipart upload is arriving, with parts 1 and 2 stored and another
// multipart upload completed before. After the restart the upload is still there with parts 1
// and 2 (ListParts), the partial part 3 is gone (no temp file, no blob, no pending record), no
// object appeared; part 3 sent again and Complete make the object, and the object completed
// before the kill reads back intact.
TEST_P(ObjectsReliabilityTest, KillNineDuringAMultipartPartKeepsTheStoredPartsAndDropsThePartial) {
  StartServer();
  auto created = client_->Send("POST", "/v1/buckets", Auth(), Json{{"name", bucket_}}.dump(), 10s);
  ASSERT_TRUE(created.ok() && created->status == 201);
  const s3::BucketLocation key = NewS3Key();
  const uint64_t kPartPieces = 5;  // S3's smallest part but the last: 5 MiB

  // Sends parts first..last of `object` whole, appending their ETags.
  auto send_parts = [&](const std::string& object, const std::string& upload_id, uint64_t seed,
                        int first, int last, std::vector<std::string>* etags) {
    for (int part = first; part <= last; ++part) {
      http::ClientRequest put;
      put.method = "PUT";
      put.target = "/" + bucket_ + "/" + object + "?partNumber=" + std::to_string(part) +
                   "&uploadId=" + upload_id;
      for (uint64_t i = 0; i < kPartPieces; ++i) {
        put.body += Piece(seed, (part - 1) * kPartPieces + i, kPiece);
      }
      auto p = S3Call(key, put);
      EXPECT_TRUE(p.ok() && p->status == 200) << (p.ok() ? p->body : p.status().ToString());
      if (p.ok()) etags->push_back(p->Header("ETag"));
    }
  };
  // Starts an upload of `object` and sends parts 1..parts whole; returns the upload id.
  auto begin_upload = [&](const std::string& object, uint64_t seed, int parts,
                          std::vector<std::string>* etags) {
    http::ClientRequest create;
    create.method = "POST";
    create.target = "/" + bucket_ + "/" + object + "?uploads";
    auto r = S3Call(key, create);
    EXPECT_TRUE(r.ok() && r->status == 200) << (r.ok() ? r->body : r.status().ToString());
    std::string upload_id = r.ok() ? XmlText(r->body, "UploadId") : "";
    send_parts(object, upload_id, seed, 1, parts, etags);
    return upload_id;
  };
  auto complete = [&](const std::string& object, const std::string& upload_id,
                      const std::vector<std::string>& etags) {
    http::ClientRequest req;
    req.method = "POST";
    req.target = "/" + bucket_ + "/" + object + "?uploadId=" + upload_id;
    req.body = "<CompleteMultipartUpload>";
    for (size_t i = 0; i < etags.size(); ++i) {
      req.body += "<Part><PartNumber>" + std::to_string(i + 1) + "</PartNumber><ETag>" + etags[i] +
                  "</ETag></Part>";
    }
    req.body += "</CompleteMultipartUpload>";
    auto r = S3Call(key, req);
    EXPECT_TRUE(r.ok() && r->status == 200) << (r.ok() ? r->body : r.status().ToString());
  };

  // One upload completed before the kill.
  std::vector<std::string> done_etags;
  const std::string done_id = begin_upload("done.bin", 4, 2, &done_etags);
  ASSERT_EQ(done_etags.size(), 2u);
  complete("done.bin", done_id, done_etags);

  // The interrupted upload: parts 1 and 2 stored, part 3 held mid-way until the kill.
  std::vector<std::string> etags;
  const std::string upload_id = begin_upload("model.bin", 5, 2, &etags);
  ASSERT_EQ(etags.size(), 2u);
  KillSwitch kill_switch;
  std::thread uploader([&] {
    http::ClientRequest put;
    put.method = "PUT";
    put.target = "/" + bucket_ + "/model.bin?partNumber=3&uploadId=" + upload_id;
    put.body_size = 8 * kPiece;
    uint64_t sent = 0;
    put.body_source = [&](char* out, size_t cap) -> Result<size_t> {
      if (sent == 4 * kPiece) return kill_switch.HoldUntilKilled();
      size_t n = std::min<size_t>(cap, kPiece);
      std::string p = Piece(6, sent / kPiece, n);
      std::memcpy(out, p.data(), n);
      sent += n;
      return n;
    };
    auto client = std::move(http::Client::Create(url())).value();
    std::string path = put.target.substr(0, put.target.find('?'));
    s3::SignRequest(key, "PUT", path, put.target.substr(put.target.find('?') + 1),
                    s3::kUnsignedPayload, SystemClock::Get().Now(), &put.headers);
    auto r = client->Exchange(put);
    EXPECT_FALSE(r.ok() && r->status == 200);
  });
  kill_switch.WaitUntilHeld();
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  int blobs = 0, temps = 0;
  while (temps == 0 && std::chrono::steady_clock::now() < deadline) {
    CountFiles(&blobs, &temps);
    std::this_thread::yield();
  }
  server_.Crash();
  kill_switch.Killed();
  uploader.join();

  CountFiles(&blobs, &temps);
  EXPECT_EQ(temps, 1) << "the kill should have caught part 3 mid-way";
  EXPECT_EQ(blobs, 4) << "done.bin's two parts and model.bin's two stored parts";
  EXPECT_EQ(PendingBlobs(), 1u) << "the part being written (stored parts are not pending)";

  StartServer();
  CountFiles(&blobs, &temps);
  EXPECT_EQ(temps, 0);
  EXPECT_EQ(blobs, 4) << "done.bin's two parts and model.bin's two stored parts remain";
  EXPECT_EQ(PendingBlobs(), 0u);
  auto head = client_->Send("HEAD", Target("model.bin"), Auth(), "", 10s);
  ASSERT_TRUE(head.ok());
  EXPECT_EQ(head->status, 404);
  http::ClientRequest list;
  list.method = "GET";
  list.target = "/" + bucket_ + "/model.bin?uploadId=" + upload_id;
  auto parts = S3Call(key, list);
  ASSERT_TRUE(parts.ok());
  ASSERT_EQ(parts->status, 200) << parts->body;
  EXPECT_EQ(XmlText(parts->body, "PartNumber"), "1");
  EXPECT_EQ(parts->body.find("<PartNumber>3</PartNumber>"), std::string::npos) << parts->body;
  EXPECT_NE(parts->body.find("<PartNumber>2</PartNumber>"), std::string::npos) << parts->body;

  // Part 3 again, whole (seed 5 as parts 1 and 2), then Complete.
  send_parts("model.bin", upload_id, 5, 3, 3, &etags);
  ASSERT_EQ(etags.size(), 3u);
  complete("model.bin", upload_id, etags);
  EXPECT_EQ(Download("model.bin"), ExpectedSha(5, 3 * kPartPieces));
  CountFiles(&blobs, &temps);
  EXPECT_EQ(blobs, 5) << "done.bin's two parts and model.bin's three: nothing else";
  EXPECT_EQ(PendingBlobs(), 0u);
  EXPECT_EQ(Download("done.bin"), ExpectedSha(4, 2 * kPartPieces));
}

INSTANTIATE_TEST_SUITE_P(Backends, ObjectsReliabilityTest, ::testing::ValuesIn(StoreBackends()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace tf::testing
