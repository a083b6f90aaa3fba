// S3's two ways of naming a bucket: in the path, always, and in the Host under the server's
// domain (--s3-domain), with the port, case and a final dot of the Host left out.
#include <gtest/gtest.h>

#include "api/s3/addressing.h"

namespace tf::api {
namespace {

http::Request Head(const std::string& method, const std::string& path,
                   const std::string& host = "") {
  http::Request r;
  r.method = method;
  r.path = path;
  if (!host.empty()) r.headers.emplace_back("Host", host);
  return r;
}

std::string SplitOf(const Addressing& a, const http::Request& head) {
  std::string bucket, key;
  a.Split(head, &bucket, &key);
  return bucket + "|" + key;
}

TEST(AddressingTest, PathStyleAlwaysAndTheHostOnlyUnderTheDomain) {
  const Addressing plain(""), hosted("s3.example.com");
  for (const Addressing* a : {&plain, &hosted}) {
    EXPECT_EQ(SplitOf(*a, Head("GET", "/")), "|");
    EXPECT_EQ(SplitOf(*a, Head("GET", "/data")), "data|");
    EXPECT_EQ(SplitOf(*a, Head("GET", "/data/")), "data|");
    EXPECT_EQ(SplitOf(*a, Head("GET", "/data/a/b/../c.txt")), "data|a/b/../c.txt");
    EXPECT_EQ(SplitOf(*a, Head("GET", "/data/k", "127.0.0.1:8470")), "data|k");
  }
  // Without a domain the Host is never read.
  EXPECT_EQ(SplitOf(plain, Head("GET", "/k", "data.s3.example.com")), "k|");
  EXPECT_EQ(plain.HostBucket(Head("GET", "/k", "data.s3.example.com")), "");

  EXPECT_EQ(SplitOf(hosted, Head("GET", "/dir/k", "data.s3.example.com:8470")), "data|dir/k");
  EXPECT_EQ(SplitOf(hosted, Head("GET", "/", "data.s3.example.com")), "data|");
  EXPECT_EQ(SplitOf(hosted, Head("GET", "", "data.s3.example.com")), "data|");
  EXPECT_EQ(hosted.HostBucket(Head("GET", "/", "Data.S3.Example.COM")), "data");
  EXPECT_EQ(hosted.HostBucket(Head("GET", "/", "data.s3.example.com.")), "data");
  EXPECT_EQ(hosted.HostBucket(Head("GET", "/", "my.dotted.bucket.s3.example.com")),
            "my.dotted.bucket");
  // The domain itself (ListBuckets), a name that only ends like it, another domain, an address.
  EXPECT_EQ(hosted.HostBucket(Head("GET", "/", "s3.example.com")), "");
  EXPECT_EQ(hosted.HostBucket(Head("GET", "/", "datas3.example.com")), "");
  EXPECT_EQ(hosted.HostBucket(Head("GET", "/", "data.s3.example.org")), "");
  EXPECT_EQ(hosted.HostBucket(Head("GET", "/", "[::1]:8470")), "");
  EXPECT_EQ(hosted.HostBucket(Head("GET", "/", ".s3.example.com")), "");
  EXPECT_EQ(hosted.HostBucket(Head("GET", "/")), "");
}

TEST(AddressingTest, AVirtualHostedRequestIsS3sWhateverItsPath) {
  const Addressing hosted("s3.example.com");
  EXPECT_FALSE(Addressing::Claims(Head("GET", "/v1/queues")));
  EXPECT_FALSE(Addressing::Claims(Head("GET", "/healthz")));
  EXPECT_TRUE(Addressing::Claims(Head("GET", "/v1x/k")));
  EXPECT_TRUE(hosted.ClaimsFirst(Head("GET", "/v1/queues", "data.s3.example.com")));
  EXPECT_FALSE(hosted.ClaimsFirst(Head("GET", "/v1/queues", "s3.example.com")));
  // Only a PUT with a key streams its body: an object or a part, never CreateBucket.
  EXPECT_TRUE(hosted.StreamsBody(Head("PUT", "/k", "data.s3.example.com")));
  EXPECT_FALSE(hosted.StreamsBody(Head("PUT", "/", "data.s3.example.com")));
  EXPECT_TRUE(hosted.StreamsBody(Head("PUT", "/data/k")));
  EXPECT_FALSE(hosted.StreamsBody(Head("PUT", "/data")));
  EXPECT_FALSE(hosted.StreamsBody(Head("POST", "/k", "data.s3.example.com")));
  http::Request part = Head("PUT", "/data/k");
  part.query = {{"partNumber", "2"}, {"uploadId", "u"}, {"x-id", "UploadPart"}, {"odd", "1"}};
  EXPECT_TRUE(hosted.StreamsBody(part)) << "content, whatever else the query holds";
  http::Request acl = Head("PUT", "/data/k");
  acl.query = {{"acl", ""}};
  EXPECT_FALSE(hosted.StreamsBody(acl)) << "a document of the object's, read whole";
  http::Request presigned = Head("PUT", "/data/k");
  presigned.query = {{"X-Amz-Algorithm", "AWS4-HMAC-SHA256"}, {"X-Amz-Signature", "ab"}};
  EXPECT_TRUE(hosted.StreamsBody(presigned));
}

TEST(VirtualHostDomainTest, AHostNameIsTakenLowerCasedAndAnythingElseRefused) {
  EXPECT_EQ(ValidateVirtualHostDomain("S3.Example.com").value(), "s3.example.com");
  EXPECT_EQ(ValidateVirtualHostDomain("localhost").value(), "localhost");
  EXPECT_EQ(ValidateVirtualHostDomain("my-s3.example.com").value(), "my-s3.example.com");
  for (const char* bad :
       {"", "http://s3.example.com", "s3.example.com:8470", ".s3.example.com", "s3..example.com",
        "s3.example.com.", "s3 example", "s3_example.com", "-s3.example.com", "s3-.example.com",
        "127.0.0.1", "a234567890123456789012345678901234567890123456789012345678901234.com"}) {
    auto got = ValidateVirtualHostDomain(bad);
    ASSERT_FALSE(got.ok()) << bad;
    EXPECT_EQ(got.status().code(), StatusCode::kInvalidArgument) << bad;
  }
}

}  // namespace
}  // namespace tf::api
