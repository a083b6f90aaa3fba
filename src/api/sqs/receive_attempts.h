// FIFO receives retried with the same ReceiveRequestAttemptId: for five minutes SQS answers such
// a retry with the messages of the first receive (same receipt handles), so that a client whose
// answer was lost does not leave those messages hidden and take the next ones. The answers are
// kept in this server's memory: a retry sent to another server, or after a restart, is a new
// receive (docs/sqs-api.md). Thread-safe.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <tuple>

#include "base/clock.h"
#include "base/mutex.h"

namespace tf::api {

inline constexpr TimeMs kReceiveAttemptWindowMs = 5 * kMinuteMs;

class ReceiveAttempts {
 public:
  // The answer of an earlier receive with this attempt id, if it was less than the window ago.
  std::optional<nlohmann::json> Find(const std::string& project, const std::string& queue,
                                     const std::string& attempt, TimeMs now);
  // Keeps `answer` for the window; forgets the answers past it.
  void Keep(const std::string& project, const std::string& queue, const std::string& attempt,
            nlohmann::json answer, TimeMs now);

 private:
  using Key = std::tuple<std::string, std::string, std::string>;
  struct Kept {
    nlohmann::json answer;
    TimeMs at = 0;
  };
  Mutex mu_;
  std::map<Key, Kept> kept_ GUARDED_BY(mu_);
};

}  // namespace tf::api
