#include "base/sha256_stream.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "base/crypto.h"

namespace tf {

struct Sha256Stream::Context {
  EVP_MD_CTX* md = EVP_MD_CTX_new();
  ~Context() { EVP_MD_CTX_free(md); }
};

Sha256Stream::Sha256Stream() : context_(std::make_unique<Context>()) {
  EVP_DigestInit_ex(context_->md, EVP_sha256(), nullptr);
}

Sha256Stream::~Sha256Stream() = default;

void Sha256Stream::Update(std::string_view data) {
  EVP_DigestUpdate(context_->md, data.data(), data.size());
}

std::string Sha256Stream::FinishHex() {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_DigestFinal_ex(context_->md, out, &len);
  return HexEncode(std::string_view(reinterpret_cast<const char*>(out), len));
}

Result<std::string> Sha256OfFile(const std::filesystem::path& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    Status s(errno == ENOENT ? StatusCode::kNotFound : StatusCode::kInvalidArgument,
             "cannot open " + path.string() + ": " + std::strerror(errno));
    return s;
  }
  Sha256Stream sha;
  std::vector<char> buffer(1 << 20);
  for (;;) {
    ssize_t n = ::read(fd, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      Status s = InvalidArgument("cannot read " + path.string() + ": " + std::strerror(errno));
      ::close(fd);
      return s;
    }
    if (n == 0) break;
    sha.Update(std::string_view(buffer.data(), static_cast<size_t>(n)));
  }
  ::close(fd);
  return sha.FinishHex();
}

bool IsSha256Hex(std::string_view s) {
  if (s.size() != 64) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

}  // namespace tf
