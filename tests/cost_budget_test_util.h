// Helpers shared by the budget tests: UTC dates, and a webhook that never answers.
#pragma once

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "cost/budgets/budget_period.h"

namespace tf::cost::budget_testing {

inline TimeMs Date(const std::string& day) {
  auto t = ParseUtcDate(day);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return t.ok() ? *t : 0;
}

// A TCP listener that accepts connections and never answers them, holding them open until
// Release(): a webhook that hangs.
class SilentListener {
 public:
  SilentListener() {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    EXPECT_EQ(listen(fd_, 16), 0);
    socklen_t len = sizeof a;
    getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] {
      for (;;) {
        int c = accept(fd_, nullptr, nullptr);
        if (c < 0) return;
        std::lock_guard lock(mu_);
        held_.push_back(c);
        accepted_cv_.notify_all();
      }
    });
  }
  ~SilentListener() { Release(); }

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/hook"; }
  int accepted() {
    std::lock_guard lock(mu_);
    return static_cast<int>(held_.size()) + released_;
  }
  // Waits until `n` connections have been accepted; false if `timeout` passed first.
  bool WaitForAccepted(int n, std::chrono::milliseconds timeout) {
    std::unique_lock lock(mu_);
    return accepted_cv_.wait_for(lock, timeout,
                                 [&] { return static_cast<int>(held_.size()) + released_ >= n; });
  }
  // Closes the listener and every held connection.
  void Release() {
    if (fd_ >= 0) {
      shutdown(fd_, SHUT_RDWR);
      if (thread_.joinable()) thread_.join();
      close(fd_);
      fd_ = -1;
    }
    std::lock_guard lock(mu_);
    for (int c : held_) close(c);
    released_ += static_cast<int>(held_.size());
    held_.clear();
  }

 private:
  int fd_ = -1;
  int port_ = 0;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable accepted_cv_;  // notified when held_ grows
  std::vector<int> held_;                // guarded by mu_
  int released_ = 0;                     // guarded by mu_
};

}  // namespace tf::cost::budget_testing
