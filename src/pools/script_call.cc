#include "pools/script_call.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "base/log.h"
#include "jobs/quantities.h"

extern char** environ;

namespace tf::pools {
namespace {

// Closes what it holds on every path out.
struct Fd {
  int fd = -1;
  Fd() = default;
  explicit Fd(int f) : fd(f) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { Close(); }
  void Close() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
};

Status Errno(const std::string& what) { return Unavailable(what + ": " + std::strerror(errno)); }

Status MakePipe(Fd& read_end, Fd& write_end) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return Errno("pipe");
  read_end.fd = fds[0];
  write_end.fd = fds[1];
  return OkStatus();
}

// Writes to a pipe whose reader may have gone without raising SIGPIPE, whose default action
// would end the whole process: the signal is blocked in this thread for the write, and one it
// raised is taken back before the mask is restored. The write then fails with EPIPE.
ssize_t WriteWithoutSigpipe(int fd, const char* data, size_t size) {
  sigset_t pipe_only, old;
  sigemptyset(&pipe_only);
  sigaddset(&pipe_only, SIGPIPE);
  sigset_t pending;
  sigemptyset(&pending);
  ::pthread_sigmask(SIG_BLOCK, &pipe_only, &old);
  sigpending(&pending);
  bool was_pending = sigismember(&pending, SIGPIPE) == 1;
  ssize_t n = ::write(fd, data, size);
  int saved = errno;
  if (n < 0 && errno == EPIPE && !was_pending) {
    timespec no_wait{0, 0};
    while (::sigtimedwait(&pipe_only, nullptr, &no_wait) < 0 && errno == EINTR) {
    }
  }
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  errno = saved;
  return n;
}

// The last line of `text` that holds something, for a one-line reason.
std::string LastLine(const std::string& text) {
  size_t end = text.find_last_not_of(" \t\r\n");
  if (end == std::string::npos) return "";
  size_t start = text.rfind('\n', end);
  return text.substr(start == std::string::npos ? 0 : start + 1, end + 1 - (start + 1));
}

// Reads what `fd` has now (it is non-blocking). False at end of file.
bool Drain(int fd, std::string& into) {
  char buf[16384];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      into.append(buf, static_cast<size_t>(n));
      continue;
    }
    if (n == 0) return false;
    return errno == EAGAIN || errno == EINTR;
  }
}

}  // namespace

std::string ScriptOutcome::Describe(TimeMs timeout_ms) const {
  std::string what;
  if (timed_out) {
    what = "timed out after " + jobs::FormatDuration(timeout_ms) + " and was killed";
  } else if (signal != 0) {
    what = "killed by signal " + std::to_string(signal);
  } else {
    what = "exit code " + std::to_string(exit_code);
  }
  std::string said = LastLine(err_tail);
  return said.empty() ? what : what + ": " + said;
}

Result<ScriptOutcome> RunScript(const ScriptCall& call) {
  if (call.argv.empty()) return InvalidArgument("no script to run");
  Fd in_read, in_write, out_read, out_write, err_read, err_write;
  TF_RETURN_IF_ERROR(MakePipe(in_read, in_write));
  TF_RETURN_IF_ERROR(MakePipe(out_read, out_write));
  TF_RETURN_IF_ERROR(MakePipe(err_read, err_write));

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in_read.fd, 0);
  posix_spawn_file_actions_adddup2(&actions, out_write.fd, 1);
  posix_spawn_file_actions_adddup2(&actions, err_write.fd, 2);
  posix_spawn_file_actions_addchdir_np(&actions, call.working_dir.c_str());
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // A group of its own, so that a timeout kills what it started too; default signal handling.
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

  std::vector<std::string> env_strings;
  for (const auto& [k, v] : call.env) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (std::string& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = call.argv;
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  pid_t pid = -1;
  // posix_spawnp looks a bare name up in the server's PATH.
  int spawned = ::posix_spawnp(&pid, argv[0], &actions, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (spawned != 0) {
    return Unavailable("cannot run " + call.argv[0] + ": " + std::strerror(spawned));
  }
  in_read.Close();
  out_write.Close();
  err_write.Close();
  Fd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  for (int fd : {in_write.fd, out_read.fd, err_read.fd}) {
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  }

  ScriptOutcome outcome;
  std::string err;
  size_t written = 0;
  if (call.input.empty()) in_write.Close();
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(call.timeout_ms);
  bool exited = false;
  bool too_much = false;
  while (!exited) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - std::chrono::steady_clock::now())
                    .count();
    if (left <= 0) {
      outcome.timed_out = true;
      break;
    }
    std::vector<pollfd> fds;
    if (pidfd.fd >= 0) fds.push_back({pidfd.fd, POLLIN, 0});
    if (out_read.fd >= 0) fds.push_back({out_read.fd, POLLIN, 0});
    if (err_read.fd >= 0) fds.push_back({err_read.fd, POLLIN, 0});
    if (in_write.fd >= 0) fds.push_back({in_write.fd, POLLOUT, 0});
    // Without a pidfd (an old kernel), look at the child every 50 ms.
    int wait_ms = pidfd.fd >= 0 ? static_cast<int>(std::min<int64_t>(left, 60'000)) : 50;
    int ready = ::poll(fds.data(), fds.size(), wait_ms);
    if (ready < 0 && errno != EINTR) break;
    if (out_read.fd >= 0 && !Drain(out_read.fd, outcome.out)) out_read.Close();
    if (err_read.fd >= 0 && !Drain(err_read.fd, err)) err_read.Close();
    if (err.size() > kErrTailBytes) err.erase(0, err.size() - kErrTailBytes);
    if (outcome.out.size() > kMaxScriptOutput) {
      too_much = true;
      break;
    }
    if (in_write.fd >= 0) {
      ssize_t n = WriteWithoutSigpipe(in_write.fd, call.input.data() + written,
                                      call.input.size() - written);
      if (n > 0) written += static_cast<size_t>(n);
      // A script that does not read its input (or has closed it) is not an error.
      if (written == call.input.size() || (n < 0 && errno != EAGAIN && errno != EINTR)) {
        in_write.Close();
      }
    }
    siginfo_t info{};
    info.si_pid = 0;
    if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
        info.si_pid == pid) {
      exited = true;
    }
  }
  if (!exited) ::kill(-pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  // What it wrote before it ended (a background process it left may hold the pipes open).
  if (out_read.fd >= 0) Drain(out_read.fd, outcome.out);
  if (err_read.fd >= 0) Drain(err_read.fd, err);
  if (err.size() > kErrTailBytes) err.erase(0, err.size() - kErrTailBytes);
  outcome.err_tail = std::move(err);
  if (too_much) {
    return ResourceExhausted(call.argv[0] + " wrote more than " +
                             std::to_string(kMaxScriptOutput >> 20) + " MiB to stdout");
  }
  if (WIFEXITED(status)) outcome.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) outcome.signal = WTERMSIG(status);
  return outcome;
}

Result<std::string> RunWithRetries(const ScriptRunner& run, const ScriptCall& call, int retries,
                                   const std::string& what, const std::string& pool) {
  std::string last;
  for (int attempt = 0; attempt <= retries; ++attempt) {
    auto outcome = run(call);
    if (!outcome.ok()) {
      last = outcome.status().message();
      if (outcome.status().code() != StatusCode::kResourceExhausted) break;  // cannot run it
      continue;
    }
    if (outcome->success()) return std::move(outcome->out);
    last = outcome->Describe(call.timeout_ms);
    spdlog::warn("pool {}: {} failed (try {} of {}): {}", pool, what, attempt + 1, retries + 1,
                 last);
  }
  return Unavailable(what + " failed: " + last);
}

std::map<std::string, std::string> ServerEnvironment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string entry(*e);
    size_t eq = entry.find('=');
    if (eq != std::string::npos && eq > 0) env[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  return env;
}

}  // namespace tf::pools
