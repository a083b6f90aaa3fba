// Runs a program as a child process for end-to-end tests: its stderr and stdout are read by a
// thread, so a test can wait for a line such as "serving on" instead of sleeping, wait for its
// exit with a deadline, and kill it with any signal (SIGKILL for crash tests).
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace tf::testing {

// Waits until the process `pid` (a child or not) has ended, for at most `timeout`, on a pidfd
// that becomes readable at its exit: no polling. True if it ended (or was already gone).
inline bool WaitForProcessExit(pid_t pid, std::chrono::milliseconds timeout) {
  int fd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (fd < 0) return errno == ESRCH;
  pollfd p{fd, POLLIN, 0};
  int ready;
  do {
    ready = poll(&p, 1, static_cast<int>(timeout.count()));
  } while (ready < 0 && errno == EINTR);
  close(fd);
  return ready > 0;
}

class ChildProcess {
 public:
  ChildProcess() = default;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess() {
    Kill(SIGKILL);
    Wait();
  }

  // Starts argv[0] with the given arguments; extra_env entries are "NAME=value".
  bool Start(const std::vector<std::string>& argv, const std::vector<std::string>& extra_env = {}) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return false;
    pid_ = fork();
    if (pid_ < 0) return false;
    if (pid_ == 0) {
      dup2(fds[1], 1);
      dup2(fds[1], 2);
      for (const auto& e : extra_env) putenv(const_cast<char*>(e.c_str()));
      std::vector<char*> args;
      for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      execv(args[0], args.data());
      _exit(127);
    }
    close(fds[1]);
    reader_ = std::thread([this, fd = fds[0]] {
      char buf[4096];
      for (;;) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n <= 0) break;
        std::lock_guard lock(mu_);
        output_.append(buf, static_cast<size_t>(n));
        cv_.notify_all();
      }
      close(fd);
      std::lock_guard lock(mu_);
      closed_ = true;
      cv_.notify_all();
    });
    return true;
  }

  // Waits until the output (from `from` on) contains `text`; false if the process ended or the
  // timeout passed first. Returns the offset just past the match through *end.
  bool WaitForOutput(const std::string& text, std::chrono::milliseconds timeout, size_t from = 0,
                     size_t* end = nullptr) {
    std::unique_lock lock(mu_);
    bool found = cv_.wait_for(
        lock, timeout, [&] { return output_.find(text, from) != std::string::npos || closed_; });
    size_t at = output_.find(text, from);
    if (!found || at == std::string::npos) return false;
    if (end) *end = at + text.size();
    return true;
  }

  std::string output() {
    std::lock_guard lock(mu_);
    return output_;
  }
  size_t output_size() {
    std::lock_guard lock(mu_);
    return output_.size();
  }

  void Kill(int sig) {
    if (pid_ > 0) ::kill(pid_, sig);
  }

  // Reaps the child and joins the reader; returns the wait status (or -1 if none ran).
  int Wait() {
    int status = -1;
    if (pid_ > 0) {
      waitpid(pid_, &status, 0);
      pid_ = -1;
    }
    if (reader_.joinable()) reader_.join();
    return status;
  }

  // Reaps the child if it ends within `timeout` (its wait status through *status) and returns
  // true; returns false, leaving it running, if it does not.
  bool WaitFor(std::chrono::milliseconds timeout, int* status) {
    if (pid_ <= 0 || !WaitForProcessExit(pid_, timeout)) return false;
    *status = Wait();
    return true;
  }

  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  std::thread reader_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::string output_;   // guarded by mu_
  bool closed_ = false;  // guarded by mu_
};

// A TCP port that was free a moment ago on 127.0.0.1.
inline int FreePort() {
  int s = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  getsockname(s, reinterpret_cast<sockaddr*>(&a), &len);
  close(s);
  return ntohs(a.sin_port);
}

}  // namespace tf::testing
