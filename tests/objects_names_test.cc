// Keys, bucket names and metadata (objects/names.h), CRC-32C, and the blob file's trailer.
#include <gtest/gtest.h>

#include "objects/blob_format.h"
#include "objects/crc32c.h"
#include "objects/names.h"

namespace tf::objects {
namespace {

TEST(ObjectKeysTest, PathLikeKeysAreJustKeys) {
  for (const char* key : {"..", "../../etc/passwd", "/etc/passwd", "a/../../b", "a//b", "dir/",
                          "./x", "~/.ssh/id_rsa", "C:\\Windows", "%2e%2e/x", " ",
                          "\xc3\xa9t\xc3\xa9", "\xf0\x9f\x98\x80", "tab\there"}) {
    EXPECT_TRUE(ValidateKey(key).ok()) << key;
  }
}

TEST(ObjectKeysTest, EmptyOverLongNulAndBadUtf8AreRefused) {
  EXPECT_EQ(ValidateKey("").code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(ValidateKey(std::string(1024, 'k')).ok());
  Status too_long = ValidateKey(std::string(1025, 'k'));
  EXPECT_EQ(too_long.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(too_long.message().find("1025"), std::string::npos) << too_long.message();
  Status nul = ValidateKey(std::string("a\0b", 3));
  EXPECT_EQ(nul.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(nul.message().find("'a\\x00b'"), std::string::npos) << nul.message();
  for (const char* bad :
       {"\xff", "\xc0\xaf", "\xe0\x80\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xc3", "a\x80"}) {
    EXPECT_EQ(ValidateKey(bad).code(), StatusCode::kInvalidArgument) << bad;
  }
}

TEST(BucketNamesTest, FollowS3Rules) {
  for (const char* good : {"abc", "my-bucket", "data.v2", "0-9"}) {
    EXPECT_TRUE(ValidateBucketName(good).ok()) << good;
  }
  for (const char* bad : {"ab", "Data", "-abc", "abc-", "a..b", "a_b", "a/b", "..", "a b"}) {
    EXPECT_EQ(ValidateBucketName(bad).code(), StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_TRUE(ValidateBucketName(std::string(63, 'a')).ok());
  EXPECT_FALSE(ValidateBucketName(std::string(64, 'a')).ok());
}

TEST(ObjectMetadataTest, NamesValuesAndSize) {
  EXPECT_TRUE(ValidateMetadata({{"owner", "ml-team"}, {"run_id", "42"}}).ok());
  EXPECT_FALSE(ValidateMetadata({{"Owner", "x"}}).ok());
  EXPECT_FALSE(ValidateMetadata({{"a", "line\nbreak"}}).ok());
  EXPECT_FALSE(ValidateMetadata({{"a", std::string(3000, 'v')}}).ok());
  EXPECT_TRUE(ValidateContentType("text/plain; charset=utf-8").ok());
  EXPECT_FALSE(ValidateContentType("text/plain\r\nX-Evil: 1").ok());
}

TEST(Crc32cTest, KnownValuesAndIncremental) {
  EXPECT_EQ(Crc32c("123456789"), 0xe3069283u);
  EXPECT_EQ(Crc32c(""), 0u);
  EXPECT_EQ(Crc32c(std::string(32, '\0')), 0x8a9136aau);  // RFC 3720 B.4
  std::string data;
  for (int i = 0; i < 100'003; ++i) data.push_back(static_cast<char>(i * 7 + i / 13));
  uint32_t whole = Crc32c(data);
  uint32_t pieces = 0;
  for (size_t at = 0; at < data.size(); at += 997) pieces = Crc32c(data.substr(at, 997), pieces);
  EXPECT_EQ(pieces, whole);
}

TEST(BlobFormatTest, TrailerRoundTripsAndDamageIsNamed) {
  const uint64_t size = 2 * kBlockBytes + 5;
  std::string trailer = EncodeTrailer(size, {1, 2, 3});
  const uint64_t file_bytes = size + trailer.size();
  ASSERT_EQ(trailer.size(), 3 * 4 + kFooterBytes);
  auto footer = DecodeFooter(trailer.substr(trailer.size() - kFooterBytes), file_bytes);
  ASSERT_TRUE(footer.ok()) << footer.status().ToString();
  EXPECT_EQ(footer->size, size);
  auto table = DecodeTable(trailer.substr(0, 12), *footer);
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  EXPECT_EQ(*table, (std::vector<uint32_t>{1, 2, 3}));

  EXPECT_FALSE(DecodeFooter(trailer.substr(trailer.size() - kFooterBytes), file_bytes + 1).ok());
  std::string damaged = trailer;
  damaged[0] ^= 1;
  EXPECT_FALSE(DecodeTable(damaged.substr(0, 12), *footer).ok());
  damaged = trailer;
  damaged[trailer.size() - kFooterBytes] = 'X';  // the magic
  EXPECT_FALSE(DecodeFooter(damaged.substr(damaged.size() - kFooterBytes), file_bytes).ok());
}

}  // namespace
}  // namespace tf::objects
