#include "api/sqs/receive_attempts.h"

namespace tf::api {

std::optional<nlohmann::json> ReceiveAttempts::Find(const std::string& project,
                                                    const std::string& queue,
                                                    const std::string& attempt, TimeMs now) {
  MutexLock lock(mu_);
  auto it = kept_.find({project, queue, attempt});
  if (it == kept_.end() || now - it->second.at >= kReceiveAttemptWindowMs) return std::nullopt;
  return it->second.answer;
}

void ReceiveAttempts::Keep(const std::string& project, const std::string& queue,
                           const std::string& attempt, nlohmann::json answer, TimeMs now) {
  MutexLock lock(mu_);
  for (auto it = kept_.begin(); it != kept_.end();) {
    it = now - it->second.at >= kReceiveAttemptWindowMs ? kept_.erase(it) : std::next(it);
  }
  kept_[{project, queue, attempt}] = Kept{std::move(answer), now};
}

}  // namespace tf::api
