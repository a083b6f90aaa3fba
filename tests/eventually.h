// Polling with a deadline, for the end-to-end tests whose state lives in a real process that
// offers nothing to wait on (a server's API, a worker's files). Tests that can wait on an
// event do so instead: a line of output (ChildProcess::WaitForOutput), a process's exit
// (WaitForProcessExit), a condition variable. This is the one place such tests sleep.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

namespace tf::testing {

// Asks `done` every `interval` until it holds, for at most `timeout`; it is asked once more at
// the deadline. Returns whether it held.
template <typename Pred>
bool Eventually(Pred done, std::chrono::milliseconds timeout = std::chrono::seconds(60),
                std::chrono::milliseconds interval = std::chrono::milliseconds(100)) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(interval);
  }
  return done();
}

// Asks `fetch` (null while there is no answer, as from a server that is down) until `done`
// holds for its answer, for at most `timeout`. Returns the last answer; if the time ran out,
// fails the test with it, naming `what` was awaited.
inline nlohmann::json PollJson(const std::function<nlohmann::json()>& fetch,
                               const std::function<bool(const nlohmann::json&)>& done,
                               std::chrono::milliseconds timeout, const std::string& what) {
  nlohmann::json last;
  bool held = Eventually(
      [&] {
        nlohmann::json j = fetch();
        if (j.is_null()) return false;
        last = std::move(j);
        return done(last);
      },
      timeout);
  if (!held) ADD_FAILURE() << "timed out waiting on " << what << ": " << last.dump(2);
  return last;
}

}  // namespace tf::testing
