// S3 access keys: an id ("TFAK" + 16 upper-case letters and digits) and a 40-character secret,
// bound to one project, made by `tensorfleet s3 key create` or POST /v1/s3-keys. A request
// signed with a key reaches that project's buckets and nothing else. The secret is shown when
// the key is made and never listed again; the store keeps it, since checking a signature needs
// it. Thread-safe; every call blocks on the store.
#pragma once

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/clock.h"
#include "base/mutex.h"
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
  // The key with this id, secret included. kNotFound if unknown or revoked. A key found is
  // remembered for kCacheMs, so that a busy client costs the store no reads: a revocation takes
  // effect within that time (at once for Revoke through this object).
  Result<store::AccessKey> FindActive(const std::string& id);
  // What FindActive returns when it would answer from its memory, without the store: for callers
  // that must not block. nullopt when the store would have to be asked.
  std::optional<store::AccessKey> CachedActive(const std::string& id);

  static constexpr TimeMs kCacheMs = 1000;

 private:
  struct Cached {
    store::AccessKey key;
    TimeMs found_at = 0;
  };

  store::AccessKeyStore& store_;
  const Clock& clock_;
  Mutex mu_;
  std::unordered_map<std::string, Cached> cache_ GUARDED_BY(mu_);  // key id -> key
};

// `n` characters drawn uniformly from `alphabet` by the system's CSPRNG.
std::string RandomString(size_t n, std::string_view alphabet);

}  // namespace tf::auth
