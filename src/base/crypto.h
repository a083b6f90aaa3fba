// Random identifiers and digests (OpenSSL underneath).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tf {

// Fills `out` with `n` bytes from the CSPRNG (OpenSSL's; small requests are served from a block
// of its output kept per thread).
void RandomBytes(void* out, size_t n);
// `n` bytes from the CSPRNG, hex encoded (2n characters).
std::string RandomHex(size_t n);
// A uniformly random 64-bit value from the CSPRNG.
uint64_t RandomU64();

std::string Sha256Hex(std::string_view data);
std::string Md5Hex(std::string_view data);
std::string HexEncode(std::string_view bytes);
// Standard base64 with padding (RFC 4648, section 4).
std::string Base64Encode(std::string_view bytes);
// The bytes of standard base64 with padding; nullopt for anything else.
std::optional<std::string> Base64Decode(std::string_view in);

// Whether two secrets are the same, in a time that depends on their lengths only.
bool SecretsEqual(std::string_view a, std::string_view b);

}  // namespace tf
