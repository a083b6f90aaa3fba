// Digests of content fed piece by piece: MD5 (the ETag) and SHA-256 (the stored checksum).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"
#include "objects/checksums.h"

namespace tf::objects {

class ContentHasher {
 public:
  ContentHasher();
  ~ContentHasher();
  ContentHasher(const ContentHasher&) = delete;
  ContentHasher& operator=(const ContentHasher&) = delete;

  void Update(std::string_view data);
  // Update for one digest only: the two may run on two threads at once.
  void UpdateMd5(std::string_view data);
  void UpdateSha256(std::string_view data);
  // Both digests in hex. Call once, after the last Update.
  void Finish(std::string* md5_hex, std::string* sha256_hex);

  // Also takes a checksum a client sent (x-amz-checksum-*), before the first Update: fed by
  // Update and HashWhileWriting with the rest.
  void AlsoChecksum(ChecksumAlgorithm algorithm);
  ContentChecksum* checksum() { return checksum_.get(); }
  // The checksum's bytes ("" if none was asked for), when `expected` is "" or they are
  // `expected`; kInvalidArgument saying "checksum" and both values (hex) otherwise. Call once,
  // after the last Update.
  Result<std::string> FinishChecksum(const std::string& expected);

 private:
  struct Contexts;
  std::unique_ptr<Contexts> contexts_;
  std::unique_ptr<ContentChecksum> checksum_;
};

// Runs `write` while the two digests of `data` are computed on two other threads (each takes
// about as long as writing it), and returns what `write` returned.
Status HashWhileWriting(ContentHasher& hasher, std::string_view data,
                        const std::function<Status()>& write);

}  // namespace tf::objects
