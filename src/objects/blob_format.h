// The layout of a blob file (docs/objects.md): the content, one CRC-32C per block of content,
// and a fixed-size footer.
//
//   [content: size bytes]
//   [CRC-32C of each kBlockBytes block of content, the last block possibly short: 4 bytes LE]
//   [footer: "TFBLOB01" | size: u64 LE | block bytes: u32 LE | CRC-32C of the CRC table: u32 LE]
//
// Readers check every block they return against its CRC, so a corrupted file yields an error,
// never wrong bytes, and a range read costs at most two extra partial blocks.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace tf::objects {

inline constexpr uint32_t kBlockBytes = 1 << 20;
inline constexpr size_t kFooterBytes = 24;

struct BlobFooter {
  uint64_t size = 0;  // content bytes
  uint32_t block_bytes = 0;
  uint32_t table_crc = 0;
};

inline uint64_t BlockCount(uint64_t size, uint32_t block_bytes) {
  return (size + block_bytes - 1) / block_bytes;
}

// The bytes that follow the content: the CRC table, then the footer.
std::string EncodeTrailer(uint64_t size, const std::vector<uint32_t>& block_crcs);

// kInternal, naming what is wrong, unless `bytes` is a well-formed footer of a file of
// `file_bytes` bytes.
Result<BlobFooter> DecodeFooter(std::string_view bytes, uint64_t file_bytes);

// The block CRCs, checked against footer.table_crc.
Result<std::vector<uint32_t>> DecodeTable(std::string_view bytes, const BlobFooter& footer);

// The whole blocks covering content bytes [offset, offset + n), n > 0: blocks [first, end),
// which are content bytes [start, stop) (the last block may be short).
struct BlockSpan {
  uint64_t first = 0, end = 0;
  uint64_t start = 0, stop = 0;
};
BlockSpan CoverBlocks(const BlobFooter& footer, uint64_t offset, uint64_t n);

// Checks `bytes`, the content of span's blocks, against their CRCs: kInternal naming `blob` and
// the first block that does not match.
Status CheckBlocks(std::string_view bytes, const BlockSpan& span, const BlobFooter& footer,
                   const std::vector<uint32_t>& crcs, std::string_view blob);

}  // namespace tf::objects
