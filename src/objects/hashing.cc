#include "objects/hashing.h"

#include <openssl/evp.h>

#include "base/crypto.h"

namespace tf::objects {

struct ContentHasher::Contexts {
  EVP_MD_CTX* md5 = EVP_MD_CTX_new();
  EVP_MD_CTX* sha256 = EVP_MD_CTX_new();
  ~Contexts() {
    EVP_MD_CTX_free(md5);
    EVP_MD_CTX_free(sha256);
  }
};

ContentHasher::ContentHasher() : contexts_(std::make_unique<Contexts>()) {
  EVP_DigestInit_ex(contexts_->md5, EVP_md5(), nullptr);
  EVP_DigestInit_ex(contexts_->sha256, EVP_sha256(), nullptr);
}

ContentHasher::~ContentHasher() = default;

void ContentHasher::Update(std::string_view data) {
  UpdateMd5(data);
  UpdateSha256(data);
}

void ContentHasher::UpdateMd5(std::string_view data) {
  EVP_DigestUpdate(contexts_->md5, data.data(), data.size());
}

void ContentHasher::UpdateSha256(std::string_view data) {
  EVP_DigestUpdate(contexts_->sha256, data.data(), data.size());
}

void ContentHasher::Finish(std::string* md5_hex, std::string* sha256_hex) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_DigestFinal_ex(contexts_->md5, out, &len);
  *md5_hex = HexEncode(std::string_view(reinterpret_cast<char*>(out), len));
  EVP_DigestFinal_ex(contexts_->sha256, out, &len);
  *sha256_hex = HexEncode(std::string_view(reinterpret_cast<char*>(out), len));
}

struct Sha256Hasher::Context {
  EVP_MD_CTX* sha256 = EVP_MD_CTX_new();
  ~Context() { EVP_MD_CTX_free(sha256); }
};

Sha256Hasher::Sha256Hasher() : context_(std::make_unique<Context>()) {
  EVP_DigestInit_ex(context_->sha256, EVP_sha256(), nullptr);
}

Sha256Hasher::~Sha256Hasher() = default;

void Sha256Hasher::Update(std::string_view data) {
  EVP_DigestUpdate(context_->sha256, data.data(), data.size());
}

std::string Sha256Hasher::FinishHex() {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_DigestFinal_ex(context_->sha256, out, &len);
  return HexEncode(std::string_view(reinterpret_cast<char*>(out), len));
}

}  // namespace tf::objects
