// The additional checksums S3 clients send with content: each algorithm's known value, and the
// same checksum whether the content comes whole or in pieces.
#include <gtest/gtest.h>

#include <vector>

#include "base/crypto.h"
#include "objects/checksums.h"
#include "objects/hashing.h"

namespace tf::objects {
namespace {

std::string ChecksumHex(ChecksumAlgorithm algorithm, std::string_view data) {
  ContentChecksum c(algorithm);
  c.Update(data);
  return HexEncode(c.Finish());
}

TEST(ChecksumsTest, EachAlgorithmGivesItsCheckValue) {
  const std::string check = "123456789";
  EXPECT_EQ(ChecksumHex(ChecksumAlgorithm::kCrc32, check), "cbf43926");
  EXPECT_EQ(ChecksumHex(ChecksumAlgorithm::kCrc32c, check), "e3069283");
  EXPECT_EQ(ChecksumHex(ChecksumAlgorithm::kCrc64Nvme, check), "ae8b14860a799888");
  EXPECT_EQ(ChecksumHex(ChecksumAlgorithm::kSha1, check),
            "f7c3bc1d808e04732adf679965ccc34ca7ae3441");
  EXPECT_EQ(ChecksumHex(ChecksumAlgorithm::kSha256, check),
            "15e2b0d3c33891ebb0f1ef609ec419420c20e320ce94c65fbc8c3312448eb225");
  EXPECT_EQ(Crc64Nvme(check), 0xae8b14860a799888ULL);
  EXPECT_EQ(ChecksumHex(ChecksumAlgorithm::kCrc32, ""), "00000000");
}

TEST(ChecksumsTest, PiecesGiveTheChecksumOfTheWhole) {
  std::string data(3 << 20, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 131 + (i >> 9));
  for (auto algorithm :
       {ChecksumAlgorithm::kCrc32, ChecksumAlgorithm::kCrc32c, ChecksumAlgorithm::kCrc64Nvme,
        ChecksumAlgorithm::kSha1, ChecksumAlgorithm::kSha256}) {
    ContentChecksum pieces(algorithm);
    for (size_t at = 0; at < data.size(); at += 700'001) {
      pieces.Update(std::string_view(data).substr(at, 700'001));
    }
    EXPECT_EQ(HexEncode(pieces.Finish()), ChecksumHex(algorithm, data)) << ChecksumName(algorithm);
  }
}

// What a FULL_OBJECT multipart checksum rests on: the CRC of the whole, from the pieces' CRCs.
TEST(ChecksumsTest, CrcsOfPiecesCombineIntoTheCrcOfTheWhole) {
  std::string data(2 << 20, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 7919 + (i >> 11));
  // Splits at the ends (an empty piece on either side), at odd sizes and at a power of two.
  const std::vector<size_t> splits = {0, 1, 3, 4096, 1'000'003, data.size() - 1, data.size()};
  for (auto algorithm :
       {ChecksumAlgorithm::kCrc32, ChecksumAlgorithm::kCrc32c, ChecksumAlgorithm::kCrc64Nvme}) {
    ASSERT_TRUE(IsCrc(algorithm));
    const std::string whole = ChecksumHex(algorithm, data);
    for (size_t split : splits) {
      ContentChecksum first(algorithm), second(algorithm);
      first.Update(std::string_view(data).substr(0, split));
      second.Update(std::string_view(data).substr(split));
      EXPECT_EQ(
          HexEncode(CombineCrcs(algorithm, first.Finish(), second.Finish(), data.size() - split)),
          whole)
          << ChecksumName(algorithm) << " split at " << split;
    }
    // Three pieces, combined left to right as Complete does with parts.
    ContentChecksum a(algorithm), b(algorithm), c(algorithm);
    a.Update(std::string_view(data).substr(0, 5));
    b.Update(std::string_view(data).substr(5, 700'000));
    c.Update(std::string_view(data).substr(700'005));
    std::string combined = CombineCrcs(algorithm, a.Finish(), b.Finish(), 700'000);
    combined = CombineCrcs(algorithm, combined, c.Finish(), data.size() - 700'005);
    EXPECT_EQ(HexEncode(combined), whole) << ChecksumName(algorithm);
  }
  EXPECT_FALSE(IsCrc(ChecksumAlgorithm::kSha256));
  EXPECT_FALSE(IsCrc(ChecksumAlgorithm::kNone));
}

TEST(ChecksumsTest, NamesAndSizesAreS3s) {
  EXPECT_EQ(ChecksumTypeNamed("FULL_OBJECT"), ChecksumType::kFullObject);
  EXPECT_EQ(ChecksumTypeNamed("COMPOSITE"), ChecksumType::kComposite);
  EXPECT_FALSE(ChecksumTypeNamed("full_object").has_value());
  EXPECT_EQ(ChecksumTypeName(ChecksumType::kFullObject), "FULL_OBJECT");
  EXPECT_EQ(ChecksumAlgorithmNamed("crc64nvme"), ChecksumAlgorithm::kCrc64Nvme);
  EXPECT_EQ(ChecksumAlgorithmNamed("sha256"), ChecksumAlgorithm::kSha256);
  EXPECT_FALSE(ChecksumAlgorithmNamed("algorithm").has_value());
  EXPECT_FALSE(ChecksumAlgorithmNamed("md5").has_value());
  EXPECT_EQ(ChecksumBytes(ChecksumAlgorithm::kCrc32), 4u);
  EXPECT_EQ(ChecksumBytes(ChecksumAlgorithm::kCrc64Nvme), 8u);
  EXPECT_EQ(ChecksumBytes(ChecksumAlgorithm::kSha1), 20u);
}

TEST(ChecksumsTest, TheHasherChecksTheChecksumItWasAskedFor) {
  ContentHasher hasher;
  hasher.AlsoChecksum(ChecksumAlgorithm::kCrc32);
  ASSERT_TRUE(HashWhileWriting(hasher, "1234", [] { return OkStatus(); }).ok());
  hasher.Update("56789");
  std::string md5, sha256;
  hasher.Finish(&md5, &sha256);
  auto got = hasher.FinishChecksum(std::string("\xcb\xf4\x39\x26", 4));
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(*got, std::string("\xcb\xf4\x39\x26", 4));

  ContentHasher wrong;
  wrong.AlsoChecksum(ChecksumAlgorithm::kCrc32);
  wrong.Update("123456789");
  Status s = wrong.FinishChecksum(std::string(4, '\0')).status();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("crc32 checksum is cbf43926, not the expected 00000000"),
            std::string::npos)
      << s.ToString();

  ContentHasher computed;  // an algorithm without a value: computed, not checked
  computed.AlsoChecksum(ChecksumAlgorithm::kCrc32);
  computed.Update("123456789");
  auto sum = computed.FinishChecksum("");
  ASSERT_TRUE(sum.ok()) << sum.status().ToString();
  EXPECT_EQ(*sum, std::string("\xcb\xf4\x39\x26", 4));

  ContentHasher none;  // nothing asked for: nothing to check
  none.Update("x");
  auto nothing = none.FinishChecksum("");
  ASSERT_TRUE(nothing.ok());
  EXPECT_EQ(*nothing, "");
}

}  // namespace
}  // namespace tf::objects
