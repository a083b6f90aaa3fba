#include "objects/checksums.h"

#include <openssl/evp.h>
#include <zlib.h>

#include <array>

#include "objects/crc32c.h"

namespace tf::objects {
namespace {

struct Named {
  std::string_view name;
  ChecksumAlgorithm algorithm;
  size_t bytes;
};
constexpr Named kAlgorithms[] = {{"crc32", ChecksumAlgorithm::kCrc32, 4},
                                 {"crc32c", ChecksumAlgorithm::kCrc32c, 4},
                                 {"crc64nvme", ChecksumAlgorithm::kCrc64Nvme, 8},
                                 {"sha1", ChecksumAlgorithm::kSha1, 20},
                                 {"sha256", ChecksumAlgorithm::kSha256, 32}};

std::array<uint64_t, 256> Crc64NvmeTable() {
  constexpr uint64_t kReflectedPolynomial = 0x9a6c9329ac4bc9b5ULL;  // 0xad93d23594c93659
  std::array<uint64_t, 256> table{};
  for (uint64_t i = 0; i < 256; ++i) {
    uint64_t c = i;
    for (int bit = 0; bit < 8; ++bit) c = (c & 1) ? (c >> 1) ^ kReflectedPolynomial : c >> 1;
    table[i] = c;
  }
  return table;
}

std::string BigEndian(uint64_t value, size_t bytes) {
  std::string out(bytes, '\0');
  for (size_t i = 0; i < bytes; ++i) {
    out[bytes - 1 - i] = static_cast<char>(value >> (8 * i));
  }
  return out;
}

}  // namespace

std::optional<ChecksumAlgorithm> ChecksumAlgorithmNamed(std::string_view lower_name) {
  for (const Named& n : kAlgorithms) {
    if (n.name == lower_name) return n.algorithm;
  }
  return std::nullopt;
}

std::string_view ChecksumName(ChecksumAlgorithm algorithm) {
  for (const Named& n : kAlgorithms) {
    if (n.algorithm == algorithm) return n.name;
  }
  return "";
}

size_t ChecksumBytes(ChecksumAlgorithm algorithm) {
  for (const Named& n : kAlgorithms) {
    if (n.algorithm == algorithm) return n.bytes;
  }
  return 0;
}

uint64_t Crc64Nvme(std::string_view data, uint64_t crc) {
  static const std::array<uint64_t, 256> kTable = Crc64NvmeTable();
  uint64_t c = ~crc;
  for (unsigned char byte : data) c = kTable[(c ^ byte) & 0xff] ^ (c >> 8);
  return ~c;
}

struct ContentChecksum::Digest {
  EVP_MD_CTX* context = EVP_MD_CTX_new();
  ~Digest() { EVP_MD_CTX_free(context); }
};

ContentChecksum::ContentChecksum(ChecksumAlgorithm algorithm) : algorithm_(algorithm) {
  if (algorithm == ChecksumAlgorithm::kSha1 || algorithm == ChecksumAlgorithm::kSha256) {
    digest_ = std::make_unique<Digest>();
    EVP_DigestInit_ex(digest_->context,
                      algorithm == ChecksumAlgorithm::kSha1 ? EVP_sha1() : EVP_sha256(), nullptr);
  }
}

ContentChecksum::~ContentChecksum() = default;

void ContentChecksum::Update(std::string_view data) {
  switch (algorithm_) {
    case ChecksumAlgorithm::kNone:
      return;
    case ChecksumAlgorithm::kCrc32:
      // zlib takes lengths as uInt: feed it at most 1 GiB at a time.
      while (!data.empty()) {
        const size_t n = std::min<size_t>(data.size(), size_t{1} << 30);
        crc_ = crc32(static_cast<uLong>(crc_), reinterpret_cast<const Bytef*>(data.data()),
                     static_cast<uInt>(n));
        data.remove_prefix(n);
      }
      return;
    case ChecksumAlgorithm::kCrc32c:
      crc_ = Crc32c(data, static_cast<uint32_t>(crc_));
      return;
    case ChecksumAlgorithm::kCrc64Nvme:
      crc_ = Crc64Nvme(data, crc_);
      return;
    case ChecksumAlgorithm::kSha1:
    case ChecksumAlgorithm::kSha256:
      EVP_DigestUpdate(digest_->context, data.data(), data.size());
      return;
  }
}

std::string ContentChecksum::Finish() {
  if (digest_) {
    unsigned char out[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    EVP_DigestFinal_ex(digest_->context, out, &len);
    return std::string(reinterpret_cast<char*>(out), len);
  }
  return BigEndian(crc_, ChecksumBytes(algorithm_));
}

}  // namespace tf::objects
