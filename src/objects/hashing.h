// MD5 (the ETag) and SHA-256 (the stored checksum) of content fed to it piece by piece.
#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace tf::objects {

class ContentHasher {
 public:
  ContentHasher();
  ~ContentHasher();
  ContentHasher(const ContentHasher&) = delete;
  ContentHasher& operator=(const ContentHasher&) = delete;

  void Update(std::string_view data);
  // Both digests in hex. Call once, after the last Update.
  void Finish(std::string* md5_hex, std::string* sha256_hex);

 private:
  struct Contexts;
  std::unique_ptr<Contexts> contexts_;
};

}  // namespace tf::objects
