#include "objects/hashing.h"

#include <openssl/evp.h>

#include <future>
#include <system_error>

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
  if (checksum_) checksum_->Update(data);
}

void ContentHasher::AlsoChecksum(ChecksumAlgorithm algorithm) {
  checksum_ = algorithm == ChecksumAlgorithm::kNone ? nullptr
                                                    : std::make_unique<ContentChecksum>(algorithm);
}

Result<std::string> ContentHasher::FinishChecksum(const std::string& expected) {
  if (!checksum_) return std::string();
  std::string got = checksum_->Finish();
  if (expected.empty() || got == expected) return got;
  const std::string name(ChecksumName(checksum_->algorithm()));
  return InvalidArgument("the content's " + name + " checksum is " + HexEncode(got) +
                         ", not the expected " + HexEncode(expected));
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

Status HashWhileWriting(ContentHasher& hasher, std::string_view data,
                        const std::function<Status()>& write) {
  // MD5, SHA-256 and the write (with its CRC) each take about as long: run them side by side.
  // Starting two threads a megabyte costs far less than either digest.
  std::future<void> md5, sha256;
  try {
    md5 = std::async(std::launch::async, [&] { hasher.UpdateMd5(data); });
    sha256 = std::async(std::launch::async, [&] { hasher.UpdateSha256(data); });
  } catch (const std::system_error&) {  // no thread to be had: do it here
    if (!md5.valid()) hasher.UpdateMd5(data);
    if (!sha256.valid()) hasher.UpdateSha256(data);
  }
  Status written = write();
  if (ContentChecksum* checksum = hasher.checksum()) checksum->Update(data);
  if (md5.valid()) md5.wait();
  if (sha256.valid()) sha256.wait();
  return written;
}

}  // namespace tf::objects
