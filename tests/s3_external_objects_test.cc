// Objects kept in an external S3-compatible bucket (s3/s3_blob_store.h). The external service
// here is a second, real tensorfleet server speaking the S3 API over HTTP: the blob store signs
// its requests with an access key made on that server, exactly as it would for another
// S3-compatible service.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "api/app.h"
#include "http/http.h"
#include "http/url.h"
#include "in_process_app.h"
#include "objects/blob_format.h"
#include "s3/bucket_client.h"
#include "s3/s3_blob_store.h"
#include "store_test_env.h"

namespace tf::testing {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

std::string RandomBytes(size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>(gen());
  return s;
}

struct Reply {
  int status = 0;
  std::string body;
};

// A running server and its admin token.
struct Server {
  std::unique_ptr<api::App> app;
  std::string token;

  Reply Call(const std::string& method, const std::string& target, const std::string& body = "",
             http::Headers headers = {}) {
    auto client = http::Client::Create(app->url());
    EXPECT_TRUE(client.ok());
    headers.emplace_back("Authorization", "Bearer " + token);
    auto r = (*client)->Send(method, target, headers, body, std::chrono::seconds(60));
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (!r.ok()) return {};
    return {r->status, r->body};
  }
};

Result<Server> StartServer(const fs::path& data_dir, const std::string& objects_url = "") {
  api::AppOptions o = InProcessAppOptions(data_dir);
  o.objects_url = objects_url;
  TF_ASSIGN_OR_RETURN(auto started, StartInProcessApp(o));
  return Server{std::move(started.app), std::move(started.admin_token)};
}

class ExternalObjectsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto peer = StartServer(dir_.path() / "peer");
    ASSERT_TRUE(peer.ok()) << peer.status().ToString();
    peer_ = std::move(peer).value();
    ASSERT_EQ(peer_.Call("POST", "/v1/buckets", R"({"name":"external"})").status, 201);
    Reply key = peer_.Call("POST", "/v1/s3-keys", R"({"name":"blobs"})");
    ASSERT_EQ(key.status, 201) << key.body;
    Json j = Json::parse(key.body);
    location_.bucket = "external";
    location_.prefix = "cluster-a/";
    location_.endpoint = peer_.app->url();
    location_.host = location_.endpoint.substr(std::string("http://").size());
    location_.access_key_id = j["id"];
    location_.secret_access_key = j["secret"];
  }

  std::string ObjectsUrl() const {
    return "s3://external/cluster-a?endpoint=" + location_.endpoint;
  }

  // The keys that the peer holds in its bucket, listed through its native API.
  std::vector<std::string> PeerKeys() {
    Reply r = peer_.Call("GET", "/v1/buckets/external/objects");
    EXPECT_EQ(r.status, 200) << r.body;
    std::vector<std::string> keys;
    const Json listing = Json::parse(r.body);
    for (const auto& o : listing["objects"]) keys.push_back(o["key"]);
    return keys;
  }

  Result<std::unique_ptr<objects::BlobStore>> Open() {
    return s3::OpenS3BlobStore(location_, dir_.path() / "spool", SystemClock::Get());
  }

  TempDir dir_;
  Server peer_;
  s3::BucketLocation location_;
};

TEST_F(ExternalObjectsTest, BlobRoundTripsThroughTheBucketWithRangesAcrossBlocks) {
  auto store = Open();
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  const std::string content = RandomBytes(objects::kBlockBytes * 2 + 12345, 1);
  const std::string id = objects::NewBlobId();
  auto writer = (*store)->Create(id);
  ASSERT_TRUE(writer.ok()) << writer.status().ToString();
  for (size_t at = 0; at < content.size(); at += 300'000) {
    ASSERT_TRUE((*writer)->Append(std::string_view(content).substr(at, 300'000)).ok());
  }
  ASSERT_TRUE((*writer)->Seal().ok());
  EXPECT_EQ((*writer)->size(), content.size());
  writer->reset();
  EXPECT_TRUE(fs::is_empty(dir_.path() / "spool" / "tmp"));

  EXPECT_EQ(PeerKeys(), std::vector<std::string>{"cluster-a/blobs/" + id.substr(0, 2) + "/" + id});
  auto reader = (*store)->Open(id);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  EXPECT_EQ((*reader)->size(), content.size());
  std::string got;
  ASSERT_TRUE((*reader)->ReadAt(0, content.size(), &got).ok());
  EXPECT_TRUE(got == content);
  // A range that starts inside the first block and ends inside the last.
  ASSERT_TRUE((*reader)->ReadAt(1000, objects::kBlockBytes * 2, &got).ok());
  EXPECT_TRUE(got == content.substr(1000, objects::kBlockBytes * 2));
  EXPECT_EQ((*reader)->ReadAt(content.size() - 1, 2, &got).code(), StatusCode::kInvalidArgument);

  ASSERT_TRUE((*store)->Remove(id).ok());
  EXPECT_TRUE(PeerKeys().empty());
  EXPECT_EQ((*store)->Open(id).status().code(), StatusCode::kNotFound);
  EXPECT_TRUE((*store)->Remove(id).ok());  // removing a missing blob is fine
}

TEST_F(ExternalObjectsTest, EmptyBlobRoundTrips) {
  auto store = Open();
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  const std::string id = objects::NewBlobId();
  auto writer = (*store)->Create(id);
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE((*writer)->Seal().ok());
  auto reader = (*store)->Open(id);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  EXPECT_EQ((*reader)->size(), 0u);
}

TEST_F(ExternalObjectsTest, UnsealedBlobLeavesNothingInTheBucketOrTheSpool) {
  auto store = Open();
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  const std::string id = objects::NewBlobId();
  {
    auto writer = (*store)->Create(id);
    ASSERT_TRUE(writer.ok());
    ASSERT_TRUE((*writer)->Append(RandomBytes(5000, 2)).ok());
  }
  EXPECT_TRUE(PeerKeys().empty());
  EXPECT_TRUE(fs::is_empty(dir_.path() / "spool" / "tmp"));
  EXPECT_EQ((*store)->Open(id).status().code(), StatusCode::kNotFound);

  // What a crash leaves in the spool is removed at the next start.
  std::ofstream(dir_.path() / "spool" / "tmp" / objects::NewBlobId()) << "partial";
  auto removed = (*store)->RemoveUnsealed();
  ASSERT_TRUE(removed.ok());
  EXPECT_EQ(*removed, 1);
  EXPECT_TRUE(fs::is_empty(dir_.path() / "spool" / "tmp"));
}

TEST_F(ExternalObjectsTest, DamagedObjectInTheBucketIsReportedNotReturned) {
  auto store = Open();
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  const std::string content = RandomBytes(objects::kBlockBytes + 100, 3);
  const std::string id = objects::NewBlobId();
  auto writer = (*store)->Create(id);
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE((*writer)->Append(content).ok());
  ASSERT_TRUE((*writer)->Seal().ok());

  // Flip one byte of the second block in the stored object, keeping its size.
  s3::BucketClient bucket(location_, SystemClock::Get());
  const std::string key = "blobs/" + id.substr(0, 2) + "/" + id;
  auto size = bucket.Size(key);
  ASSERT_TRUE(size.ok()) << size.status().ToString();
  auto stored = bucket.GetRange(key, 0, *size);
  ASSERT_TRUE(stored.ok());
  std::string damaged = *stored;
  damaged[objects::kBlockBytes + 7] ^= 0x20;
  auto put = peer_.Call("PUT", "/v1/buckets/external/objects/" + http::PercentEncode(
                                   "cluster-a/" + key), damaged);
  ASSERT_EQ(put.status, 200) << put.body;

  auto reader = (*store)->Open(id);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  std::string got;
  ASSERT_TRUE((*reader)->ReadAt(0, 100, &got).ok());  // the first block is intact
  EXPECT_EQ(got, content.substr(0, 100));
  Status s = (*reader)->ReadAt(objects::kBlockBytes, 100, &got);
  EXPECT_EQ(s.code(), StatusCode::kInternal);
  EXPECT_NE(s.message().find("block 1 does not match its checksum"), std::string::npos)
      << s.ToString();
}

TEST_F(ExternalObjectsTest, WrongSecretOrMissingBucketIsAClearErrorAtOpen) {
  s3::BucketLocation wrong = location_;
  wrong.secret_access_key = "not-the-secret";
  auto store = s3::OpenS3BlobStore(wrong, dir_.path() / "spool", SystemClock::Get());
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kPermissionDenied) << store.status().ToString();
  EXPECT_NE(store.status().message().find("s3://external/cluster-a/"), std::string::npos)
      << store.status().ToString();

  s3::BucketLocation missing = location_;
  missing.bucket = "no-such-bucket";
  store = s3::OpenS3BlobStore(missing, dir_.path() / "spool", SystemClock::Get());
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kNotFound) << store.status().ToString();
}

// A whole server keeps its objects' content in the peer's bucket: what is uploaded through its
// API lands there, reads back byte for byte, survives a restart, and is removed with the object.
TEST_F(ExternalObjectsTest, ServerStoresObjectContentInTheExternalBucket) {
  setenv("AWS_ACCESS_KEY_ID", location_.access_key_id.c_str(), 1);
  setenv("AWS_SECRET_ACCESS_KEY", location_.secret_access_key.c_str(), 1);
  const fs::path data = dir_.path() / "server";
  auto server = StartServer(data, ObjectsUrl());
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  ASSERT_EQ(server->Call("POST", "/v1/buckets", R"({"name":"models"})").status, 201);
  const std::string content = RandomBytes(3 * 1024 * 1024 + 17, 4);
  Reply put = server->Call("PUT", "/v1/buckets/models/objects/run-1/model.bin", content);
  ASSERT_EQ(put.status, 200) << put.body;
  EXPECT_FALSE(fs::exists(data / "objects"));  // nothing on the server's own disk
  ASSERT_EQ(PeerKeys().size(), 1u);
  EXPECT_EQ(PeerKeys()[0].rfind("cluster-a/blobs/", 0), 0u);

  server->app.reset();
  server = StartServer(data, ObjectsUrl());
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  Reply got = server->Call("GET", "/v1/buckets/models/objects/run-1/model.bin");
  ASSERT_EQ(got.status, 200);
  EXPECT_TRUE(got.body == content);
  Reply range = server->Call("GET", "/v1/buckets/models/objects/run-1/model.bin", "",
                             {{"Range", "bytes=1048570-1048589"}});
  ASSERT_EQ(range.status, 206);
  EXPECT_EQ(range.body, content.substr(1048570, 20));

  ASSERT_EQ(server->Call("DELETE", "/v1/buckets/models/objects/run-1/model.bin").status, 200);
  EXPECT_TRUE(PeerKeys().empty());
  unsetenv("AWS_ACCESS_KEY_ID");
  unsetenv("AWS_SECRET_ACCESS_KEY");
}

TEST_F(ExternalObjectsTest, ServerRefusesToStartWithABadObjectsUrl) {
  unsetenv("AWS_ACCESS_KEY_ID");
  unsetenv("AWS_SECRET_ACCESS_KEY");
  auto server = StartServer(dir_.path() / "server", ObjectsUrl());
  ASSERT_FALSE(server.ok());
  EXPECT_NE(server.status().message().find("AWS_ACCESS_KEY_ID"), std::string::npos)
      << server.status().ToString();
}

}  // namespace
}  // namespace tf::testing
