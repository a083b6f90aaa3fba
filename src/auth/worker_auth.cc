// AuthService's side for workers: join tokens, node credentials, and telling them apart from
// people's tokens by their prefix.
#include "auth/auth_service.h"
#include "base/crypto.h"
#include "store/join_token_rule.h"

namespace tf::auth {
namespace {

constexpr std::string_view kJoinPrefix = "tfj_";
constexpr std::string_view kNodePrefix = "tfn_";
constexpr size_t kSecretSize = 44;  // the prefix and 40 hex characters, as for tfk_ tokens
constexpr TimeMs kMinJoinTtl = kMinuteMs;
constexpr TimeMs kMaxJoinTtl = 365 * kDayMs;
constexpr int64_t kMaxJoinUses = 1'000'000;

bool HasPrefix(std::string_view secret, std::string_view prefix) {
  return secret.size() == kSecretSize && secret.substr(0, prefix.size()) == prefix;
}

}  // namespace

Result<IssuedJoinToken> AuthService::CreateJoinToken(const std::string& name, TimeMs ttl_ms,
                                                     int64_t max_uses) {
  if (name.empty() || name.size() > 128) {
    return InvalidArgument("join token name must be 1 to 128 characters");
  }
  if (ttl_ms < kMinJoinTtl || ttl_ms > kMaxJoinTtl) {
    return InvalidArgument("a join token lives from 1 minute to 365 days, not " +
                           std::to_string(ttl_ms / 1000) + " s");
  }
  if (max_uses < 0 || max_uses > kMaxJoinUses) {
    return InvalidArgument("a join token's uses must be 0 (any number) to 1000000, not " +
                           std::to_string(max_uses));
  }
  IssuedJoinToken out;
  out.secret = std::string(kJoinPrefix) + RandomHex(20);
  out.token.id = "jtk_" + RandomHex(8);
  out.token.name = name;
  out.token.hash = Sha256Hex(out.secret);
  out.token.created_at = clock_.Now();
  out.token.expires_at = out.token.created_at + ttl_ms;
  out.token.max_uses = max_uses;
  TF_RETURN_IF_ERROR(store_.CreateJoinToken(out.token));
  return out;
}

Result<std::vector<store::JoinToken>> AuthService::ListJoinTokens() {
  return store_.ListJoinTokens();
}

Status AuthService::RevokeJoinToken(const std::string& id) {
  return store_.RevokeJoinToken(id, clock_.Now());
}

Result<int64_t> AuthService::ForgetExpiredJoinTokens() {
  return store_.DeleteJoinTokensExpiredBefore(clock_.Now() - kJoinTokenRetention);
}

Result<WorkerPrincipal> AuthService::AuthenticateWorker(std::string_view secret) {
  WorkerPrincipal who;
  if (HasPrefix(secret, kNodePrefix)) {
    auto node = store_.FindNodeByCredential(Sha256Hex(secret));
    if (!node.ok()) {
      if (node.status().code() != StatusCode::kNotFound) return node.status();
      return Unauthenticated(
          "the node credential is not valid: its node was forgotten or registered again with "
          "another; register with a join token");
    }
    who.kind = WorkerPrincipal::Kind::kNode;
    who.node_id = *node;
    return who;
  }
  if (HasPrefix(secret, kJoinPrefix)) {
    auto token = store_.FindJoinTokenByHash(Sha256Hex(secret));
    if (!token.ok()) {
      if (token.status().code() != StatusCode::kNotFound) return token.status();
      return Unauthenticated("the join token is not valid");
    }
    Status usable =
        store::JoinTokenUsable(token->id, token->revoked_at.has_value(), token->expires_at,
                               token->max_uses, token->uses, clock_.Now());
    if (!usable.ok()) return Unauthenticated(usable.message());
    who.kind = WorkerPrincipal::Kind::kJoin;
    who.join_token_id = token->id;
    return who;
  }
  TF_ASSIGN_OR_RETURN(Principal person, Authenticate(secret));
  if (!person.admin) {
    return PermissionDenied(
        "a project's token cannot act as a worker: use a join token (tensorfleet nodes "
        "join-token create) or an admin token");
  }
  who.kind = WorkerPrincipal::Kind::kAdmin;
  return who;
}

NodeCredential AuthService::NewNodeCredential() {
  NodeCredential c;
  c.secret = std::string(kNodePrefix) + RandomHex(20);
  c.hash = Sha256Hex(c.secret);
  return c;
}

}  // namespace tf::auth
