// The aws-chunked body of a request signed STREAMING-AWS4-HMAC-SHA256-PAYLOAD:
//
//   <hex size>;chunk-signature=<64 hex>\r\n<size bytes>\r\n ... 0;chunk-signature=<64 hex>\r\n\r\n
//
// Each chunk's signature covers its bytes and the signature before it (sigv4.h,
// ChunkStringToSign), so the chunks can be neither altered, reordered, dropped nor added to.
//
// Or of one sent STREAMING-UNSIGNED-PAYLOAD-TRAILER (what the newer AWS SDKs send over HTTPS):
// unsigned chunks, and after the last trailing headers, typically the body's checksum:
//
//   <hex size>\r\n<size bytes>\r\n ... 0\r\nx-amz-checksum-crc32:<base64>\r\n\r\n
//
// Or of one sent STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER: signed chunks, then trailing
// headers signed in their turn, chained to the final chunk's signature:
//
//   ... 0;chunk-signature=<64 hex>\r\nx-amz-checksum-crc32:<base64>\r\n
//   x-amz-trailer-signature:<64 hex>\r\n\r\n
//
// Incremental and free of I/O: fed whatever the network delivers; the fuzzer drives it too.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "base/sha256_stream.h"
#include "base/status.h"
#include "s3/sigv4.h"

namespace tf::s3 {

// Not thread-safe.
class AwsChunkedDecoder {
 public:
  // signing_key: from SigningKey(); seed_signature: the request's own signature. With
  // `signed_trailer`, signed trailing headers follow the final chunk.
  AwsChunkedDecoder(std::string signing_key, std::string amz_date, std::string scope,
                    std::string seed_signature, bool signed_trailer = false);
  // For unsigned chunks followed by trailing headers.
  struct UnsignedWithTrailer {};
  explicit AwsChunkedDecoder(UnsignedWithTrailer);
  ~AwsChunkedDecoder();

  // Decodes `in`, appending content to *out. A chunk's bytes are handed out as they arrive,
  // before its signature (which follows them) can be checked: nothing may be kept until done().
  // kInvalidArgument for a malformed body (the message says where), kUnauthenticated for a
  // chunk whose signature does not match. After an error every later call fails too.
  Status Feed(std::string_view in, std::string* out);

  // The final, empty chunk has been read and every signature matched (and the trailing
  // headers, where they come: their signature too, when signed).
  bool done() const { return state_ == State::kDone; }
  uint64_t decoded_bytes() const { return decoded_; }
  // The trailing headers, by lower-case name (without x-amz-trailer-signature), once done().
  const std::map<std::string, std::string>& trailers() const { return trailers_; }

  // A chunk header line longer than this is refused (a real one is about 90 bytes), as is a
  // trailing header line.
  static constexpr size_t kMaxHeaderBytes = 256;
  static constexpr size_t kMaxTrailers = 8;

 private:
  enum class State { kHeader, kData, kDataEnd, kFinalEnd, kTrailer, kDone, kFailed };
  Status Fail(Status s);
  Status ParseHeader();
  Status CheckSignature();
  Status ParseTrailer();
  Status CheckTrailerSignature();
  // Moves `in` into line_ up to and with its next '\n': true once line_ holds a whole line.
  // kInvalidArgument, naming `what`, for a line longer than kMaxHeaderBytes.
  Result<bool> GatherLine(std::string_view& in, const std::string& what);

  const bool signed_ = true;
  const bool trailer_ = true;  // trailing headers follow the final chunk
  const std::string key_, date_, scope_;
  std::string previous_;  // the last signature checked (the seed at first)
  State state_ = State::kHeader;
  std::string line_;        // the header line or CRLF being gathered
  std::string signature_;   // the current chunk's claimed signature
  uint64_t remaining_ = 0;  // bytes of the current chunk still to come
  uint64_t decoded_ = 0;
  uint64_t chunks_ = 0;
  std::unique_ptr<Sha256Stream> hasher_;  // of the current chunk
  std::map<std::string, std::string> trailers_;
  std::string trailer_signature_;  // signed trailers: the claimed signature, once read
  Status failed_;
};

}  // namespace tf::s3
