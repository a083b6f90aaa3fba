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

constexpr uint64_t kCrc32Reflected = 0xedb88320;
constexpr uint64_t kCrc32cReflected = 0x82f63b78;
constexpr uint64_t kCrc64NvmeReflected = 0x9a6c9329ac4bc9b5ULL;  // 0xad93d23594c93659

std::array<uint64_t, 256> Crc64NvmeTable() {
  std::array<uint64_t, 256> table{};
  for (uint64_t i = 0; i < 256; ++i) {
    uint64_t c = i;
    for (int bit = 0; bit < 8; ++bit) c = (c & 1) ? (c >> 1) ^ kCrc64NvmeReflected : c >> 1;
    table[i] = c;
  }
  return table;
}

// Polynomials modulo a CRC's generator, in the CRC's reflected form: the coefficient of x^0 is
// the top bit (`one`), that of x^(width-1) bit 0. The product of a and b modulo the generator,
// whose reflected low terms are `generator`.
uint64_t MultiplyModulo(uint64_t a, uint64_t b, uint64_t generator, uint64_t one) {
  uint64_t product = 0;
  for (uint64_t term = one; term != 0; term >>= 1) {  // x^0, x^1, ... of a
    if ((a & term) != 0) product ^= b;
    b = (b & 1) != 0 ? (b >> 1) ^ generator : b >> 1;  // b *= x
  }
  return product;
}

// x^(8 * bytes) modulo the generator, by squaring.
uint64_t PowerOfXForBytes(uint64_t bytes, uint64_t generator, uint64_t one) {
  uint64_t result = one;
  uint64_t power = one >> 8;  // x^8
  for (; bytes != 0; bytes >>= 1) {
    if ((bytes & 1) != 0) result = MultiplyModulo(power, result, generator, one);
    power = MultiplyModulo(power, power, generator, one);
  }
  return result;
}

uint64_t FromBigEndian(std::string_view bytes) {
  uint64_t value = 0;
  for (unsigned char c : bytes) value = (value << 8) | c;
  return value;
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

std::optional<ChecksumType> ChecksumTypeNamed(std::string_view name) {
  if (name == "COMPOSITE") return ChecksumType::kComposite;
  if (name == "FULL_OBJECT") return ChecksumType::kFullObject;
  return std::nullopt;
}

std::string_view ChecksumTypeName(ChecksumType type) {
  return type == ChecksumType::kFullObject ? "FULL_OBJECT" : "COMPOSITE";
}

bool IsCrc(ChecksumAlgorithm algorithm) {
  return algorithm == ChecksumAlgorithm::kCrc32 || algorithm == ChecksumAlgorithm::kCrc32c ||
         algorithm == ChecksumAlgorithm::kCrc64Nvme;
}

// A CRC with all-ones initial value and final xor, as these three are, of A then B is A's CRC
// times x^(8 * |B|), plus B's CRC: the initial values' effects cancel.
std::string CombineCrcs(ChecksumAlgorithm algorithm, std::string_view first,
                        std::string_view second, uint64_t second_size) {
  const bool wide = algorithm == ChecksumAlgorithm::kCrc64Nvme;
  const uint64_t generator = wide                                      ? kCrc64NvmeReflected
                             : algorithm == ChecksumAlgorithm::kCrc32c ? kCrc32cReflected
                                                                       : kCrc32Reflected;
  const uint64_t one = wide ? uint64_t{1} << 63 : uint64_t{1} << 31;
  const uint64_t shifted = MultiplyModulo(PowerOfXForBytes(second_size, generator, one),
                                          FromBigEndian(first), generator, one);
  return BigEndian(shifted ^ FromBigEndian(second), ChecksumBytes(algorithm));
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
