#include "store/join_token_rule.h"

namespace tf::store {

Status JoinTokenUsable(const std::string& id, bool revoked, TimeMs expires_at, int64_t max_uses,
                       int64_t uses, TimeMs now) {
  if (revoked) return FailedPrecondition("join token " + id + " was revoked");
  if (now >= expires_at) return FailedPrecondition("join token " + id + " has expired");
  if (max_uses > 0 && uses >= max_uses) {
    return FailedPrecondition("join token " + id + " is used up (" + std::to_string(max_uses) +
                              (max_uses == 1 ? " registration)" : " registrations)"));
  }
  return OkStatus();
}

}  // namespace tf::store
