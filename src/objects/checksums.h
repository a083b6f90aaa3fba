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

// How a multipart upload's object gets its checksum from its parts' (S3's x-amz-checksum-type).
//  - kComposite: the checksum of the parts' checksums, shown with "-<parts>" after it.
//  - kFullObject: the checksum of the whole content, combined from the parts' CRCs and sizes
//    without reading the content again (CRCs only).
enum class ChecksumType { kComposite, kFullObject };

// "COMPOSITE" or "FULL_OBJECT", as S3 names them; nullopt for another name.
std::optional<ChecksumType> ChecksumTypeNamed(std::string_view name);
std::string_view ChecksumTypeName(ChecksumType type);

// Whether `algorithm` is a CRC: the checksum of content can be combined from its pieces'.
bool IsCrc(ChecksumAlgorithm algorithm);

// The CRC bytes (as ContentChecksum::Finish gives them) of content A followed by content B, from
// A's CRC bytes, B's CRC bytes and B's size. `algorithm` must be a CRC, and both checksums of
// its size.
std::string CombineCrcs(ChecksumAlgorithm algorithm, std::string_view first,
                        std::string_view second, uint64_t second_size);

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
