// Projects and API tokens.
//
// A token is a random secret ("tfk_" + 40 hex characters) shown once when it is made; the
// store keeps only its SHA-256. Every request names its project through its token: a token
// sees only its own project's resources, except that an admin token may manage projects and
// tokens. Thread-safe.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/clock.h"
#include "base/mutex.h"
#include "base/status.h"
#include "store/store.h"

namespace tf::auth {

// Who is calling: the result of checking a token.
struct Principal {
  std::string project_id;
  std::string project_name;
  std::string token_id;
  bool admin = false;
};

struct IssuedToken {
  store::Token token;
  std::string secret;  // shown to the user once, never stored
};

// Who a worker is (auth/worker_auth.cc), for the fleet's routes (api/node_routes.cc): an admin
// token acts for any node; a join token only registers a new one; a node's credential, issued
// at its registration, acts for that node alone.
struct WorkerPrincipal {
  enum class Kind { kAdmin, kJoin, kNode };
  Kind kind = Kind::kNode;
  std::string node_id;        // kNode
  std::string join_token_id;  // kJoin

  // Whether it may heartbeat, read assignments and report for node `id`.
  bool ActsFor(const std::string& id) const {
    return kind == Kind::kAdmin || (kind == Kind::kNode && node_id == id);
  }
};

struct IssuedJoinToken {
  store::JoinToken token;
  std::string secret;  // "tfj_...": shown once
};

// A node's credential: the secret goes to the worker, the hash to the store.
struct NodeCredential {
  std::string secret;  // "tfn_..."
  std::string hash;
};

class AuthService {
 public:
  AuthService(store::AuthStore& store, const Clock& clock) : store_(store), clock_(clock) {}

  // kUnauthenticated for a missing, unknown or revoked token (the message says which, never
  // echoing the secret). A token that checked out is remembered for kPrincipalCacheMs, so that
  // a busy client costs the store no reads; RevokeToken on this server forgets it at once, and
  // a revocation made through another server sharing the store takes effect within that time.
  Result<Principal> Authenticate(std::string_view secret);
  // What Authenticate returns when it would answer from its cache, without touching the store:
  // for callers that must not block. nullopt when the store would have to be asked.
  std::optional<Principal> CachedPrincipal(std::string_view secret);

  // Names are 1-63 characters of [a-z0-9-], starting with a letter.
  Result<store::Project> CreateProject(const std::string& name);
  Result<store::Project> GetProjectByName(const std::string& name);
  Result<std::vector<store::Project>> ListProjects();

  Result<IssuedToken> CreateToken(const std::string& project_id, const std::string& name,
                                  bool admin);
  Result<std::vector<store::Token>> ListTokens(const std::string& project_id);
  Status RevokeToken(const std::string& token_id);

  // First start: makes the "default" project and an admin token if the store has no admin
  // token, and writes the secret to `token_file` (mode 0600). If the store already has one and
  // the file exists, changes nothing. Returns the path written or kept.
  Status Bootstrap(const std::filesystem::path& token_file);

  // Join tokens (auth/worker_auth.cc). A name of 1-128 characters; `ttl_ms` from a minute to
  // a year; `max_uses` 0 (any number of registrations) to 1,000,000.
  Result<IssuedJoinToken> CreateJoinToken(const std::string& name, TimeMs ttl_ms, int64_t max_uses);
  Result<std::vector<store::JoinToken>> ListJoinTokens();
  Status RevokeJoinToken(const std::string& id);
  // Forgets join tokens that expired more than kJoinTokenRetention ago; returns how many.
  Result<int64_t> ForgetExpiredJoinTokens();
  static constexpr TimeMs kJoinTokenRetention = kDayMs;
  // A worker's secret: an admin token, a usable join token, or a registered node's credential.
  // kUnauthenticated for anything unknown, revoked, expired or used up; kPermissionDenied for a
  // project's token.
  Result<WorkerPrincipal> AuthenticateWorker(std::string_view secret);
  static NodeCredential NewNodeCredential();

  static constexpr TimeMs kPrincipalCacheMs = 1000;

 private:
  struct Cached {
    Principal principal;
    TimeMs checked_at;
  };

  std::optional<Principal> FromCache(const std::string& hash, TimeMs now);

  store::AuthStore& store_;
  const Clock& clock_;
  Mutex mu_;
  std::unordered_map<std::string, Cached> cache_ GUARDED_BY(mu_);  // token hash -> principal
};

// Writes `contents` to `path` with mode 0600, atomically (temp file, fsync, rename).
Status WriteSecretFile(const std::filesystem::path& path, const std::string& contents);

}  // namespace tf::auth
