// S3 access keys: an id ("TFAK" + 16 upper-case letters and digits) and a 40-character secret,
// bound to one project, made by `tensorfleet s3 key create` or POST /v1/s3-keys. A request
// signed with a key reaches that project's buckets and nothing else. The secret is shown when
// the key is made and never listed again; the store keeps it, since checking a signature needs
// it. Thread-safe; every call blocks on the store.
#pragma once

#include <string>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "store/store.h"

namespace tf::auth {

inline constexpr size_t kMaxKeyNameBytes = 64;

class AccessKeys {
 public:
  AccessKeys(store::AccessKeyStore& store, const Clock& clock) : store_(store), clock_(clock) {}

  // `name` says what the key is for: 1-64 printable ASCII characters. kInvalidArgument
  // otherwise.
  Result<store::AccessKey> Create(const std::string& project_id, const std::string& name);
  // The keys of a project ("" = every project's), secrets blanked.
  Result<std::vector<store::AccessKey>> List(const std::string& project_id);
  // kNotFound unless the key exists in `project_id` ("" = in any project).
  Status Revoke(const std::string& project_id, const std::string& id);
  // The key with this id, secret included. kNotFound if unknown or revoked.
  Result<store::AccessKey> FindActive(const std::string& id);

 private:
  store::AccessKeyStore& store_;
  const Clock& clock_;
};

// `n` characters drawn uniformly from `alphabet` by the system's CSPRNG.
std::string RandomString(size_t n, std::string_view alphabet);

}  // namespace tf::auth
