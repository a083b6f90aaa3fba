// SigV4 against the examples AWS publishes in its S3 documentation ("Signature calculations for
// the Authorization header", "Authenticating requests: using query parameters", "Transferring
// payload in multiple chunks"), then request verification and aws-chunked bodies built on them.
#include <gtest/gtest.h>

#include "base/crypto.h"
#include "http/url.h"
#include "s3/aws_chunked.h"
#include "s3/request_auth.h"
#include "s3/sigv4.h"

namespace tf::s3 {
namespace {

// The documentation's credentials and time.
constexpr const char* kKeyId = "AKIAIOSFODNN7EXAMPLE";
constexpr const char* kSecret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
constexpr const char* kDate = "20130524T000000Z";
const Credential kCredential{kKeyId, "20130524", "us-east-1", "s3"};

std::string Sign(const CanonicalInput& in) {
  return Signature(SigningKey(kSecret, kCredential),
                   StringToSign(kDate, kCredential.Scope(), CanonicalRequest(in)));
}

TEST(SigV4Test, GetObjectWithRange) {
  CanonicalInput in{"GET",
                    "/test.txt",
                    "",
                    {{"host", "examplebucket.s3.amazonaws.com"},
                     {"range", "bytes=0-9"},
                     {"x-amz-content-sha256", std::string(kEmptySha256)},
                     {"x-amz-date", kDate}},
                    std::string(kEmptySha256)};
  EXPECT_EQ(Sha256Hex(CanonicalRequest(in)),
            "7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972");
  EXPECT_EQ(Sign(in), "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
}

TEST(SigV4Test, PutObjectWithEncodedKeyAndSignedPayload) {
  const std::string payload = "Welcome to Amazon S3.";
  const std::string hash = Sha256Hex(payload);
  EXPECT_EQ(hash, "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072");
  CanonicalInput in{"PUT",
                    "/" + http::PercentEncode("test$file.text", http::Slash::kKeep),
                    "",
                    {{"date", "Fri, 24 May 2013 00:00:00 GMT"},
                     {"host", "examplebucket.s3.amazonaws.com"},
                     {"x-amz-content-sha256", hash},
                     {"x-amz-date", kDate},
                     {"x-amz-storage-class", "REDUCED_REDUNDANCY"}},
                    hash};
  EXPECT_EQ(in.uri, "/test%24file.text");
  EXPECT_EQ(Sha256Hex(CanonicalRequest(in)),
            "9e0e90d9c76de8fa5b200d8c849cd5b8dc7a3be3951ddb7f6a76b4158342019d");
  EXPECT_EQ(Sign(in), "98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd");
}

TEST(SigV4Test, SubresourceAndListingQueriesAreCanonical) {
  CanonicalInput lifecycle{"GET",
                           "/",
                           CanonicalQuery("lifecycle"),
                           {{"host", "examplebucket.s3.amazonaws.com"},
                            {"x-amz-content-sha256", std::string(kEmptySha256)},
                            {"x-amz-date", kDate}},
                           std::string(kEmptySha256)};
  EXPECT_EQ(lifecycle.query, "lifecycle=");
  EXPECT_EQ(Sign(lifecycle), "fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543");

  CanonicalInput list = lifecycle;
  list.query = CanonicalQuery("prefix=J&max-keys=2");  // sorted by name
  EXPECT_EQ(list.query, "max-keys=2&prefix=J");
  EXPECT_EQ(Sign(list), "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7");
}

TEST(SigV4Test, PresignedUrl) {
  const std::string query =
      "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-"
      "east-1%2Fs3%2Faws4_request&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-"
      "SignedHeaders=host&X-Amz-Signature=whatever";
  CanonicalInput in{"GET",
                    "/test.txt",
                    CanonicalQuery(query, "X-Amz-Signature"),
                    {{"host", "examplebucket.s3.amazonaws.com"}},
                    std::string(kUnsignedPayload)};
  EXPECT_EQ(StringToSign(kDate, kCredential.Scope(), CanonicalRequest(in)),
            "AWS4-HMAC-SHA256\n20130524T000000Z\n20130524/us-east-1/s3/aws4_request\n"
            "3bfa292879f6447bbcda7001decf97f4a54dc650c8942174ae0a9121cf58ad04");
  EXPECT_EQ(Sign(in), "aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404");
}

// The generic SigV4 suite's "get-vanilla" case: another secret, service and date.
TEST(SigV4Test, GenericSuiteGetVanilla) {
  Credential c{"AKIDEXAMPLE", "20150830", "us-east-1", "service"};
  CanonicalInput in{"GET",
                    "/",
                    "",
                    {{"host", "example.amazonaws.com"}, {"x-amz-date", "20150830T123600Z"}},
                    std::string(kEmptySha256)};
  std::string to_sign = StringToSign("20150830T123600Z", c.Scope(), CanonicalRequest(in));
  EXPECT_EQ(Signature(SigningKey("wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", c), to_sign),
            "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31");
}

TEST(SigV4Test, ParsesAuthorizationAndRefusesMalformedOnes) {
  auto a = ParseAuthorization(
      "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
      "SignedHeaders=host;range;x-amz-date, "
      "Signature=fe5f80f77d5fa3beca038a248ff027d0445342fe2855ddc963176630326f1024");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->credential.access_key_id, kKeyId);
  EXPECT_EQ(a->credential.Scope(), "20130524/us-east-1/s3/aws4_request");
  EXPECT_EQ(a->signed_headers, (std::vector<std::string>{"host", "range", "x-amz-date"}));

  for (const char* bad : {
           "AWS AKIAIOSFODNN7EXAMPLE:frJIUN8DYpKDtOLCwo//yllqDzg=",
           "AWS4-HMAC-SHA256 Credential=A/20130524/us-east-1/s3/aws4_request, SignedHeaders=host",
           "AWS4-HMAC-SHA256 Credential=A/2013052/us-east-1/s3/aws4_request, SignedHeaders=host, "
           "Signature=fe5f80f77d5fa3beca038a248ff027d0445342fe2855ddc963176630326f1024",
           "AWS4-HMAC-SHA256 Credential=A/20130524/us-east-1/s3/aws4, SignedHeaders=host, "
           "Signature=fe5f80f77d5fa3beca038a248ff027d0445342fe2855ddc963176630326f1024",
           "AWS4-HMAC-SHA256 Credential=A/20130524/us-east-1/s3/aws4_request, SignedHeaders=Host, "
           "Signature=fe5f80f77d5fa3beca038a248ff027d0445342fe2855ddc963176630326f1024",
           "AWS4-HMAC-SHA256 Credential=A/20130524/us-east-1/s3/aws4_request, SignedHeaders=host, "
           "Signature=FE5F",
       }) {
    EXPECT_EQ(ParseAuthorization(bad).status().code(), StatusCode::kInvalidArgument) << bad;
  }
}

TEST(SigV4Test, DatesAndEncoding) {
  auto t = ParseAmzDate(kDate);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(*t, 1369353600000);
  EXPECT_EQ(FormatAmzDate(*t), kDate);
  for (const char* bad : {"20130524", "20130524T000000", "20130230T000000Z", "2013-05-24T00:00Z",
                          "20131324T000000Z", "20130524T250000Z"}) {
    EXPECT_FALSE(ParseAmzDate(bad).ok()) << bad;
  }
  EXPECT_EQ(http::PercentEncode("a b/ü~+*", http::Slash::kKeep), "a%20b/%C3%BC~%2B%2A");
  EXPECT_EQ(http::PercentEncode("a/b"), "a%2Fb");
  EXPECT_EQ(CanonicalHeaderValue("  a   b  c "), "a b c");
  EXPECT_EQ(CanonicalHeaderValue("\ta\t\tb \t c\t"), "a b c");
  EXPECT_EQ(CanonicalHeaderValue("\ta\t\tb  c\t", HeaderBlanks::kSpacesOnly), "a\t\tb c");
  EXPECT_TRUE(ConstantTimeEquals("abc", "abc"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "abd"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "ab"));
}

// The documentation's chunked upload: 64 KiB of 'a', then 1 KiB, then the empty final chunk.
class ChunkedUploadExample : public ::testing::Test {
 protected:
  static constexpr const char* kSeed =
      "4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9";
  static constexpr const char* kChunkSignatures[] = {
      "ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648",
      "0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497",
      "b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9",
  };

  static CanonicalInput Request() {
    return {"PUT",
            "/examplebucket/chunkObject.txt",
            "",
            {{"content-encoding", "aws-chunked"},
             {"content-length", "66824"},
             {"host", "s3.amazonaws.com"},
             {"x-amz-content-sha256", std::string(kStreamingPayload)},
             {"x-amz-date", kDate},
             {"x-amz-decoded-content-length", "66560"},
             {"x-amz-storage-class", "REDUCED_REDUNDANCY"}},
            std::string(kStreamingPayload)};
  }

  static std::string Body() {
    std::string body;
    const size_t sizes[] = {65536, 1024, 0};
    for (int i = 0; i < 3; ++i) {
      char head[32];
      std::snprintf(head, sizeof head, "%zx", sizes[i]);
      body += std::string(head) + ";chunk-signature=" + kChunkSignatures[i] + "\r\n" +
              std::string(sizes[i], 'a') + "\r\n";
    }
    return body;
  }

  static AwsChunkedDecoder Decoder() {
    return AwsChunkedDecoder(SigningKey(kSecret, kCredential), kDate, kCredential.Scope(), kSeed);
  }
};

TEST_F(ChunkedUploadExample, SeedAndChunkSignatures) {
  EXPECT_EQ(Sign(Request()), kSeed);
  const std::string body = Body();
  EXPECT_EQ(body.size(), 66824u);  // the example's Content-Length

  AwsChunkedDecoder whole = Decoder();
  std::string out;
  ASSERT_TRUE(whole.Feed(body, &out).ok());
  EXPECT_TRUE(whole.done());
  EXPECT_EQ(out, std::string(66560, 'a'));

  // Fed a byte at a time, as a slow network might deliver it.
  AwsChunkedDecoder bytewise = Decoder();
  std::string out2;
  for (char c : body) ASSERT_TRUE(bytewise.Feed(std::string_view(&c, 1), &out2).ok());
  EXPECT_TRUE(bytewise.done());
  EXPECT_EQ(out2, out);
}

TEST_F(ChunkedUploadExample, AlteredDroppedOrTruncatedBodiesAreRefused) {
  std::string body = Body();
  std::string out;

  std::string flipped = body;
  flipped[100] = 'b';  // inside the first chunk's data
  AwsChunkedDecoder d1 = Decoder();
  EXPECT_EQ(d1.Feed(flipped, &out).code(), StatusCode::kUnauthenticated);
  EXPECT_EQ(d1.Feed("more", &out).code(), StatusCode::kUnauthenticated);  // stays failed

  // Without the second chunk, the final chunk's signature no longer chains.
  size_t second = body.find("400;chunk-signature");
  size_t final_chunk = body.find("0;chunk-signature", second + 5);
  std::string dropped = body.substr(0, second) + body.substr(final_chunk);
  AwsChunkedDecoder d2 = Decoder();
  EXPECT_EQ(d2.Feed(dropped, &out).code(), StatusCode::kUnauthenticated);

  AwsChunkedDecoder d3 = Decoder();
  EXPECT_TRUE(d3.Feed(body.substr(0, body.size() - 10), &out).ok());
  EXPECT_FALSE(d3.done());

  AwsChunkedDecoder d4 = Decoder();
  EXPECT_EQ(d4.Feed(body + "x", &out).code(), StatusCode::kInvalidArgument);

  AwsChunkedDecoder d5 = Decoder();
  EXPECT_EQ(d5.Feed("zz;chunk-signature=" + std::string(64, '0') + "\r\n", &out).code(),
            StatusCode::kInvalidArgument);
  AwsChunkedDecoder d6 = Decoder();
  EXPECT_EQ(d6.Feed(std::string(300, '1'), &out).code(), StatusCode::kInvalidArgument);
}

// The documentation's chunked upload with a trailing checksum
// (STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER): the same content, its chunks signed, then an
// x-amz-checksum-crc32c trailer signed in its turn.
class ChunkedUploadWithTrailerExample : public ::testing::Test {
 protected:
  static constexpr const char* kSeed =
      "106e2a8a18243abcf37539882f36619c00e2dfc72633413f02d3b74544bfeb8e";
  static constexpr const char* kChunkSignatures[] = {
      "b474d8862b1487a5145d686f57f013e54db672cee1c953b3010fb58501ef5aa2",
      "1c1344b170168f8e65b41376b44b20fe354e373826ccbbe2c1d40a8cae51e5c7",
      "2ca2aba2005185cf7159c6277faf83795951dd77a3a99e6e65d5c9f85863f992",
  };
  static constexpr const char* kTrailerSignature =
      "d81f82fc3505edab99d459891051a732e8730629a2e4a59689829ca17fe2e435";

  static CanonicalInput Request() {
    return {"PUT",
            "/examplebucket/chunkObject.txt",
            "",
            {{"content-encoding", "aws-chunked"},
             {"host", "s3.amazonaws.com"},
             {"x-amz-content-sha256", std::string(kStreamingSignedTrailer)},
             {"x-amz-date", kDate},
             {"x-amz-decoded-content-length", "66560"},
             {"x-amz-storage-class", "REDUCED_REDUNDANCY"},
             {"x-amz-trailer", "x-amz-checksum-crc32c"}},
            std::string(kStreamingSignedTrailer)};
  }

  static std::string Body(const std::string& checksum = "sOO8/Q==",
                          const std::string& signature = kTrailerSignature) {
    std::string body;
    const size_t sizes[] = {65536, 1024};
    for (int i = 0; i < 2; ++i) {
      char head[32];
      std::snprintf(head, sizeof head, "%zx", sizes[i]);
      body += std::string(head) + ";chunk-signature=" + kChunkSignatures[i] + "\r\n" +
              std::string(sizes[i], 'a') + "\r\n";
    }
    return body + "0;chunk-signature=" + kChunkSignatures[2] + "\r\n" +
           "x-amz-checksum-crc32c:" + checksum + "\r\n" + "x-amz-trailer-signature:" + signature +
           "\r\n\r\n";
  }

  static AwsChunkedDecoder Decoder() {
    return AwsChunkedDecoder(SigningKey(kSecret, kCredential), kDate, kCredential.Scope(), kSeed,
                             /*signed_trailer=*/true);
  }
};

TEST_F(ChunkedUploadWithTrailerExample, SeedChunkAndTrailerSignatures) {
  EXPECT_EQ(Sign(Request()), kSeed);
  const std::string body = Body();
  AwsChunkedDecoder whole = Decoder();
  std::string out;
  ASSERT_TRUE(whole.Feed(body, &out).ok());
  EXPECT_TRUE(whole.done());
  EXPECT_EQ(out, std::string(66560, 'a'));
  EXPECT_EQ(whole.trailers().size(), 1u);  // the signature is not one of them
  EXPECT_EQ(whole.trailers().at("x-amz-checksum-crc32c"), "sOO8/Q==");

  AwsChunkedDecoder bytewise = Decoder();
  std::string out2;
  for (char c : body) ASSERT_TRUE(bytewise.Feed(std::string_view(&c, 1), &out2).ok());
  EXPECT_TRUE(bytewise.done());
  EXPECT_EQ(out2, out);
}

TEST_F(ChunkedUploadWithTrailerExample, AlteredMissingOrMisplacedTrailersAreRefused) {
  std::string out;
  AwsChunkedDecoder altered = Decoder();  // another checksum than the one signed
  EXPECT_EQ(altered.Feed(Body("AAAAAA=="), &out).code(), StatusCode::kUnauthenticated);
  EXPECT_FALSE(altered.done());

  AwsChunkedDecoder wrong = Decoder();
  EXPECT_EQ(wrong.Feed(Body("sOO8/Q==", std::string(64, '0')), &out).code(),
            StatusCode::kUnauthenticated);

  const std::string body = Body();
  const size_t signature = body.find("x-amz-trailer-signature:");
  AwsChunkedDecoder unsigned_trailer = Decoder();  // the signature line left out
  EXPECT_EQ(unsigned_trailer.Feed(body.substr(0, signature) + "\r\n", &out).code(),
            StatusCode::kInvalidArgument);

  const size_t checksum = body.find("x-amz-checksum-crc32c:");
  const std::string moved = body.substr(0, checksum) + body.substr(signature, 90) +
                            body.substr(checksum, signature - checksum) + "\r\n";
  AwsChunkedDecoder after = Decoder();  // a header after the signature
  EXPECT_EQ(after.Feed(moved, &out).code(), StatusCode::kInvalidArgument);

  // Without a trailer a signed body ends at its final chunk: this one does not.
  AwsChunkedDecoder plain(SigningKey(kSecret, kCredential), kDate, kCredential.Scope(), kSeed);
  EXPECT_FALSE(plain.Feed(body, &out).ok());
}

// VerifyRequest over whole requests signed as the documentation signs them.
// STREAMING-UNSIGNED-PAYLOAD-TRAILER: unsigned chunks (extensions ignored), then trailing
// headers and a blank line, decoded however the network splits them.
TEST(UnsignedChunksTest, DecodeChunksAndTrailersFedInAnyPieces) {
  const std::string body =
      "5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\n"
      "X-Amz-Checksum-CRC32: DUoRhQ==\r\nx-amz-other:\tb\r\n\r\n";
  for (size_t step : {size_t{1}, size_t{3}, size_t{7}, body.size()}) {
    AwsChunkedDecoder d(AwsChunkedDecoder::UnsignedWithTrailer{});
    std::string out;
    for (size_t at = 0; at < body.size(); at += step) {
      ASSERT_TRUE(d.Feed(std::string_view(body).substr(at, step), &out).ok()) << step;
    }
    EXPECT_TRUE(d.done()) << step;
    EXPECT_EQ(out, "hello world");
    EXPECT_EQ(d.decoded_bytes(), 11u);
    EXPECT_EQ(d.trailers().at("x-amz-checksum-crc32"), "DUoRhQ==");
    EXPECT_EQ(d.trailers().at("x-amz-other"), "b");
  }
}

TEST(UnsignedChunksTest, MalformedOrEndlessTrailersAreRefused) {
  auto decode = [](const std::string& body) {
    AwsChunkedDecoder d(AwsChunkedDecoder::UnsignedWithTrailer{});
    std::string out;
    Status s = d.Feed(body, &out);
    return std::make_pair(s, d.done());
  };
  EXPECT_EQ(decode("0\r\nno-colon\r\n\r\n").first.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(decode("0\r\n:value\r\n\r\n").first.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(decode("0\r\nname:v\n\r\n").first.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(decode("0\r\n" + std::string(300, 'x') + ":v\r\n").first.code(),
            StatusCode::kInvalidArgument);
  std::string many = "0\r\n";
  for (int i = 0; i < 9; ++i) many += "h" + std::to_string(i) + ":v\r\n";
  EXPECT_EQ(decode(many + "\r\n").first.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(decode("3\r\nabc\r\n0\r\n\r\nmore").first.code(), StatusCode::kInvalidArgument);
  auto unfinished = decode("3\r\nabc\r\n0\r\nname:v\r\n");  // no blank line yet
  EXPECT_TRUE(unfinished.first.ok());
  EXPECT_FALSE(unfinished.second);
  EXPECT_EQ(decode("3;chunk-signature=zz\r\nabc\r\n0\r\n\r\n").first.code(),
            StatusCode::kOk);  // a signature where none is asked for is an ignored extension
}

class VerifyRequestTest : public ::testing::Test {
 protected:
  KeyLookup Lookup() {
    return [this](const std::string& id) -> Result<store::AccessKey> {
      ++lookups_;
      if (id != kKeyId) return NotFound("no such key");
      return store::AccessKey{kKeyId, "prj_example", kSecret, "doc", 0, std::nullopt};
    };
  }

  static http::Request GetObject() {
    http::Request r;
    r.method = "GET";
    r.target = "/test.txt";
    r.path = "/test.txt";
    r.headers = {{"Host", "examplebucket.s3.amazonaws.com"},
                 {"Range", "bytes=0-9"},
                 {"x-amz-content-sha256", std::string(kEmptySha256)},
                 {"x-amz-date", kDate},
                 {"Authorization",
                  "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/"
                  "aws4_request,SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,"
                  "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"}};
    return r;
  }

  static http::Request Presigned() {
    http::Request r;
    r.method = "GET";
    r.target =
        "/test.txt?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%"
        "2F20130524"
        "%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-"
        "SignedHeaders=host&X-Amz-Signature="
        "aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404";
    r.path = "/test.txt";
    r.query = http::ParseQuery(r.target.substr(r.target.find('?') + 1));
    r.headers = {{"Host", "examplebucket.s3.amazonaws.com"}};
    return r;
  }

  const TimeMs t0_ = *ParseAmzDate(kDate);
  int lookups_ = 0;
};

TEST_F(VerifyRequestTest, HeaderSignatureChecksOutAndNamesTheKeysProject) {
  auto v = VerifyRequest(GetObject(), t0_ + 5 * kMinuteMs, Lookup());
  ASSERT_TRUE(v.ok()) << v.error().code << ": " << v.error().message;
  EXPECT_EQ(v->key.project_id, "prj_example");
  EXPECT_EQ(v->payload, Payload::kSha256);
  EXPECT_EQ(v->payload_sha256, kEmptySha256);
}

TEST_F(VerifyRequestTest, TamperingWrongKeysAndSkewAreRefusedWithS3Codes) {
  http::Request tampered = GetObject();
  tampered.headers[1].second = "bytes=0-99";
  auto v = VerifyRequest(tampered, t0_, Lookup());
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.error().code, "SignatureDoesNotMatch");
  EXPECT_EQ(v.error().status, 403);

  http::Request other_secret = GetObject();
  auto wrong =
      VerifyRequest(other_secret, t0_, [](const std::string& id) -> Result<store::AccessKey> {
        return store::AccessKey{id, "p", "not-the-secret", "", 0, std::nullopt};
      });
  EXPECT_EQ(wrong.error().code, "SignatureDoesNotMatch");

  http::Request unknown = GetObject();
  std::string& auth = unknown.headers[4].second;
  auth.replace(auth.find(kKeyId), std::string(kKeyId).size(), "AKIANOBODYEXAMPLE000");
  EXPECT_EQ(VerifyRequest(unknown, t0_, Lookup()).error().code, "InvalidAccessKeyId");

  auto skewed = VerifyRequest(GetObject(), t0_ + 16 * kMinuteMs, Lookup());
  EXPECT_EQ(skewed.error().code, "RequestTimeTooSkewed");
  EXPECT_EQ(skewed.error().status, 403);

  http::Request unsigned_meta = GetObject();
  unsigned_meta.headers.emplace_back("x-amz-meta-owner", "mallory");
  EXPECT_EQ(VerifyRequest(unsigned_meta, t0_, Lookup()).error().code, "AccessDenied");

  http::Request anonymous = GetObject();
  anonymous.headers.pop_back();
  EXPECT_EQ(VerifyRequest(anonymous, t0_, Lookup()).error().code, "AccessDenied");

  http::Request no_hash = GetObject();
  no_hash.headers.erase(no_hash.headers.begin() + 2);
  EXPECT_EQ(VerifyRequest(no_hash, t0_, Lookup()).error().code, "InvalidRequest");
}

// A signed value with tabs in it: botocore signs "a b c" (each run of spaces and tabs one
// space), the Go SDKs "a\tb c" (tabs kept). Both are the client's own signature and pass;
// one over anything else fails.
TEST_F(VerifyRequestTest, ATabInASignedValueMaySignEitherWayTheSdksSignIt) {
  const std::string note = "a\tb \t c\t\td";
  auto signed_as = [&](const std::string& signed_note) {
    CanonicalInput in{"GET",
                      "/test.txt",
                      "",
                      {{"host", "examplebucket.s3.amazonaws.com"},
                       {"x-amz-content-sha256", std::string(kEmptySha256)},
                       {"x-amz-date", kDate},
                       {"x-amz-meta-note", signed_note}},
                      std::string(kEmptySha256),
                      HeaderBlanks::kSpacesOnly};  // the value is given as signed
    http::Request r = GetObject();
    r.headers = {{"Host", "examplebucket.s3.amazonaws.com"},
                 {"x-amz-content-sha256", std::string(kEmptySha256)},
                 {"x-amz-date", kDate},
                 {"x-amz-meta-note", note},
                 {"Authorization",
                  "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/"
                  "aws4_request,SignedHeaders=host;x-amz-content-sha256;x-amz-date;"
                  "x-amz-meta-note,Signature=" +
                      Sign(in)}};
    return VerifyRequest(r, t0_, Lookup());
  };
  EXPECT_EQ(CanonicalHeaderValue(note), "a b c d");
  EXPECT_EQ(CanonicalHeaderValue(note, HeaderBlanks::kSpacesOnly), "a\tb \t c\t\td");
  auto botocore = signed_as("a b c d");
  EXPECT_TRUE(botocore.ok()) << botocore.error().message;
  auto go = signed_as("a\tb \t c\t\td");
  EXPECT_TRUE(go.ok()) << go.error().message;
  auto neither = signed_as("ab c d");
  ASSERT_FALSE(neither.ok());
  EXPECT_EQ(neither.error().code, "SignatureDoesNotMatch");
}

TEST_F(VerifyRequestTest, PresignedUrlWorksUntilItExpires) {
  auto v = VerifyRequest(Presigned(), t0_ + 86'399 * kSecondMs, Lookup());
  ASSERT_TRUE(v.ok()) << v.error().code << ": " << v.error().message;
  EXPECT_EQ(v->payload, Payload::kUnsigned);

  auto expired = VerifyRequest(Presigned(), t0_ + 86'401 * kSecondMs, Lookup());
  ASSERT_FALSE(expired.ok());
  EXPECT_EQ(expired.error().code, "AccessDenied");
  EXPECT_EQ(expired.error().message, "Request has expired");
  EXPECT_EQ(lookups_, 1);  // an expired URL is refused before the store is asked

  http::Request too_long = Presigned();
  too_long.query["X-Amz-Expires"] = "604801";
  EXPECT_EQ(VerifyRequest(too_long, t0_, Lookup()).error().code,
            "AuthorizationQueryParametersError");

  http::Request other_object = Presigned();
  other_object.target.replace(0, 9, "/secret.txt");
  EXPECT_EQ(VerifyRequest(other_object, t0_, Lookup()).error().code, "SignatureDoesNotMatch");
}

TEST_F(VerifyRequestTest, SignatureVersionTwoIsRefusedSayingWhatToUseInstead) {
  // What `s3cmd signurl` makes, and the header form of older clients.
  http::Request url;
  url.method = "GET";
  url.target = "/b/k?AWSAccessKeyId=AKIAIOSFODNN7EXAMPLE&Expires=1796157259&Signature=1Upg%3D";
  url.path = "/b/k";
  url.query = http::ParseQuery(url.target.substr(url.target.find('?') + 1));
  url.headers = {{"Host", "127.0.0.1:8470"}};
  auto v = VerifyRequest(url, t0_, Lookup());
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.error().code, "InvalidRequest");
  EXPECT_EQ(v.error().status, 400);
  EXPECT_NE(v.error().message.find("AWS4-HMAC-SHA256"), std::string::npos) << v.error().message;

  http::Request header = GetObject();
  header.headers[4].second = "AWS AKIAIOSFODNN7EXAMPLE:frJIUN8DYpKDtOLCwo//yllqDzg=";
  EXPECT_EQ(VerifyRequest(header, t0_, Lookup()).error().code, "InvalidRequest");
  EXPECT_EQ(lookups_, 0);  // refused before the store is asked
}

}  // namespace
}  // namespace tf::s3
