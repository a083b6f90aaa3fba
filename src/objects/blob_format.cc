#include "objects/blob_format.h"

#include <algorithm>

#include "objects/crc32c.h"

namespace tf::objects {
namespace {

constexpr std::string_view kMagic = "TFBLOB01";

void PutLe(std::string& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

uint64_t GetLe(std::string_view in, size_t at, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) {
    v |= static_cast<uint64_t>(static_cast<unsigned char>(in[at + i])) << (8 * i);
  }
  return v;
}

}  // namespace

std::string EncodeTrailer(uint64_t size, const std::vector<uint32_t>& block_crcs) {
  std::string out;
  out.reserve(block_crcs.size() * 4 + kFooterBytes);
  for (uint32_t crc : block_crcs) PutLe(out, crc, 4);
  uint32_t table_crc = Crc32c(out);
  out += kMagic;
  PutLe(out, size, 8);
  PutLe(out, kBlockBytes, 4);
  PutLe(out, table_crc, 4);
  return out;
}

Result<BlobFooter> DecodeFooter(std::string_view bytes, uint64_t file_bytes) {
  if (bytes.size() != kFooterBytes || bytes.substr(0, kMagic.size()) != kMagic) {
    return Internal("blob footer is missing or damaged");
  }
  BlobFooter f;
  f.size = GetLe(bytes, 8, 8);
  f.block_bytes = static_cast<uint32_t>(GetLe(bytes, 16, 4));
  f.table_crc = static_cast<uint32_t>(GetLe(bytes, 20, 4));
  if (f.block_bytes == 0) return Internal("blob footer has a block size of 0");
  uint64_t blocks = BlockCount(f.size, f.block_bytes);
  if (f.size > file_bytes || blocks > file_bytes ||
      f.size + blocks * 4 + kFooterBytes != file_bytes) {
    return Internal("blob of " + std::to_string(file_bytes) + " bytes does not match its footer");
  }
  return f;
}

Result<std::vector<uint32_t>> DecodeTable(std::string_view bytes, const BlobFooter& footer) {
  if (bytes.size() != BlockCount(footer.size, footer.block_bytes) * 4) {
    return Internal("blob checksum table has the wrong size");
  }
  if (Crc32c(bytes) != footer.table_crc) return Internal("blob checksum table is damaged");
  std::vector<uint32_t> crcs(bytes.size() / 4);
  for (size_t i = 0; i < crcs.size(); ++i) crcs[i] = static_cast<uint32_t>(GetLe(bytes, i * 4, 4));
  return crcs;
}

BlockSpan CoverBlocks(const BlobFooter& footer, uint64_t offset, uint64_t n) {
  const uint64_t block = footer.block_bytes;
  BlockSpan span;
  span.first = offset / block;
  span.end = (offset + n + block - 1) / block;
  span.start = span.first * block;
  span.stop = std::min<uint64_t>(span.end * block, footer.size);
  return span;
}

Status CheckBlocks(std::string_view bytes, const BlockSpan& span, const BlobFooter& footer,
                   const std::vector<uint32_t>& crcs, std::string_view blob) {
  const uint64_t block = footer.block_bytes;
  for (uint64_t b = span.first; b < span.end; ++b) {
    size_t at = static_cast<size_t>((b - span.first) * block);
    size_t len = static_cast<size_t>(std::min<uint64_t>(block, footer.size - b * block));
    if (b >= crcs.size() || at + len > bytes.size() || Crc32c(bytes.substr(at, len)) != crcs[b]) {
      return Internal("blob " + std::string(blob) + " is corrupt: block " + std::to_string(b) +
                      " does not match its checksum");
    }
  }
  return OkStatus();
}

}  // namespace tf::objects
