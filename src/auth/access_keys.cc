#include "auth/access_keys.h"

#include "base/crypto.h"

namespace tf::auth {
namespace {

constexpr std::string_view kIdAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
constexpr std::string_view kSecretAlphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
constexpr int kCreateAttempts = 3;  // a clash of 16 random characters is not expected at all

}  // namespace

std::string RandomString(size_t n, std::string_view alphabet) {
  // Rejection sampling: only bytes below the largest multiple of the alphabet's size are used,
  // so every character is equally likely.
  const uint64_t limit = 256 - 256 % alphabet.size();
  std::string out;
  while (out.size() < n) {
    uint64_t word = RandomU64();
    for (int i = 0; i < 8 && out.size() < n; ++i, word >>= 8) {
      uint64_t byte = word & 0xff;
      if (byte < limit) out.push_back(alphabet[byte % alphabet.size()]);
    }
  }
  return out;
}

Result<store::AccessKey> AccessKeys::Create(const std::string& project_id,
                                            const std::string& name) {
  if (name.empty() || name.size() > kMaxKeyNameBytes) {
    return InvalidArgument("an access key's name must be 1-" + std::to_string(kMaxKeyNameBytes) +
                           " characters");
  }
  for (unsigned char c : name) {
    if (c < 0x20 || c >= 0x7f) {
      return InvalidArgument("an access key's name must be printable ASCII");
    }
  }
  store::AccessKey key{"", project_id, "", name, clock_.Now(), std::nullopt};
  Status s;
  for (int attempt = 0; attempt < kCreateAttempts; ++attempt) {
    key.id = "TFAK" + RandomString(16, kIdAlphabet);
    key.secret = RandomString(40, kSecretAlphabet);
    s = store_.CreateAccessKey(key);
    if (s.code() != StatusCode::kAlreadyExists) break;
  }
  if (!s.ok()) return s;
  return key;
}

Result<std::vector<store::AccessKey>> AccessKeys::List(const std::string& project_id) {
  TF_ASSIGN_OR_RETURN(std::vector<store::AccessKey> keys, store_.ListAccessKeys(project_id));
  for (auto& k : keys) k.secret.clear();
  return keys;
}

Status AccessKeys::Revoke(const std::string& project_id, const std::string& id) {
  auto key = store_.FindAccessKey(id);
  if (!key.ok() || (!project_id.empty() && key->project_id != project_id)) {
    if (!key.ok() && key.status().code() != StatusCode::kNotFound) return key.status();
    return NotFound("access key " + id + " does not exist in this project");
  }
  {
    MutexLock lock(mu_);
    cache_.erase(id);
  }
  return store_.RevokeAccessKey(id, clock_.Now());
}

Result<store::AccessKey> AccessKeys::FindActive(const std::string& id) {
  if (id.size() > 128) return NotFound("no such access key");
  if (auto cached = CachedActive(id)) return *std::move(cached);
  TF_ASSIGN_OR_RETURN(store::AccessKey key, store_.FindAccessKey(id));
  if (key.revoked_at) return NotFound("access key " + id + " was revoked");
  MutexLock lock(mu_);
  const TimeMs now = clock_.Now();
  // Forget what has expired before the map grows past a bound (a client cycling through ids).
  if (cache_.size() >= 4096)
    std::erase_if(cache_, [&](const auto& e) { return now - e.second.found_at >= kCacheMs; });
  cache_[id] = Cached{key, now};
  return key;
}

std::optional<store::AccessKey> AccessKeys::CachedActive(const std::string& id) {
  MutexLock lock(mu_);
  auto it = cache_.find(id);
  if (it == cache_.end() || clock_.Now() - it->second.found_at >= kCacheMs) return std::nullopt;
  return it->second.key;
}

}  // namespace tf::auth
