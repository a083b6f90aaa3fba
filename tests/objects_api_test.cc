// The native object API over real HTTP against an in-process App: buckets, object round trips
// with path-like keys, ranges, listings, project isolation, auth before any of an upload's body,
// and damaged content.
#include <filesystem>
#include <fstream>

#include "api_test_util.h"
#include "base/crypto.h"
#include "http/url.h"

namespace tf::testing {
namespace {

namespace fs = std::filesystem;

class ObjectsApiTest : public ApiFixture {
 protected:
  void SetUp() override {
    ApiFixture::SetUp();
    ASSERT_EQ(Call("POST", "/v1/buckets", Json{{"name", "data"}}).status, 201);
  }

  static std::string ObjectPath(const std::string& key, const std::string& bucket = "data") {
    return "/v1/buckets/" + bucket + "/objects/" + http::PercentEncode(key);
  }

  http::ClientResponse Raw(const std::string& method, const std::string& target,
                           const std::string& body = "", http::Headers headers = {},
                           const std::string& token = "") {
    headers.emplace_back("Authorization", "Bearer " + (token.empty() ? admin_token_ : token));
    auto r = (*http::Client::Create(app_->url()))
                 ->Send(method, target, headers, body, std::chrono::seconds(30));
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : http::ClientResponse{};
  }

  static std::string Content(size_t n) {
    std::string s(n, '\0');
    for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 131) ^ (i >> 9));
    return s;
  }
};

// The data directory is its owner's alone, and so are the database (S3 secrets, running jobs'
// tokens) and the objects' content.
TEST_F(ObjectsApiTest, TheDataDirectoryTheDatabaseAndTheObjectsAreTheOwnersOnly) {
  ASSERT_EQ(Raw("PUT", ObjectPath("secret.txt"), Content(100'000)).status, 200);
  auto mode = [](const fs::path& p) { return fs::status(p).permissions() & fs::perms::all; };
  EXPECT_EQ(mode(dir_.path()), fs::perms::owner_all);
  EXPECT_EQ(mode(dir_.path() / "tensorfleet.db"), fs::perms::owner_read | fs::perms::owner_write);
  // Not even the blobs' names to jobs passing through the data directory.
  EXPECT_EQ(mode(dir_.path() / "objects"), fs::perms::owner_all);
  int blobs = 0;
  for (const auto& entry : fs::recursive_directory_iterator(dir_.path() / "objects")) {
    if (!entry.is_regular_file()) continue;
    ++blobs;
    EXPECT_EQ(mode(entry.path()), fs::perms::owner_read | fs::perms::owner_write) << entry.path();
  }
  EXPECT_GE(blobs, 1);
}

TEST_F(ObjectsApiTest, PutGetHeadDeleteWithPathLikeKeys) {
  for (const std::string key : {"a/b/c.txt", "../../etc/passwd", "/abs", "dir/", "sp ace?#%"}) {
    SCOPED_TRACE(key);
    auto put = Raw("PUT", ObjectPath(key), "content of " + key,
                   {{"Content-Type", "text/plain"}, {"x-tf-meta-owner", "ml"}});
    ASSERT_EQ(put.status, 200) << put.body;
    auto info = Json::parse(put.body);
    EXPECT_EQ(info["key"], key);
    EXPECT_EQ(info["etag"], Md5Hex("content of " + key));
    EXPECT_EQ(put.Header("ETag"), "\"" + Md5Hex("content of " + key) + "\"");

    auto got = Raw("GET", ObjectPath(key));
    EXPECT_EQ(got.status, 200);
    EXPECT_EQ(got.body, "content of " + key);
    EXPECT_EQ(got.Header("Content-Type"), "text/plain");
    EXPECT_EQ(got.Header("x-tf-meta-owner"), "ml");
    EXPECT_EQ(got.Header("x-tf-checksum-sha256"), Sha256Hex("content of " + key));

    auto head = Raw("HEAD", ObjectPath(key));
    EXPECT_EQ(head.status, 200);
    EXPECT_EQ(head.Header("Content-Length"), std::to_string(("content of " + key).size()));
    EXPECT_TRUE(head.body.empty());
  }
  // No file anywhere is named after a key.
  EXPECT_FALSE(fs::exists(dir_.path() / "etc"));
  EXPECT_FALSE(fs::exists(dir_.path().parent_path().parent_path() / "etc" / "passwd.tf"));
  EXPECT_EQ(Raw("DELETE", ObjectPath("a/b/c.txt")).status, 200);
  EXPECT_EQ(Raw("GET", ObjectPath("a/b/c.txt")).status, 404);
  EXPECT_EQ(Raw("DELETE", ObjectPath("a/b/c.txt")).status, 404);
  // NUL, bad UTF-8 and over-long keys are refused.
  EXPECT_EQ(Raw("PUT", "/v1/buckets/data/objects/a%00b", "x").status, 400);
  EXPECT_EQ(Raw("PUT", "/v1/buckets/data/objects/a%FFb", "x").status, 400);
  EXPECT_EQ(Raw("PUT", ObjectPath(std::string(1025, 'k')), "x").status, 400);
  EXPECT_EQ(Raw("PUT", ObjectPath(std::string(1024, 'k')), "x").status, 200);
}

// PUT with x-tf-copy-source and no body copies on the server: the content (several blocks),
// content type and metadata, under keys that need percent-encoding, into another bucket and
// onto itself; a missing source, a body, and a malformed source are refused.
TEST_F(ObjectsApiTest, CopiesAreMadeOnTheServer) {
  ASSERT_EQ(Call("POST", "/v1/buckets", Json{{"name", "other"}}).status, 201);
  const std::string content = Content(3 * 1024 * 1024 + 17);
  ASSERT_EQ(Raw("PUT", ObjectPath("src/a b?#.bin"), content,
                {{"Content-Type", "application/x-model"}, {"x-tf-meta-step", "100"}})
                .status,
            200);
  const std::string source = "data/" + http::PercentEncode("src/a b?#.bin");
  for (const auto& [bucket, key] :
       {std::pair{"other", "copied/m.bin"}, std::pair{"data", "src/a b?#.bin"}}) {
    SCOPED_TRACE(std::string(bucket) + "/" + key);
    auto copy = Raw("PUT", ObjectPath(key, bucket), "", {{"x-tf-copy-source", source}});
    ASSERT_EQ(copy.status, 200) << copy.body;
    Json info = Json::parse(copy.body);
    EXPECT_EQ(info["size"], content.size());
    EXPECT_EQ(info["sha256"], Sha256Hex(content));
    EXPECT_EQ(info["etag"], Md5Hex(content));
    auto got = Raw("GET", ObjectPath(key, bucket));
    EXPECT_EQ(got.status, 200);
    EXPECT_TRUE(got.body == content);
    EXPECT_EQ(got.Header("Content-Type"), "application/x-model");
    EXPECT_EQ(got.Header("x-tf-meta-step"), "100");
  }
  auto missing = Raw("PUT", ObjectPath("x"), "", {{"x-tf-copy-source", "data/nope"}});
  EXPECT_EQ(missing.status, 404) << missing.body;
  EXPECT_NE(missing.body.find("copying data/nope"), std::string::npos) << missing.body;
  EXPECT_EQ(Raw("PUT", ObjectPath("x"), "", {{"x-tf-copy-source", "nobucket/k"}}).status, 404);
  auto with_body = Raw("PUT", ObjectPath("x"), "content", {{"x-tf-copy-source", source}});
  EXPECT_EQ(with_body.status, 400);
  EXPECT_NE(with_body.body.find("takes no body"), std::string::npos) << with_body.body;
  for (const char* bad : {"no-slash", "/key", "data/"}) {
    auto malformed = Raw("PUT", ObjectPath("x"), "", {{"x-tf-copy-source", bad}});
    EXPECT_EQ(malformed.status, 400) << bad;
    EXPECT_NE(malformed.body.find("must be BUCKET/KEY"), std::string::npos) << malformed.body;
  }
  auto with_metadata =
      Raw("PUT", ObjectPath("x"), "", {{"x-tf-copy-source", source}, {"x-tf-meta-step", "200"}});
  EXPECT_EQ(with_metadata.status, 400);
  EXPECT_NE(with_metadata.body.find("keeps the source's metadata"), std::string::npos)
      << with_metadata.body;
  EXPECT_EQ(Raw("GET", ObjectPath("x")).status, 404);  // nothing was made of any of them
}

TEST_F(ObjectsApiTest, LargeObjectsStreamWithRangesAndChecksums) {
  std::string content = Content(3 * 1024 * 1024 + 17);
  auto put =
      Raw("PUT", ObjectPath("big.bin"), content, {{"x-tf-checksum-sha256", Sha256Hex(content)}});
  ASSERT_EQ(put.status, 200) << put.body;
  auto got = Raw("GET", ObjectPath("big.bin"));
  EXPECT_EQ(got.status, 200);
  EXPECT_EQ(got.body.size(), content.size());
  EXPECT_TRUE(got.body == content);
  EXPECT_EQ(got.Header("Content-Length"), std::to_string(content.size()));

  auto part = Raw("GET", ObjectPath("big.bin"), "", {{"Range", "bytes=1048570-1048589"}});
  EXPECT_EQ(part.status, 206);
  EXPECT_EQ(part.body, content.substr(1048570, 20));
  EXPECT_EQ(part.Header("Content-Range"),
            "bytes 1048570-1048589/" + std::to_string(content.size()));
  auto tail = Raw("GET", ObjectPath("big.bin"), "", {{"Range", "bytes=-5"}});
  EXPECT_EQ(tail.body, content.substr(content.size() - 5));
  auto beyond = Raw("GET", ObjectPath("big.bin"), "", {{"Range", "bytes=99999999-"}});
  EXPECT_EQ(beyond.status, 416);
  EXPECT_EQ(beyond.Header("Content-Range"), "bytes */" + std::to_string(content.size()));

  auto wrong =
      Raw("PUT", ObjectPath("other.bin"), content, {{"x-tf-checksum-sha256", Sha256Hex("not it")}});
  EXPECT_EQ(wrong.status, 400) << wrong.body;
  EXPECT_EQ(Raw("HEAD", ObjectPath("other.bin")).status, 404);
}

TEST_F(ObjectsApiTest, ListingsGroupByDelimiterAndPage) {
  for (const char* key : {"a.txt", "logs/1", "logs/2", "models/x/1", "z"}) {
    ASSERT_EQ(Raw("PUT", ObjectPath(key), "x").status, 200);
  }
  auto top = Call("GET", "/v1/buckets/data/objects?delimiter=/");
  ASSERT_EQ(top.status, 200) << top.body.dump();
  EXPECT_EQ(top.body["common_prefixes"], Json({"logs/", "models/"}));
  ASSERT_EQ(top.body["objects"].size(), 2u);
  EXPECT_EQ(top.body["objects"][1]["key"], "z");

  auto page = Call("GET", "/v1/buckets/data/objects?prefix=logs/&limit=1");
  EXPECT_EQ(page.body["objects"][0]["key"], "logs/1");
  EXPECT_EQ(page.body["truncated"], true);
  auto next =
      Call("GET", "/v1/buckets/data/objects?prefix=logs/&limit=1&start_after=" +
                      http::PercentEncode(page.body["next_start_after"].get<std::string>()));
  EXPECT_EQ(next.body["objects"][0]["key"], "logs/2");
  EXPECT_EQ(next.body["truncated"], false);
  EXPECT_EQ(Call("GET", "/v1/buckets/data/objects?limit=0").status, 400);
  EXPECT_EQ(Call("GET", "/v1/buckets/nope/objects").status, 404);
}

TEST_F(ObjectsApiTest, BucketsAreScopedToTheTokensProject) {
  ASSERT_EQ(Raw("PUT", ObjectPath("secret"), "for default only").status, 200);
  ASSERT_EQ(Call("POST", "/v1/projects", Json{{"name", "team-b"}}).status, 201);
  auto issued = Call("POST", "/v1/tokens", Json{{"name", "bob"}, {"project", "team-b"}});
  std::string bob = issued.body["secret"];

  EXPECT_EQ(Call("GET", "/v1/buckets", "", bob).body["buckets"].size(), 0u);
  EXPECT_EQ(Raw("GET", ObjectPath("secret"), "", {}, bob).status, 404);
  EXPECT_EQ(Raw("PUT", ObjectPath("x"), "y", {}, bob).status, 404);
  EXPECT_EQ(Call("POST", "/v1/buckets", R"({"name":"data"})", bob).status, 201);  // its own
  EXPECT_EQ(Raw("GET", ObjectPath("secret"), "", {}, bob).status, 404);

  auto list = Call("GET", "/v1/buckets");
  ASSERT_EQ(list.body["buckets"].size(), 1u);
  EXPECT_EQ(Call("POST", "/v1/buckets", Json{{"name", "data"}}).status, 409);
  EXPECT_EQ(Call("POST", "/v1/buckets", Json{{"name", "No_Caps"}}).status, 400);
  EXPECT_EQ(Call("DELETE", "/v1/buckets/data").status, 412);  // not empty
  EXPECT_EQ(Raw("DELETE", ObjectPath("secret")).status, 200);
  EXPECT_EQ(Call("DELETE", "/v1/buckets/data").status, 200);
  EXPECT_EQ(Call("GET", "/v1/buckets/data").status, 404);
}

TEST_F(ObjectsApiTest, UploadsAreRefusedBeforeTheirBodyWithoutAToken) {
  http::ClientRequest req;
  req.method = "PUT";
  req.target = ObjectPath("nope");
  req.body_size = 64 << 20;
  bool asked = false;
  req.body_source = [&](char*, size_t) -> Result<size_t> {
    asked = true;
    return size_t{0};
  };
  auto r = (*http::Client::Create(app_->url()))->Exchange(req);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 401);
  EXPECT_FALSE(asked);
}

TEST_F(ObjectsApiTest, DamagedContentIsNeverServed) {
  std::string content = Content(2 * 1024 * 1024 + 3);
  ASSERT_EQ(Raw("PUT", ObjectPath("small"), "tiny").status, 200);
  ASSERT_EQ(Raw("PUT", ObjectPath("large"), content).status, 200);
  // Flip one byte in every blob file.
  for (const auto& e : fs::recursive_directory_iterator(dir_.path() / "objects")) {
    if (!e.is_regular_file() || e.path().filename().string().size() != 32) continue;
    std::fstream f(e.path(), std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(2);
    char c = static_cast<char>(f.get());
    f.seekp(2);
    f.put(static_cast<char>(c ^ 1));
  }
  auto small = Raw("GET", ObjectPath("small"));
  EXPECT_EQ(small.status, 500);
  EXPECT_NE(small.body.find("corrupt"), std::string::npos) << small.body;
  // The large one was already answering when the damage showed: the connection is cut.
  auto client = std::move(http::Client::Create(app_->url())).value();
  auto large =
      client->Send("GET", ObjectPath("large"), {{"Authorization", "Bearer " + admin_token_}}, "",
                   std::chrono::seconds(30));
  EXPECT_FALSE(large.ok() && large->status == 200 && large->body.size() == content.size());
  EXPECT_EQ(Raw("HEAD", ObjectPath("large")).status, 200);
  // A copy reads the content too: refused, and nothing of it is made.
  auto copy = Raw("PUT", ObjectPath("copy"), "", {{"x-tf-copy-source", "data/large"}});
  EXPECT_EQ(copy.status, 500) << copy.body;
  EXPECT_NE(copy.body.find("corrupt"), std::string::npos) << copy.body;
  EXPECT_EQ(Raw("HEAD", ObjectPath("copy")).status, 404);
}

// GETs larger than a piece are checked where they lie and sent with sendfile, a piece at a time
// (api/object_stream.h): ranges that start and end inside blocks, and that cross from one piece
// to the next, come back exact.
TEST_F(ObjectsApiTest, RangesAcrossSendPiecesAreExact) {
  std::string content = Content(17 * 1024 * 1024 + 5);
  ASSERT_EQ(Raw("PUT", ObjectPath("big"), content).status, 200);
  EXPECT_TRUE(Raw("GET", ObjectPath("big")).body == content);
  for (auto [first, last] : {std::pair<uint64_t, uint64_t>{1000, 2500000},
                             {5, 9 * 1024 * 1024 + 7},
                             {8 * 1024 * 1024 - 1, 16 * 1024 * 1024 + 1},
                             {3 * 1024 * 1024, 17 * 1024 * 1024 + 4}}) {
    SCOPED_TRACE(std::to_string(first) + "-" + std::to_string(last));
    auto part = Raw("GET", ObjectPath("big"), "",
                    {{"Range", "bytes=" + std::to_string(first) + "-" + std::to_string(last)}});
    EXPECT_EQ(part.status, 206);
    EXPECT_TRUE(part.body == content.substr(first, last - first + 1));
  }
}

// Damage past the first piece of a large GET: what was sent before it is exact, and the
// response ends there, cut, before any byte of the damaged block.
TEST_F(ObjectsApiTest, DamageFoundMidwayCutsTheDownloadBeforeTheBadBlock) {
  std::string content = Content(size_t{12} * 1024 * 1024);
  ASSERT_EQ(Raw("PUT", ObjectPath("large"), content).status, 200);
  const uint64_t damaged = 10 * 1024 * 1024 + 77;  // in block 10, in the second piece of 8 MiB
  for (const auto& e : fs::recursive_directory_iterator(dir_.path() / "objects")) {
    if (!e.is_regular_file() || e.path().filename().string().size() != 32) continue;
    std::fstream f(e.path(), std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(static_cast<std::streamoff>(damaged));
    char c = static_cast<char>(f.get());
    f.seekp(static_cast<std::streamoff>(damaged));
    f.put(static_cast<char>(c ^ 1));
  }
  std::string got;
  http::ClientRequest req;
  req.target = ObjectPath("large");
  req.headers.emplace_back("Authorization", "Bearer " + admin_token_);
  req.on_head = [](const http::ClientResponse&) { return true; };
  req.on_chunk = [&](std::string_view piece) {
    got += piece;
    return true;
  };
  auto r = (*http::Client::Create(app_->url()))->Exchange(req);
  EXPECT_FALSE(r.ok()) << "the download should have been cut";
  EXPECT_LE(got.size(), damaged / (size_t{1024} * 1024) * (size_t{1024} * 1024));
  EXPECT_GT(got.size(), 0u);
  EXPECT_TRUE(got == content.substr(0, got.size()));
}

}  // namespace
}  // namespace tf::testing
