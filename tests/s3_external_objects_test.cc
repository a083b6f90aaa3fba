// Objects kept in an external S3-compatible bucket (s3/s3_blob_store.h), in two services:
// a second, real tensorfleet server speaking the S3 API over HTTP (the blob store signs its
// requests with an access key made on that server, as it would for any S3-compatible service),
// and s3rver, an S3 implementation of its own (Node.js, from the npm registry;
// scripts/install-deps.sh installs it into tests/s3rver), so that the blob store is not only
// ever checked against the server it is part of. s3rver checks access key ids but not SigV4
// signatures: a wrong secret is caught by the tensorfleet peer only.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <regex>
#include <set>

#include "api/app.h"
#include "base/crypto.h"
#include "child_process.h"
#include "http/http.h"
#include "in_process_app.h"
#include "objects/blob_format.h"
#include "objects/bucket_client.h"
#include "objects/multipart.h"
#include "objects/object_service.h"
#include "objects/s3_blob_store.h"
#include "pg_test_schema.h"
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

Result<Server> StartServer(const fs::path& data_dir, const std::string& objects_url = "",
                           const std::string& store_url = "") {
  api::AppOptions o = InProcessAppOptions(data_dir);
  o.objects_url = objects_url;
  o.store_url = store_url;
  TF_ASSIGN_OR_RETURN(auto started, StartInProcessApp(o));
  return Server{std::move(started.app), std::move(started.admin_token)};
}

// A request to an S3-compatible service, path-style and signed with SigV4 as any S3 client
// signs it.
http::ClientResponse SignedCall(const s3::BucketLocation& location, const std::string& method,
                                const std::string& path, const std::string& query = "",
                                const std::string& body = "", http::Headers headers = {}) {
  s3::SignRequest(location, method, path, query, Sha256Hex(body), SystemClock::Get().Now(),
                  &headers);
  auto client = http::Client::Create(location.endpoint);
  EXPECT_TRUE(client.ok());
  if (!client.ok()) return {};
  http::ClientRequest r;
  r.method = method;
  r.target = query.empty() ? path : path + "?" + query;
  r.headers = std::move(headers);
  r.body = body;
  auto response = (*client)->Exchange(r);
  EXPECT_TRUE(response.ok()) << method << " " << r.target << ": " << response.status().ToString();
  return response.ok() ? std::move(response).value() : http::ClientResponse{};
}

constexpr const char* kS3rverScript =
    TENSORFLEET_SOURCE_DIR "/tests/s3rver/node_modules/s3rver/bin/s3rver.js";

// The external service, "tensorfleet" or "s3rver", with a bucket "external" and credentials
// for it in location_ (whose prefix is "cluster-a/").
class ExternalPeer : public ::testing::Test {
 protected:
  void StartPeer(const std::string& kind) {
    kind_ = kind;
    location_.bucket = "external";
    location_.prefix = "cluster-a/";
    if (kind == "s3rver") {
      StartS3rver();
    } else {
      StartTensorfleetPeer();
    }
    location_.host = location_.endpoint.substr(std::string("http://").size());
  }

  void StartTensorfleetPeer() {
    auto peer = StartServer(dir_.path() / "peer");
    ASSERT_TRUE(peer.ok()) << peer.status().ToString();
    peer_ = std::move(peer).value();
    ASSERT_EQ(peer_.Call("POST", "/v1/buckets", R"({"name":"external"})").status, 201);
    Reply key = peer_.Call("POST", "/v1/s3-keys", R"({"name":"blobs"})");
    ASSERT_EQ(key.status, 201) << key.body;
    Json j = Json::parse(key.body);
    location_.endpoint = peer_.app->url();
    location_.access_key_id = j["id"];
    location_.secret_access_key = j["secret"];
  }

  void StartS3rver() {
    if (!fs::exists(kS3rverScript)) {
      GTEST_SKIP() << "needs s3rver in tests/s3rver (scripts/install-deps.sh installs it)";
    }
    const fs::path data = dir_.path() / "s3rver";
    fs::create_directories(data);
    s3rver_ = std::make_unique<ChildProcess>();
    size_t at = 0;
    ASSERT_TRUE(s3rver_->Start({"/usr/bin/env", "node", kS3rverScript, "--directory", data.string(),
                                "--address", "127.0.0.1", "--port", "0", "--silent",
                                "--configure-bucket", "external"}));
    ASSERT_TRUE(
        s3rver_->WaitForOutput("listening on 127.0.0.1:", std::chrono::seconds(60), 0, &at) &&
        s3rver_->WaitForOutput("\n", std::chrono::seconds(10), at))
        << "s3rver did not start: " << s3rver_->output();
    const std::string rest = s3rver_->output().substr(at);
    location_.endpoint = "http://127.0.0.1:" + rest.substr(0, rest.find_first_not_of("0123456789"));
    // s3rver's one account.
    location_.access_key_id = "S3RVER";
    location_.secret_access_key = "S3RVER";
  }

  bool PeerChecksSignatures() const { return kind_ == "tensorfleet"; }

  std::string ObjectsUrl() const {
    return "s3://external/cluster-a?endpoint=" + location_.endpoint;
  }

  // The keys that the peer holds in its bucket, from a signed ListObjectsV2 (one page: the
  // tests keep a few).
  std::vector<std::string> PeerKeys() {
    http::ClientResponse r = SignedCall(location_, "GET", "/external", "list-type=2");
    EXPECT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.body.find("<IsTruncated>true</IsTruncated>"), std::string::npos);
    std::vector<std::string> keys;
    static const std::regex key("<Key>([^<]*)</Key>");
    for (std::sregex_iterator it(r.body.begin(), r.body.end(), key), end; it != end; ++it) {
      keys.push_back((*it)[1]);
    }
    return keys;
  }

  Result<std::unique_ptr<objects::BlobStore>> Open() {
    return objects::OpenS3BlobStore(location_, dir_.path() / "spool", SystemClock::Get());
  }

  TempDir dir_;
  std::string kind_;
  Server peer_;                           // the tensorfleet peer
  std::unique_ptr<ChildProcess> s3rver_;  // the s3rver peer
  s3::BucketLocation location_;
};

const std::vector<std::string>& PeerKinds() {
  static const std::vector<std::string> kinds = {"tensorfleet", "s3rver"};
  return kinds;
}

class ExternalObjectsTest : public ExternalPeer, public ::testing::WithParamInterface<std::string> {
 protected:
  void SetUp() override { StartPeer(GetParam()); }
};

TEST_P(ExternalObjectsTest, BlobRoundTripsThroughTheBucketWithRangesAcrossBlocks) {
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

TEST_P(ExternalObjectsTest, EmptyBlobRoundTrips) {
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

TEST_P(ExternalObjectsTest, UnsealedBlobLeavesNothingInTheBucketOrTheSpool) {
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

TEST_P(ExternalObjectsTest, DamagedObjectInTheBucketIsReportedNotReturned) {
  auto store = Open();
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  const std::string content = RandomBytes(objects::kBlockBytes + 100, 3);
  const std::string id = objects::NewBlobId();
  auto writer = (*store)->Create(id);
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE((*writer)->Append(content).ok());
  ASSERT_TRUE((*writer)->Seal().ok());

  // Flip one byte of the second block in the stored object, keeping its size.
  objects::BucketClient bucket(location_, SystemClock::Get());
  const std::string key = "blobs/" + id.substr(0, 2) + "/" + id;
  auto size = bucket.Size(key);
  ASSERT_TRUE(size.ok()) << size.status().ToString();
  auto stored = bucket.GetRange(key, 0, *size);
  ASSERT_TRUE(stored.ok());
  std::string damaged = *stored;
  damaged[objects::kBlockBytes + 7] ^= 0x20;
  size_t sent = 0;
  Status put = bucket.Put(key, damaged.size(), Sha256Hex(damaged),
                          [&](char* buffer, size_t capacity) -> Result<size_t> {
                            const size_t n = std::min(capacity, damaged.size() - sent);
                            std::memcpy(buffer, damaged.data() + sent, n);
                            sent += n;
                            return n;
                          });
  ASSERT_TRUE(put.ok()) << put.ToString();

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

TEST_P(ExternalObjectsTest, WrongKeyOrMissingBucketIsAClearErrorAtOpen) {
  s3::BucketLocation unknown = location_;
  unknown.access_key_id = "AKIANOSUCHKEY0000000";
  auto store = objects::OpenS3BlobStore(unknown, dir_.path() / "spool", SystemClock::Get());
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kPermissionDenied) << store.status().ToString();
  EXPECT_NE(store.status().message().find("s3://external/cluster-a/"), std::string::npos)
      << store.status().ToString();

  if (PeerChecksSignatures()) {
    s3::BucketLocation wrong = location_;
    wrong.secret_access_key = "not-the-secret";
    store = objects::OpenS3BlobStore(wrong, dir_.path() / "spool", SystemClock::Get());
    ASSERT_FALSE(store.ok());
    EXPECT_EQ(store.status().code(), StatusCode::kPermissionDenied) << store.status().ToString();
  }

  s3::BucketLocation missing = location_;
  missing.bucket = "no-such-bucket";
  store = objects::OpenS3BlobStore(missing, dir_.path() / "spool", SystemClock::Get());
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kNotFound) << store.status().ToString();
}

// A whole server keeps its objects' content in the peer's bucket: what is uploaded through its
// API lands there, reads back byte for byte, survives a restart, and is removed with the object.
// Content in an external bucket is read range by range, so a reader that started before the
// object was replaced or deleted must keep its blob in the bucket until it is done.
TEST_P(ExternalObjectsTest, AReaderFinishesWithTheOldContentWhenItsObjectIsReplacedOrDeleted) {
  auto blobs = Open();
  ASSERT_TRUE(blobs.ok()) << blobs.status().ToString();
  auto store = store::OpenStore(StoreUrl("sqlite", dir_));
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  objects::ObjectService objects(**store, **blobs, SystemClock::Get());
  ASSERT_TRUE(objects.CreateBucket("prj_a", "data").ok());
  auto put = [&](const std::string& key, const std::string& content) {
    auto upload = objects.BeginPut("prj_a", "data", key, {});
    ASSERT_TRUE(upload.ok()) << upload.status().ToString();
    ASSERT_TRUE((*upload)->Write(content).ok());
    ASSERT_TRUE((*upload)->Commit().ok());
  };
  auto read_rest = [](objects::ObjectReader& reader, std::string* out) {
    for (;;) {
      auto piece = reader.Next();
      ASSERT_TRUE(piece.ok()) << piece.status().ToString();
      if (piece->empty()) return;
      *out += *piece;
    }
  };
  const std::string old_content = RandomBytes(objects::kBlockBytes * 3 + 5, 31);
  put("replaced", old_content);
  put("deleted", old_content);
  ASSERT_EQ(PeerKeys().size(), 2u);

  auto replaced = objects.Open("prj_a", "data", "replaced");
  auto deleted = objects.Open("prj_a", "data", "deleted");
  ASSERT_TRUE(replaced.ok() && deleted.ok());
  std::string got_replaced, got_deleted;
  auto first = (*replaced)->Next();  // a start, as a GET under way has made
  ASSERT_TRUE(first.ok());
  got_replaced = *first;
  put("replaced", "new content");
  ASSERT_TRUE(objects.Delete("prj_a", "data", "deleted").ok());
  EXPECT_EQ(PeerKeys().size(), 3u);  // both old blobs kept while they are read, and the new one

  read_rest(**replaced, &got_replaced);
  read_rest(**deleted, &got_deleted);
  EXPECT_TRUE(got_replaced == old_content);
  EXPECT_TRUE(got_deleted == old_content);
  replaced->reset();
  deleted->reset();
  auto reclaimed = objects.ReclaimPending();
  ASSERT_TRUE(reclaimed.ok()) << reclaimed.status().ToString();
  EXPECT_EQ(*reclaimed, 2);
  EXPECT_EQ(PeerKeys().size(), 1u);  // only the new content's blob is left
  auto now = objects.Open("prj_a", "data", "replaced");
  ASSERT_TRUE(now.ok());
  std::string got_now;
  read_rest(**now, &got_now);
  EXPECT_EQ(got_now, "new content");
}

TEST_P(ExternalObjectsTest, ServerStoresObjectContentInTheExternalBucket) {
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

// Refused before the service is asked anything, so one peer is enough.
class ExternalObjectsUrlTest : public ExternalPeer {
 protected:
  void SetUp() override { StartPeer("tensorfleet"); }
};

TEST_F(ExternalObjectsUrlTest, ServerRefusesToStartWithoutCredentials) {
  unsetenv("AWS_ACCESS_KEY_ID");
  unsetenv("AWS_SECRET_ACCESS_KEY");
  auto server = StartServer(dir_.path() / "server", ObjectsUrl());
  ASSERT_FALSE(server.ok());
  EXPECT_NE(server.status().message().find("AWS_ACCESS_KEY_ID"), std::string::npos)
      << server.status().ToString();
}

// The S3 API of a server, called as any S3 client calls it: path-style, signed with SigV4 by an
// access key made on that server.
struct S3Caller {
  s3::BucketLocation location;  // the server's bucket; prefix ""

  http::ClientResponse Call(const std::string& method, const std::string& key,
                            const std::string& query = "", const std::string& body = "",
                            http::Headers headers = {}) {
    return SignedCall(location, method, location.PathOf(key), query, body, std::move(headers));
  }

  std::string Get(const std::string& key, const std::string& range = "") {
    http::Headers h;
    if (!range.empty()) h.emplace_back("Range", "bytes=" + range);
    http::ClientResponse r = Call("GET", key, "", "", h);
    EXPECT_EQ(r.status, range.empty() ? 200 : 206) << key << " " << range << ": " << r.body;
    return r.body;
  }

  std::string CreateUpload(const std::string& key) {
    http::ClientResponse r = Call("POST", key, "uploads=");
    EXPECT_EQ(r.status, 200) << r.body;
    const size_t begin = r.body.find("<UploadId>"), end = r.body.find("</UploadId>");
    EXPECT_NE(end, std::string::npos) << r.body;
    return end == std::string::npos ? "" : r.body.substr(begin + 10, end - begin - 10);
  }

  // Uploads part `number` and returns its ETag, quoted as S3 gives it.
  std::string UploadPart(const std::string& key, const std::string& upload, int number,
                         const std::string& content) {
    http::ClientResponse r =
        Call("PUT", key, "partNumber=" + std::to_string(number) + "&uploadId=" + upload, content);
    EXPECT_EQ(r.status, 200) << r.body;
    return r.Header("ETag");
  }
};

// The ETag S3 gives an object of these parts: the MD5 of their binary MD5s, "-", their number.
std::string ExpectedMultipartEtag(const std::vector<std::string>& parts) {
  std::string md5s;
  for (const auto& part : parts) {
    const std::string hex = Md5Hex(part);
    for (size_t i = 0; i < hex.size(); i += 2) {
      md5s.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
    }
  }
  return "\"" + Md5Hex(md5s) + "-" + std::to_string(parts.size()) + "\"";
}

// A whole server with its objects in the peer's bucket, on SQLite and (when the test command
// starts one) PostgreSQL in a schema of its own, driven through its S3 API. The parameter is
// (store, peer).
class ExternalMultipartTest
    : public ExternalPeer,
      public ::testing::WithParamInterface<std::tuple<std::string, std::string>> {
 protected:
  void SetUp() override {
    const std::string store = std::get<0>(GetParam());
    TF_SKIP_UNLESS_STORE_REACHABLE(store);
    StartPeer(std::get<1>(GetParam()));
    if (HasFatalFailure() || IsSkipped()) return;
    std::string store_url;
    if (store == "postgresql") {
      schema_ = std::make_unique<PgTestSchema>(TestPostgresUrl(), "tf_external_");
      store_url = schema_->url();
    }
    setenv("AWS_ACCESS_KEY_ID", location_.access_key_id.c_str(), 1);
    setenv("AWS_SECRET_ACCESS_KEY", location_.secret_access_key.c_str(), 1);
    auto server = StartServer(dir_.path() / "server", ObjectsUrl(), store_url);
    unsetenv("AWS_ACCESS_KEY_ID");
    unsetenv("AWS_SECRET_ACCESS_KEY");
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(server).value();
    ASSERT_EQ(server_.Call("POST", "/v1/buckets", R"({"name":"models"})").status, 201);
    Reply key = server_.Call("POST", "/v1/s3-keys", R"({"name":"client"})");
    ASSERT_EQ(key.status, 201) << key.body;
    const Json j = Json::parse(key.body);
    s3_.location.bucket = "models";
    s3_.location.endpoint = server_.app->url();
    s3_.location.host = s3_.location.endpoint.substr(std::string("http://").size());
    s3_.location.access_key_id = j["id"];
    s3_.location.secret_access_key = j["secret"];
  }

  void TearDown() override { server_.app.reset(); }

  std::set<std::string> PeerKeySet() {
    std::vector<std::string> keys = PeerKeys();
    return {keys.begin(), keys.end()};
  }

  std::unique_ptr<PgTestSchema> schema_;
  Server server_;
  S3Caller s3_;
};

// Part boundaries fall inside 1 MiB checksum blocks, the last part is short, and a fourth part
// is uploaded but not named in Complete.
TEST_P(ExternalMultipartTest, MultipartObjectReadsCopiesAndDeletesItsPartBlobsInTheBucket) {
  const std::vector<std::string> parts = {RandomBytes(objects::kMinPartBytes + 12345, 11),
                                          RandomBytes(objects::kMinPartBytes + 700'001, 12),
                                          RandomBytes(333'333, 13)};
  const std::string content = parts[0] + parts[1] + parts[2];
  const size_t n = content.size();
  ASSERT_NE(parts[0].size() % objects::kBlockBytes, 0u);
  ASSERT_NE((parts[0].size() + parts[1].size()) % objects::kBlockBytes, 0u);

  const std::string upload = s3_.CreateUpload("run-1/big.bin");
  ASSERT_FALSE(upload.empty());
  std::vector<std::string> etags;
  for (int i = 0; i < 3; ++i) {
    etags.push_back(s3_.UploadPart("run-1/big.bin", upload, i + 1, parts[i]));
  }
  s3_.UploadPart("run-1/big.bin", upload, 4, RandomBytes(4000, 14));
  const std::set<std::string> uploaded = PeerKeySet();
  ASSERT_EQ(uploaded.size(), 4u);  // one blob per part, none yet on the server's own disk
  EXPECT_FALSE(fs::exists(dir_.path() / "server" / "objects"));

  std::string complete = "<CompleteMultipartUpload>";
  for (int i = 0; i < 3; ++i) {
    complete += "<Part><PartNumber>" + std::to_string(i + 1) + "</PartNumber><ETag>" + etags[i] +
                "</ETag></Part>";
  }
  complete += "</CompleteMultipartUpload>";
  http::ClientResponse done = s3_.Call("POST", "run-1/big.bin", "uploadId=" + upload, complete);
  ASSERT_EQ(done.status, 200) << done.body;
  const std::string etag = ExpectedMultipartEtag(parts);
  // In XML, the ETag's quotes are escaped.
  EXPECT_NE(done.body.find("<ETag>&quot;" + etag.substr(1, etag.size() - 2) + "&quot;</ETag>"),
            std::string::npos)
      << done.body;
  // The object is made of the three named parts' blobs; the fourth part's blob is gone.
  const std::set<std::string> object_blobs = PeerKeySet();
  EXPECT_EQ(object_blobs.size(), 3u);
  for (const auto& key : object_blobs) EXPECT_TRUE(uploaded.count(key)) << key;

  EXPECT_TRUE(s3_.Get("run-1/big.bin") == content);
  for (size_t boundary : {parts[0].size(), parts[0].size() + parts[1].size()}) {
    for (size_t at : {boundary - 1, boundary}) {
      EXPECT_EQ(s3_.Get("run-1/big.bin", std::to_string(at) + "-" + std::to_string(at)),
                content.substr(at, 1))
          << "byte " << at;
    }
    const size_t from = boundary - 70'000, to = boundary + 90'000;
    EXPECT_TRUE(s3_.Get("run-1/big.bin", std::to_string(from) + "-" + std::to_string(to)) ==
                content.substr(from, to - from + 1))
        << "bytes " << from << "-" << to;
  }
  EXPECT_EQ(s3_.Get("run-1/big.bin", std::to_string(n - 1) + "-" + std::to_string(n - 1)),
            content.substr(n - 1));
  EXPECT_TRUE(s3_.Get("run-1/big.bin", "1000-" + std::to_string(n - 1001)) ==
              content.substr(1000, n - 2000));  // all three parts in one range

  http::ClientResponse head = s3_.Call("HEAD", "run-1/big.bin");
  ASSERT_EQ(head.status, 200);
  EXPECT_EQ(head.Header("Content-Length"), std::to_string(n));
  EXPECT_EQ(head.Header("ETag"), etag);

  http::ClientResponse copied =
      s3_.Call("PUT", "run-1/copy.bin", "", "", {{"x-amz-copy-source", "/models/run-1/big.bin"}});
  ASSERT_EQ(copied.status, 200) << copied.body;
  // A copy is an object of one blob, with the plain MD5 of its content as its ETag.
  EXPECT_NE(copied.body.find("<ETag>&quot;" + Md5Hex(content) + "&quot;</ETag>"), std::string::npos)
      << copied.body;
  EXPECT_TRUE(s3_.Get("run-1/copy.bin") == content);

  const std::set<std::string> before_delete = PeerKeySet();
  ASSERT_EQ(s3_.Call("DELETE", "run-1/big.bin").status, 204);
  const std::set<std::string> after_delete = PeerKeySet();
  for (const auto& key : object_blobs) EXPECT_FALSE(after_delete.count(key)) << key;
  EXPECT_EQ(after_delete.size(), before_delete.size() - 3);  // the copy's own blobs stay
  EXPECT_EQ(s3_.Call("HEAD", "run-1/big.bin").status, 404);
  EXPECT_TRUE(s3_.Get("run-1/copy.bin") == content);
  ASSERT_EQ(s3_.Call("DELETE", "run-1/copy.bin").status, 204);
  EXPECT_TRUE(PeerKeys().empty());
  EXPECT_TRUE(fs::is_empty(dir_.path() / "server" / "objects-spool" / "tmp"));
}

TEST_P(ExternalMultipartTest, AbortedUploadLeavesNothingInTheBucket) {
  const std::string upload = s3_.CreateUpload("run-1/aborted.bin");
  ASSERT_FALSE(upload.empty());
  s3_.UploadPart("run-1/aborted.bin", upload, 1, RandomBytes(objects::kMinPartBytes + 1, 21));
  s3_.UploadPart("run-1/aborted.bin", upload, 2, RandomBytes(1000, 22));
  EXPECT_EQ(PeerKeys().size(), 2u);
  ASSERT_EQ(s3_.Call("DELETE", "run-1/aborted.bin", "uploadId=" + upload).status, 204);
  EXPECT_TRUE(PeerKeys().empty());
  EXPECT_EQ(s3_.Call("GET", "run-1/aborted.bin", "uploadId=" + upload).status, 404);
  EXPECT_EQ(s3_.Call("HEAD", "run-1/aborted.bin").status, 404);
  EXPECT_TRUE(fs::is_empty(dir_.path() / "server" / "objects-spool" / "tmp"));
}

INSTANTIATE_TEST_SUITE_P(Peers, ExternalObjectsTest, ::testing::ValuesIn(PeerKinds()),
                         [](const auto& info) { return info.param; });
INSTANTIATE_TEST_SUITE_P(Backends, ExternalMultipartTest,
                         ::testing::Combine(::testing::ValuesIn(StoreBackends()),
                                            ::testing::ValuesIn(PeerKinds())),
                         [](const auto& info) {
                           return std::get<0>(info.param) + "_" + std::get<1>(info.param);
                         });

}  // namespace
}  // namespace tf::testing
