// A client for one bucket of an external S3-compatible service: the few signed operations that
// the S3 blob store needs (put a whole object from a source, read a range, size, delete, check
// the bucket). Blocking; thread-safe (it keeps a small pool of connections).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/mutex.h"
#include "base/status.h"
#include "http/http.h"
#include "s3/request_signer.h"

namespace tf::objects {

// Errors: kNotFound for a missing bucket or key, kPermissionDenied when the service refuses
// the credentials, kUnavailable when it cannot be reached or answers 5xx, kInternal for any
// other answer; each message names the operation, the object and S3's error code and message.
class BucketClient {
 public:
  BucketClient(s3::BucketLocation location, const Clock& clock);
  ~BucketClient();

  const s3::BucketLocation& location() const { return location_; }

  // HEAD on the bucket: OK if it exists and the credentials may use it.
  Status CheckBucket();

  // PUT of `size` bytes produced by `source` (see http::ClientRequest::body_source), whose hex
  // SHA-256 is `sha256` (signed, so that the service checks the bytes it stores).
  Status Put(const std::string& key, uint64_t size, const std::string& sha256,
             std::function<Result<size_t>(char* buffer, size_t capacity)> source);

  // The object's size in bytes (HEAD).
  Result<uint64_t> Size(const std::string& key);

  // Bytes [offset, offset + n) of the object; n > 0. kInternal if fewer come back.
  Result<std::string> GetRange(const std::string& key, uint64_t offset, uint64_t n);

  // DELETE; OK if there is no such object.
  Status Delete(const std::string& key);

 private:
  // A connection from the pool (or a new one) for one call, returned by Release.
  Result<std::unique_ptr<http::Client>> Acquire();
  void Release(std::unique_ptr<http::Client> client);
  Result<http::ClientResponse> Call(http::ClientRequest request, const std::string& path,
                                    const std::string& payload_sha256);
  Status ErrorOf(const std::string& operation, const std::string& what,
                 const http::ClientResponse& response) const;

  const s3::BucketLocation location_;
  const Clock& clock_;
  Mutex mu_;
  std::vector<std::unique_ptr<http::Client>> idle_ GUARDED_BY(mu_);
};

}  // namespace tf::objects
