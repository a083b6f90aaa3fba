// Signing requests to an external S3-compatible service, and parsing where it is.
#include <gtest/gtest.h>

#include <map>

#include "s3/request_signer.h"
#include "s3/sigv4.h"

namespace tf::s3 {
namespace {

EnvLookup Env(std::map<std::string, std::string> vars) {
  return [vars](const char* name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

const EnvLookup kCredentials =
    Env({{"AWS_ACCESS_KEY_ID", "AKID"}, {"AWS_SECRET_ACCESS_KEY", "secret"}});

// AWS's published example (GET /test.txt, Range bytes=0-9, 24 May 2013) gives this signature.
TEST(RequestSignerTest, SignsAwsExampleGetObject) {
  BucketLocation loc;
  loc.host = "examplebucket.s3.amazonaws.com";
  loc.region = "us-east-1";
  loc.access_key_id = "AKIAIOSFODNN7EXAMPLE";
  loc.secret_access_key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
  auto now = ParseAmzDate("20130524T000000Z");
  ASSERT_TRUE(now.ok());
  http::Headers headers = {{"Range", "bytes=0-9"}};
  SignRequest(loc, "GET", "/test.txt", "", kEmptySha256, *now, &headers);
  EXPECT_EQ(http::FindHeader(headers, "Host"), "examplebucket.s3.amazonaws.com");
  EXPECT_EQ(http::FindHeader(headers, "x-amz-date"), "20130524T000000Z");
  EXPECT_EQ(http::FindHeader(headers, "Authorization"),
            "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
            "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, "
            "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
}

TEST(RequestSignerTest, LeavesOtherHeadersUnsigned) {
  BucketLocation loc;
  loc.host = "127.0.0.1:9000";
  loc.access_key_id = "AKID";
  loc.secret_access_key = "secret";
  http::Headers headers = {{"Content-Type", "application/octet-stream"}};
  SignRequest(loc, "PUT", "/b/k", "", kEmptySha256, 0, &headers);
  EXPECT_NE(http::FindHeader(headers, "Authorization")
                .find("SignedHeaders=host;x-amz-content-sha256;x-amz-date,"),
            std::string::npos);
}

TEST(BucketLocationTest, ParsesBucketPrefixEndpointAndRegion) {
  auto loc = ParseBucketLocation(
      "s3://my-bucket/team/ckpt?endpoint=http://10.0.0.5:9000/&region=eu-west-1", kCredentials);
  ASSERT_TRUE(loc.ok()) << loc.status().ToString();
  EXPECT_EQ(loc->bucket, "my-bucket");
  EXPECT_EQ(loc->prefix, "team/ckpt/");
  EXPECT_EQ(loc->endpoint, "http://10.0.0.5:9000");
  EXPECT_EQ(loc->host, "10.0.0.5:9000");
  EXPECT_EQ(loc->region, "eu-west-1");
  EXPECT_EQ(loc->access_key_id, "AKID");
  EXPECT_EQ(loc->secret_access_key, "secret");
  EXPECT_EQ(loc->PathOf("blobs/ab/x y"), "/my-bucket/team/ckpt/blobs/ab/x%20y");
}

TEST(BucketLocationTest, DefaultsToNoPrefixAndUsEast1) {
  auto loc = ParseBucketLocation("s3://bkt?endpoint=http://h:1", kCredentials);
  ASSERT_TRUE(loc.ok()) << loc.status().ToString();
  EXPECT_EQ(loc->prefix, "");
  EXPECT_EQ(loc->region, "us-east-1");
  EXPECT_EQ(loc->PathOf("k"), "/bkt/k");
}

TEST(BucketLocationTest, RefusesBadUrlsSayingWhy) {
  struct Case {
    std::string url, expect;
  };
  for (const Case& c : std::vector<Case>{
           {"http://bkt?endpoint=http://h:1", "must start with s3://"},
           {"s3://Bad_Bucket?endpoint=http://h:1", "is not a bucket name"},
           {"s3://bkt", "needs ?endpoint="},
           {"s3://bkt?endpoint=https://s3.amazonaws.com", "https endpoints are not supported"},
           {"s3://bkt?endpoint=ftp://h", "must be http://HOST[:PORT]"},
           {"s3://bkt?endpoint=http://h:1/path", "must be http://HOST[:PORT]"},
           {"s3://bkt?endpoint=http://h:1&colour=red", "unknown parameter 'colour'"},
       }) {
    auto loc = ParseBucketLocation(c.url, kCredentials);
    ASSERT_FALSE(loc.ok()) << c.url;
    EXPECT_EQ(loc.status().code(), StatusCode::kInvalidArgument) << c.url;
    EXPECT_NE(loc.status().message().find(c.expect), std::string::npos)
        << c.url << ": " << loc.status().message();
  }
}

TEST(BucketLocationTest, NeedsCredentialsFromTheEnvironment) {
  auto loc =
      ParseBucketLocation("s3://bkt?endpoint=http://h:1", Env({{"AWS_ACCESS_KEY_ID", "AKID"}}));
  ASSERT_FALSE(loc.ok());
  EXPECT_NE(loc.status().message().find("AWS_SECRET_ACCESS_KEY"), std::string::npos);
}

}  // namespace
}  // namespace tf::s3
