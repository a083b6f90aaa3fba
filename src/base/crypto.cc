#include "base/crypto.h"

#include <openssl/evp.h>
#include <openssl/rand.h>

#include <stdexcept>
#include <vector>

namespace tf {
namespace {

void FillRandom(unsigned char* out, size_t n) {
  if (RAND_bytes(out, static_cast<int>(n)) != 1) {
    // Without randomness no token or receipt is safe to hand out; this is unrecoverable.
    throw std::runtime_error("RAND_bytes failed: the system random source is unavailable");
  }
}

std::string Digest(const EVP_MD* md, std::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), out, &len, md, nullptr);
  return HexEncode(std::string_view(reinterpret_cast<char*>(out), len));
}

}  // namespace

std::string HexEncode(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

std::string RandomHex(size_t n) {
  std::vector<unsigned char> buf(n);
  FillRandom(buf.data(), n);
  return HexEncode(std::string_view(reinterpret_cast<char*>(buf.data()), n));
}

uint64_t RandomU64() {
  uint64_t v = 0;
  FillRandom(reinterpret_cast<unsigned char*>(&v), sizeof v);
  return v;
}

std::string Sha256Hex(std::string_view data) { return Digest(EVP_sha256(), data); }
std::string Md5Hex(std::string_view data) { return Digest(EVP_md5(), data); }

}  // namespace tf
