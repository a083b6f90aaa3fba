// Fuzzes what the S3 API reads from a request before a service sees it: XML bodies (the strict
// parser and the three request documents), aws-chunked bodies with signed chunks, Authorization
// headers, credentials, dates and query strings. Any crash, hang or sanitizer report is a bug;
// a clean error Status is the expected answer to garbage. Also checks that escaped text always
// parses back to itself.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "s3/aws_chunked.h"
#include "s3/request_xml.h"
#include "s3/sigv4.h"
#include "s3/xml.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);

  (void)tf::s3::ParseXml(input);
  (void)tf::s3::ParseDeleteRequest(input);
  (void)tf::s3::ParseCompleteMultipartUpload(input);
  (void)tf::s3::ParseCreateBucketConfiguration(input);
  (void)tf::s3::ParseAccessControlPolicy(input);
  (void)tf::s3::ParseAuthorization(input);
  (void)tf::s3::ParseCredential(input);
  (void)tf::s3::ParseSignedHeaders(input);
  (void)tf::s3::ParseAmzDate(input);
  (void)tf::s3::CanonicalQuery(input, "X-Amz-Signature");

  // Escaped text reads back as itself unless something in it had to become U+FFFD (bytes that
  // are not UTF-8, characters XML cannot carry).
  std::string escaped = tf::s3::XmlEscape(input);
  auto doc = tf::s3::ParseXml("<a>" + escaped + "</a>");
  if (doc.ok() && escaped.find("\xef\xbf\xbd") == std::string::npos && doc->text != input) {
    std::abort();
  }

  // An aws-chunked body, fed in two pieces split where the first byte says.
  tf::s3::AwsChunkedDecoder decoder(std::string(32, 'k'), "20130524T000000Z",
                                    "20130524/us-east-1/s3/aws4_request", std::string(64, '0'));
  const size_t split = size == 0 ? 0 : data[0] % size;
  std::string out;
  if (decoder.Feed(std::string_view(input).substr(0, split), &out).ok()) {
    (void)decoder.Feed(std::string_view(input).substr(split), &out);
  }
  if (out.size() > size || decoder.decoded_bytes() != out.size()) std::abort();
  // The same bytes as signed chunks with signed trailing headers.
  tf::s3::AwsChunkedDecoder trailed(std::string(32, 'k'), "20130524T000000Z",
                                    "20130524/us-east-1/s3/aws4_request", std::string(64, '0'),
                                    /*signed_trailer=*/true);
  out.clear();
  if (trailed.Feed(std::string_view(input).substr(0, split), &out).ok()) {
    (void)trailed.Feed(std::string_view(input).substr(split), &out);
  }
  if (out.size() > size || trailed.decoded_bytes() != out.size()) std::abort();
  // The same bytes as an unsigned body with trailing headers.
  tf::s3::AwsChunkedDecoder plain(tf::s3::AwsChunkedDecoder::UnsignedWithTrailer{});
  out.clear();
  if (plain.Feed(std::string_view(input).substr(0, split), &out).ok()) {
    (void)plain.Feed(std::string_view(input).substr(split), &out);
  }
  if (out.size() > size || plain.decoded_bytes() != out.size()) std::abort();
  if (plain.trailers().size() > tf::s3::AwsChunkedDecoder::kMaxTrailers) std::abort();
  return 0;
}
