// The S3 API's pure pieces: the XML writer and strict parser, the request bodies read with it,
// the rules for completing a multipart upload, S3 error bodies, and Range headers as S3 reads
// them.
#include <gtest/gtest.h>

#include "api/object_http.h"
#include "api/s3/multipart_rules.h"
#include "s3/errors.h"
#include "s3/request_xml.h"
#include "s3/xml.h"

namespace tf::s3 {
namespace {

TEST(XmlWriterTest, EscapesTextAndKeepsTheDocumentUtf8) {
  XmlWriter w;
  w.Open("ListBucketResult", kS3Namespace);
  w.Element("Key", "a<b>&\"c'\r\x01 ü");
  w.Element("Bad", std::string("x\xff"
                               "y"));
  std::string doc = w.Finish();  // closes what is open
  EXPECT_EQ(doc,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
            "<Key>a&lt;b&gt;&amp;&quot;c&apos;&#13;\xef\xbf\xbd ü</Key>"
            "<Bad>x\xef\xbf\xbdy</Bad></ListBucketResult>");
  // What the writer makes, the parser reads back.
  XmlWriter again;
  again.Element("Key", "a<b>&\"c'\r\n\tü");
  auto parsed = ParseXml(again.Finish());
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->text, "a<b>&\"c'\r\n\tü");
}

TEST(XmlParserTest, ReadsElementsReferencesAndPrefixedNames) {
  auto doc = ParseXml(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!-- c -->"
      "<s3:Delete xmlns:s3=\"http://s3.amazonaws.com/doc/2006-03-01/\">\n"
      "  <Object><Key>a&amp;b&#x41;&#66;&lt;</Key></Object>\n"
      "  <Object><Key/></Object>\n"
      "</s3:Delete>  ");
  ASSERT_TRUE(doc.ok()) << doc.status().ToString();
  EXPECT_EQ(doc->name, "Delete");
  ASSERT_EQ(doc->children.size(), 2u);
  EXPECT_EQ(doc->children[0].Child("Key")->text, "a&bAB<");
  EXPECT_EQ(doc->children[1].Child("Key")->text, "");
  EXPECT_EQ(doc->Child("Nothing"), nullptr);
}

TEST(XmlParserTest, RefusesWhatIsNotStrictlyWellFormed) {
  std::string deep;  // nested past kMaxXmlDepth
  for (int i = 0; i < 40; ++i) deep += "<a>";
  for (int i = 0; i < 40; ++i) deep += "</a>";
  for (const std::string& bad : {
           std::string(""),
           std::string("<a>"),
           std::string("<a></b>"),
           std::string("<a>x</a><b/>"),
           std::string("<!DOCTYPE a [<!ENTITY e \"boom\">]><a>&e;</a>"),
           std::string("<a><![CDATA[x]]></a>"),
           std::string("<a><?pi x?></a>"),
           std::string("<a>&unknown;</a>"),
           std::string("<a>&#0;</a>"),
           std::string("<a>&#xD800;</a>"),
           std::string("<a>&#x110000;</a>"),
           std::string("<a>text<b/>more</a>"),
           std::string("<a>\xff</a>"),
           std::string("<a>\x01</a>"),
           std::string("<a b=\"1\"c=\"2\"/>"),
           std::string("<a>&amp</a>"),
           std::string("<1a/>"),
           deep,
       }) {
    EXPECT_EQ(ParseXml(bad).status().code(), StatusCode::kInvalidArgument) << bad;
  }
}

TEST(RequestXmlTest, DeleteRequest) {
  auto d = ParseDeleteRequest(
      "<Delete><Quiet>true</Quiet><Object><Key>a</Key></Object>"
      "<Object><Key>b/../c</Key><VersionId>v</VersionId><ETag>&quot;e1&quot;</ETag></Object>"
      "</Delete>");
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_TRUE(d->quiet);
  ASSERT_EQ(d->objects.size(), 2u);
  EXPECT_EQ(d->objects[0].key, "a");
  EXPECT_EQ(d->objects[0].version_id, std::nullopt);
  EXPECT_EQ(d->objects[1].key, "b/../c");
  EXPECT_EQ(d->objects[1].version_id, "v");
  EXPECT_EQ(d->objects[0].etag, std::nullopt);
  EXPECT_EQ(d->objects[1].etag, "e1");

  std::string many = "<Delete>";
  for (int i = 0; i < 1001; ++i) many += "<Object><Key>k</Key></Object>";
  many += "</Delete>";
  for (const std::string& bad : {std::string("<Delete/>"), std::string("<Remove/>"),
                                 std::string("<Delete><Object/></Delete>"),
                                 std::string("<Delete><Object><Key>k</Key><ETag>\"\"</ETag>"
                                             "</Object></Delete>"),
                                 std::string("<Delete><Object><Key>k</Key><Size>4</Size>"
                                             "</Object></Delete>"),
                                 std::string("<Delete><Quiet>yes</Quiet></Delete>"), many}) {
    EXPECT_FALSE(ParseDeleteRequest(bad).ok()) << bad.substr(0, 60);
  }
}

TEST(RequestXmlTest, AccessControlPolicy) {
  auto p = ParseAccessControlPolicy(
      "<AccessControlPolicy xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Owner><ID>prj</ID>"
      "</Owner><AccessControlList><Grant><Grantee xmlns:xsi=\"http://www.w3.org/2001/"
      "XMLSchema-instance\" xsi:type=\"CanonicalUser\"><ID>prj</ID></Grantee><Permission>"
      "FULL_CONTROL</Permission></Grant><Grant><Grantee><URI>http://acs.amazonaws.com/groups/"
      "global/AllUsers</URI></Grantee><Permission>READ</Permission></Grant></AccessControlList>"
      "</AccessControlPolicy>");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->owner_id, "prj");
  ASSERT_EQ(p->grants.size(), 2u);
  EXPECT_EQ(p->grants[0].id, "prj");
  EXPECT_EQ(p->grants[0].permission, "FULL_CONTROL");
  EXPECT_EQ(p->grants[1].uri, "http://acs.amazonaws.com/groups/global/AllUsers");
  EXPECT_EQ(p->grants[1].permission, "READ");
  for (const char* bad : {"<AccessControlPolicy/>",
                          "<AccessControlPolicy><AccessControlList><Grant><Grantee><ID>a</ID>"
                          "</Grantee></Grant></AccessControlList></AccessControlPolicy>",
                          "<AccessControlPolicy><AccessControlList><Grant><Grantee><ID>a</ID>"
                          "<URI>u</URI></Grantee><Permission>READ</Permission></Grant>"
                          "</AccessControlList></AccessControlPolicy>",
                          "<AccessControlPolicy><AccessControlList><Other/></AccessControlList>"
                          "</AccessControlPolicy>"}) {
    EXPECT_FALSE(ParseAccessControlPolicy(bad).ok()) << bad;
  }
}

TEST(RequestXmlTest, CompleteMultipartUploadAndBucketConfiguration) {
  auto parts = ParseCompleteMultipartUpload(
      "<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>\"abc\"</ETag></Part>"
      "<Part><ETag>&quot;def&quot;</ETag><PartNumber>2</PartNumber>"
      "<ChecksumCRC32>y/Q5Jg==</ChecksumCRC32></Part>"
      "</CompleteMultipartUpload>");
  ASSERT_TRUE(parts.ok()) << parts.status().ToString();
  ASSERT_EQ(parts->size(), 2u);
  EXPECT_EQ((*parts)[0].part_number, 1);
  EXPECT_EQ((*parts)[0].etag, "abc");
  EXPECT_EQ((*parts)[1].etag, "def");
  EXPECT_TRUE((*parts)[0].checksums.empty());
  EXPECT_EQ((*parts)[1].checksums.at("ChecksumCRC32"), "y/Q5Jg==");
  EXPECT_FALSE(ParseCompleteMultipartUpload("<CompleteMultipartUpload/>").ok());
  EXPECT_FALSE(ParseCompleteMultipartUpload(
                   "<CompleteMultipartUpload><Part><PartNumber>x</PartNumber><ETag>a</ETag></Part>"
                   "</CompleteMultipartUpload>")
                   .ok());

  EXPECT_EQ(*ParseCreateBucketConfiguration(""), "");
  EXPECT_EQ(*ParseCreateBucketConfiguration(
                "<CreateBucketConfiguration xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
                "<LocationConstraint>eu-west-1</LocationConstraint></CreateBucketConfiguration>"),
            "eu-west-1");
  EXPECT_FALSE(ParseCreateBucketConfiguration("<Nope/>").ok());
}

TEST(MultipartRulesTest, EtagIsTheMd5OfThePartMd5s) {
  // Values computed independently (Python's hashlib): parts of 5 MiB of 'a' and of "tail".
  EXPECT_EQ(
      api::MultipartEtag({"79b281060d337b9b2b84ccf390adcf74", "7aea2552dfe7eb84b9443b6fc9ba6e01"}),
      "30dcfd3901d1c613b7fb532281748544-2");
  EXPECT_EQ(api::MultipartEtag({"d41d8cd98f00b204e9800998ecf8427e"}),
            "59adb24ef3cdbe0297f05b395827453f-1");
}

TEST(MultipartRulesTest, CompletionNeedsAscendingUploadedPartsOfAtLeast5MiB) {
  const uint64_t big = objects::kMinPartBytes;
  std::vector<objects::PartInfo> uploaded = {
      {1, big, "aaaa", 0}, {2, big, "bbbb", 0}, {3, 10, "cccc", 0}, {4, 10, "dddd", 0}};
  auto check = [&](std::vector<CompletedPart> parts) {
    auto e = api::CheckCompletion(parts, uploaded, "up");
    return e ? e->code : std::string("ok");
  };
  EXPECT_EQ(check({{1, "aaaa"}, {2, "BBBB"}, {3, "cccc"}}), "ok");
  EXPECT_EQ(check({{2, "bbbb"}, {4, "dddd"}}), "ok");  // parts may be skipped
  EXPECT_EQ(check({{2, "bbbb"}, {1, "aaaa"}}), "InvalidPartOrder");
  EXPECT_EQ(check({{1, "aaaa"}, {1, "aaaa"}}), "InvalidPartOrder");
  EXPECT_EQ(check({{1, "aaaa"}, {5, "eeee"}}), "InvalidPart");     // never uploaded
  EXPECT_EQ(check({{1, "aaaa"}, {2, "ffff"}}), "InvalidPart");     // another ETag
  EXPECT_EQ(check({{3, "cccc"}, {4, "dddd"}}), "EntityTooSmall");  // 10 bytes, not last
  EXPECT_EQ(check({{0, "aaaa"}}), "InvalidArgument");
  EXPECT_EQ(check({{10001, "aaaa"}}), "InvalidArgument");
  auto e = api::CheckCompletion({{1, "aaaa"}, {5, "eeee"}}, uploaded, "up");
  EXPECT_EQ(e->status, 400);
}

TEST(S3ErrorTest, CodesCarryS3sStatusesAndTheBodyIsS3s) {
  EXPECT_EQ(MakeError("NoSuchKey", "").status, 404);
  EXPECT_EQ(MakeError("InvalidRange", "").status, 416);
  EXPECT_EQ(MakeError("SignatureDoesNotMatch", "").status, 403);
  EXPECT_EQ(MakeError("BucketNotEmpty", "").status, 409);
  EXPECT_EQ(FromStatus(NotFound("x")).code, "NoSuchKey");
  EXPECT_EQ(FromStatus(Unavailable("x")).status, 503);
  EXPECT_EQ(FromStatus(ResourceExhausted("disk full")).status, 507);
  Error e = MakeError("NoSuchBucket", "The specified bucket does not exist");
  e.With("BucketName", "b<1>");
  EXPECT_EQ(ErrorBody(e, "/b<1>", "REQ1"),
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>NoSuchBucket</Code>"
            "<Message>The specified bucket does not exist</Message>"
            "<BucketName>b&lt;1&gt;</BucketName><Resource>/b&lt;1&gt;</Resource>"
            "<RequestId>REQ1</RequestId></Error>");
}

// S3's GetObject reads Range as the native API does (api/object_http.h).
TEST(S3RangeTest, RangesInsidePastAndAroundTheEnd) {
  using api::ByteRange;
  using api::ParseRange;
  auto is = [](ByteRange r, ByteRange::Kind kind, uint64_t first = 0, uint64_t last = 0) {
    return r.kind == kind && (kind != ByteRange::kPart || (r.first == first && r.last == last));
  };
  EXPECT_TRUE(is(ParseRange("bytes=0-9", 100), ByteRange::kPart, 0, 9));
  EXPECT_TRUE(is(ParseRange("bytes=90-", 100), ByteRange::kPart, 90, 99));
  EXPECT_TRUE(is(ParseRange("bytes=90-200", 100), ByteRange::kPart, 90, 99));  // clipped
  EXPECT_TRUE(is(ParseRange("bytes=-10", 100), ByteRange::kPart, 90, 99));
  EXPECT_TRUE(is(ParseRange("bytes=-500", 100), ByteRange::kPart, 0, 99));
  EXPECT_TRUE(is(ParseRange("bytes=100-", 100), ByteRange::kUnsatisfiable));  // past the end
  EXPECT_TRUE(is(ParseRange("bytes=100-200", 100), ByteRange::kUnsatisfiable));
  EXPECT_TRUE(is(ParseRange("bytes=0-0", 0), ByteRange::kUnsatisfiable));
  EXPECT_TRUE(is(ParseRange("bytes=-0", 100), ByteRange::kUnsatisfiable));
  EXPECT_TRUE(is(ParseRange("bytes=9-5", 100), ByteRange::kWhole));  // malformed: ignored
  EXPECT_TRUE(is(ParseRange("bytes=0-1,5-6", 100), ByteRange::kWhole));
  EXPECT_TRUE(is(ParseRange("items=0-1", 100), ByteRange::kWhole));
  EXPECT_TRUE(is(ParseRange("", 100), ByteRange::kWhole));
}

}  // namespace
}  // namespace tf::s3
