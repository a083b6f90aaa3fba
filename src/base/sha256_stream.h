// SHA-256 of content fed piece by piece, and of whole files read in pieces: for checking
// transfers end to end, naming checkpoint content by what it holds, and the chunks of S3's
// signed bodies. (The object service's ETag and checksum digests are objects/hashing.h.)
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"

namespace tf {

class Sha256Stream {
 public:
  Sha256Stream();
  ~Sha256Stream();
  Sha256Stream(const Sha256Stream&) = delete;
  Sha256Stream& operator=(const Sha256Stream&) = delete;

  void Update(std::string_view data);
  // The digest in hex. Call once, after the last Update.
  std::string FinishHex();

 private:
  struct Context;
  std::unique_ptr<Context> context_;
};

// The SHA-256 (hex) of the file at `path`, read in 1 MiB pieces. kNotFound if it is missing,
// kInvalidArgument if it cannot be read.
Result<std::string> Sha256OfFile(const std::filesystem::path& path);

// Whether `s` is 64 lowercase hex digits.
bool IsSha256Hex(std::string_view s);

}  // namespace tf
