#include "base/crypto.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <vector>

namespace tf {
namespace {

void CsprngBytes(unsigned char* out, size_t n) {
  if (RAND_bytes(out, static_cast<int>(n)) != 1) {
    // Without randomness no token or receipt is safe to hand out; this is unrecoverable.
    throw std::runtime_error("RAND_bytes failed: the system random source is unavailable");
  }
}

// Small requests (ids, receipts: 8-16 bytes, many per request) are served from a block of
// CSPRNG output kept per thread, so that each does not pay for a RAND_bytes call (its locks and
// provider lookups). Served bytes are wiped from the block. A forked child never reuses its
// parent's block: the fork bumps the generation, and a block of an older one is refilled.
constexpr size_t kRandomBlock = 1024;
std::atomic<uint64_t> fork_generation{0};

struct RandomBlock {
  unsigned char bytes[kRandomBlock];
  size_t used = kRandomBlock;  // nothing left until the first fill
  uint64_t generation = 0;
  ~RandomBlock() { OPENSSL_cleanse(bytes, sizeof bytes); }
};

void FillRandom(unsigned char* out, size_t n) {
  static std::once_flag at_fork;
  std::call_once(at_fork,
                 [] { pthread_atfork(nullptr, nullptr, [] { fork_generation.fetch_add(1); }); });
  if (n > kRandomBlock / 4) {
    CsprngBytes(out, n);
    return;
  }
  thread_local RandomBlock block;
  const uint64_t generation = fork_generation.load(std::memory_order_relaxed);
  if (block.generation != generation || kRandomBlock - block.used < n) {
    CsprngBytes(block.bytes, kRandomBlock);
    block.used = 0;
    block.generation = generation;
  }
  std::memcpy(out, block.bytes + block.used, n);
  OPENSSL_cleanse(block.bytes + block.used, n);
  block.used += n;
}

// A digest's implementation fetched once: EVP_sha256() and EVP_md5() look it up again on every
// use in OpenSSL 3. Falls back to those if the fetch fails.
const EVP_MD* FetchOr(const char* name, const EVP_MD* fallback) {
  const EVP_MD* md = EVP_MD_fetch(nullptr, name, nullptr);
  return md != nullptr ? md : fallback;
}

// With a context reused by the thread.
std::string Digest(const EVP_MD* md, std::string_view data) {
  thread_local struct Held {
    EVP_MD_CTX* ctx = EVP_MD_CTX_new();
    ~Held() { EVP_MD_CTX_free(ctx); }
  } held;
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (held.ctx == nullptr || EVP_DigestInit_ex2(held.ctx, md, nullptr) != 1 ||
      EVP_DigestUpdate(held.ctx, data.data(), data.size()) != 1 ||
      EVP_DigestFinal_ex(held.ctx, out, &len) != 1) {
    if (EVP_Digest(data.data(), data.size(), out, &len, md, nullptr) != 1) {
      throw std::runtime_error("OpenSSL could not compute a digest");
    }
  }
  return HexEncode(std::string_view(reinterpret_cast<char*>(out), len));
}

}  // namespace

void RandomBytes(void* out, size_t n) { FillRandom(static_cast<unsigned char*>(out), n); }

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

std::string Sha256Hex(std::string_view data) {
  static const EVP_MD* const kSha256 = FetchOr("SHA256", EVP_sha256());
  return Digest(kSha256, data);
}

std::string Md5Hex(std::string_view data) {
  static const EVP_MD* const kMd5 = FetchOr("MD5", EVP_md5());
  return Digest(kMd5, data);
}

std::string Base64Encode(std::string_view bytes) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    const size_t n = std::min<size_t>(3, bytes.size() - i);
    uint32_t bits = 0;
    for (size_t k = 0; k < 3; ++k) {
      bits = (bits << 8) | (k < n ? static_cast<unsigned char>(bytes[i + k]) : 0u);
    }
    for (size_t k = 0; k < 4; ++k) {
      out.push_back(k <= n ? kAlphabet[(bits >> (18 - 6 * k)) & 0x3f] : '=');
    }
  }
  return out;
}

std::optional<std::string> Base64Decode(std::string_view in) {
  if (in.size() % 4 != 0) return std::nullopt;
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  std::string out;
  for (size_t i = 0; i < in.size(); i += 4) {
    int v[4];
    int pad = 0;
    for (int k = 0; k < 4; ++k) {
      char c = in[i + k];
      if (c == '=' && i + 4 == in.size() && k >= 2) {
        v[k] = 0;
        ++pad;
        continue;
      }
      if (pad > 0 || (v[k] = value(c)) < 0) return std::nullopt;
    }
    uint32_t bits = (v[0] << 18) | (v[1] << 12) | (v[2] << 6) | v[3];
    out.push_back(static_cast<char>(bits >> 16));
    if (pad < 2) out.push_back(static_cast<char>((bits >> 8) & 0xff));
    if (pad < 1) out.push_back(static_cast<char>(bits & 0xff));
  }
  return out;
}

bool SecretsEqual(std::string_view a, std::string_view b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace tf
