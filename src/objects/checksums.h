// The additional checksums S3 clients may send with content (x-amz-checksum-crc32, -crc32c,
// -crc64nvme, -sha1, -sha256), checked when an upload commits.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace tf::objects {

enum class ChecksumAlgorithm { kNone, kCrc32, kCrc32c, kCrc64Nvme, kSha1, kSha256 };

// The algorithm of a header's suffix ("crc32", as in x-amz-checksum-crc32); nullopt if none.
std::optional<ChecksumAlgorithm> ChecksumAlgorithmNamed(std::string_view lower_name);
// "crc32", "crc32c", "crc64nvme", "sha1", "sha256" ("" for kNone).
std::string_view ChecksumName(ChecksumAlgorithm algorithm);
// How many bytes the checksum has (4, 4, 8, 20, 32; 0 for kNone).
size_t ChecksumBytes(ChecksumAlgorithm algorithm);

// CRC-64/NVME (reflected, polynomial 0xad93d23594c93659, initial value and final xor all ones)
// of `data` appended to data whose CRC is `crc` (0 for the start).
// Crc64Nvme("123456789") == 0xae8b14860a799888.
uint64_t Crc64Nvme(std::string_view data, uint64_t crc = 0);

// One checksum of content fed piece by piece.
class ContentChecksum {
 public:
  explicit ContentChecksum(ChecksumAlgorithm algorithm);
  ~ContentChecksum();
  ContentChecksum(const ContentChecksum&) = delete;
  ContentChecksum& operator=(const ContentChecksum&) = delete;

  ChecksumAlgorithm algorithm() const { return algorithm_; }
  void Update(std::string_view data);
  // The checksum's bytes as S3 sends them base64-encoded: a CRC big-endian, a digest as is.
  // Call once, after the last Update.
  std::string Finish();

 private:
  struct Digest;
  ChecksumAlgorithm algorithm_;
  uint64_t crc_ = 0;
  std::unique_ptr<Digest> digest_;  // SHA-1 and SHA-256
};

}  // namespace tf::objects
