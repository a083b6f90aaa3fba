#include "worker/process_group.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "worker/proc_stat.h"

namespace tf::worker {
namespace {

namespace fs = std::filesystem;
using SteadyClock = std::chrono::steady_clock;

constexpr const char* kDefaultPath = "/usr/local/bin:/usr/bin:/bin";

Status ErrnoStatus(StatusCode code, const std::string& what) {
  return Status(code, what + ": " + std::strerror(errno));
}

// Moves `fd` to a number of at least 3 (so that it never lands on stdin, stdout or stderr in the
// child), keeping O_CLOEXEC. Closes the original.
int AboveStdio(int fd) {
  if (fd < 0 || fd >= 3) return fd;
  int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
  ::close(fd);
  return moved;
}

bool HasNul(const std::string& s) { return s.find('\0') != std::string::npos; }

Status CheckSpec(const ProcessSpec& spec) {
  if (spec.argv.empty() || spec.argv[0].empty()) return InvalidArgument("no command to run");
  for (const auto& a : spec.argv) {
    if (HasNul(a)) return InvalidArgument("an argument of '" + spec.argv[0] + "' holds a NUL byte");
  }
  for (const auto& [name, value] : spec.env) {
    if (name.empty() || name.find('=') != std::string::npos || HasNul(name) || HasNul(value)) {
      return InvalidArgument("'" + name + "' cannot be an environment variable's name");
    }
  }
  std::error_code ec;
  if (!fs::is_directory(spec.working_dir, ec)) {
    return InvalidArgument("working directory " + spec.working_dir.string() +
                           " is not a directory");
  }
  return OkStatus();
}

// Where argv[0] may be, in the order a shell tries them.
std::vector<std::string> Candidates(const ProcessSpec& spec) {
  const std::string& command = spec.argv[0];
  if (command.find('/') != std::string::npos) return {command};
  auto it = spec.env.find("PATH");
  std::string path = it == spec.env.end() ? kDefaultPath : it->second;
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    size_t colon = path.find(':', start);
    std::string dir = path.substr(start, colon == std::string::npos ? colon : colon - start);
    out.push_back((dir.empty() ? "." : dir) + "/" + command);
    if (colon == std::string::npos) return out;
    start = colon + 1;
  }
}

// Everything the child needs, made before fork: after it the child may only make
// async-signal-safe calls (no allocation).
struct ChildPlan {
  std::vector<std::string> candidates;
  std::vector<std::string> env_strings;
  std::vector<char*> argv;
  std::vector<char*> envp;
  std::string working_dir;
  std::string not_found, denied, not_executable, failed, no_dir, no_user;
  std::vector<std::string> cgroup_procs, no_cgroup;  // a file to join, and what to say if not
  bool drop = false;                                 // to run_as
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;
  int null_fd = -1, log_fd = -1;
  pid_t worker = 0;  // the process that starts the group
};

void WriteAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    data += n;
    size -= static_cast<size_t>(n);
  }
}

void WriteLine(const std::string& head, int error) {
  WriteAll(2, head.data(), head.size());
  if (error != 0) {
    const char* desc = strerrordesc_np(error);
    WriteAll(2, desc, std::strlen(desc));
  }
  WriteAll(2, "\n", 1);
}

// Runs in the workload's process, between fork and exec.
[[noreturn]] void RunWorkload(const ChildPlan& plan) {
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig != SIGKILL && sig != SIGSTOP) ::signal(sig, SIG_DFL);
  }
  if (::dup2(plan.null_fd, 0) < 0 || ::dup2(plan.log_fd, 1) < 0 || ::dup2(plan.log_fd, 2) < 0) {
    ::_exit(kExitNotExecutable);
  }
  // Whatever another thread opened without O_CLOEXEC does not reach the workload. ready_fd
  // stays open until exec, which tells the parent that this setup is done.
  ::close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
  for (size_t i = 0; i < plan.cgroup_procs.size(); ++i) {
    const int fd = ::open(plan.cgroup_procs[i].c_str(), O_WRONLY | O_CLOEXEC);
    const bool joined = fd >= 0 && ::write(fd, "0", 1) == 1;
    const int error = errno;
    if (fd >= 0) ::close(fd);
    if (!joined) {
      WriteLine(plan.no_cgroup[i], error);
      ::_exit(kExitNotExecutable);
    }
  }
  // Raw system calls: they change this (the only) thread, with none of libc's machinery for
  // changing every thread of a process.
  if (plan.drop && (::syscall(SYS_setgroups, plan.groups.size(), plan.groups.data()) != 0 ||
                    ::syscall(SYS_setresgid, plan.gid, plan.gid, plan.gid) != 0 ||
                    ::syscall(SYS_setresuid, plan.uid, plan.uid, plan.uid) != 0)) {
    WriteLine(plan.no_user, errno);
    ::_exit(kExitNotExecutable);
  }
  if (::chdir(plan.working_dir.c_str()) != 0) {
    WriteLine(plan.no_dir, errno);
    ::_exit(kExitNotFound);
  }
  bool denied = false, not_executable = false;
  int other = 0;
  for (const auto& candidate : plan.candidates) {
    ::execve(candidate.c_str(), plan.argv.data(), plan.envp.data());
    if (errno == EACCES) {
      denied = true;
    } else if (errno == ENOEXEC) {
      not_executable = true;
    } else if (errno != ENOENT && errno != ENOTDIR) {
      other = errno;
    }
  }
  if (other != 0) {
    WriteLine(plan.failed, other);
    ::_exit(kExitNotExecutable);
  }
  if (not_executable) {
    WriteLine(plan.not_executable, 0);
    ::_exit(kExitNotExecutable);
  }
  if (denied) {
    WriteLine(plan.denied, 0);
    ::_exit(kExitNotExecutable);
  }
  WriteLine(plan.not_found, 0);
  ::_exit(kExitNotFound);
}

// The signal the kernel sends the group's leader when the worker dies (PR_SET_PDEATHSIG).
const int kWorkerDiedSignal = SIGRTMIN + 2;

// The leader's answer to the worker's death: the whole group goes, the leader with it.
void KillOwnGroup(int) { ::kill(0, SIGKILL); }

// Runs in the child: it leads a new session, starts the workload in it and stays as its
// parent, so that the group dies with the worker (even a worker killed with SIGKILL) and no
// process of a job runs on unsupervised. Only async-signal-safe calls from here on.
[[noreturn]] void RunChild(const ChildPlan& plan) {
  ::setsid();
  const pid_t workload = ::fork();
  if (workload == 0) RunWorkload(plan);
  if (workload < 0) {
    const int error = errno;
    if (::dup2(plan.log_fd, 2) >= 0) WriteLine(plan.failed, error);
    ::_exit(kExitNotExecutable);
  }
  // The group's signals (SIGTERM from Terminate, a job's own `kill 0`) are for the workload:
  // the leader stays until the workload has ended, then ends as it did.
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig != SIGKILL && sig != SIGSTOP) ::signal(sig, SIG_IGN);
  }
  ::signal(SIGCHLD, SIG_DFL);  // not SIG_IGN: the workload must stay to be waited for
  struct sigaction died {};
  died.sa_handler = KillOwnGroup;
  ::sigaction(kWorkerDiedSignal, &died, nullptr);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::prctl(PR_SET_PDEATHSIG, kWorkerDiedSignal);
  if (::getppid() != plan.worker) ::kill(0, SIGKILL);  // the worker died before the prctl
  // Nothing of the worker's: not its stdout (a pipe someone may wait to end), not the pipe that
  // tells it this start is done (the workload's copy closes at exec).
  if (::dup2(plan.null_fd, 0) < 0 || ::dup2(plan.null_fd, 1) < 0 || ::dup2(plan.null_fd, 2) < 0) {
    ::kill(0, SIGKILL);
  }
  ::close_range(3, ~0U, 0);
  int status = 0;
  while (::waitpid(workload, &status, 0) < 0) {
    if (errno != EINTR) ::_exit(kExitNotExecutable);
  }
  if (WIFEXITED(status)) ::_exit(WEXITSTATUS(status));
  // Killed by a signal: the leader ends by the same one, without a core of its own.
  const int sig = WTERMSIG(status);
  const struct rlimit no_core {};
  ::setrlimit(RLIMIT_CORE, &no_core);
  ::signal(sig, SIG_DFL);
  ::kill(::getpid(), sig);
  ::_exit(128 + sig);
}

ExitStatus FromSiginfo(const siginfo_t& info) {
  if (info.si_code == CLD_EXITED) return {.exit_code = info.si_status, .signal = 0};
  return {.exit_code = -1, .signal = info.si_status};
}

}  // namespace

std::string ExitStatus::ToString() const {
  if (signal == 0) return "exit code " + std::to_string(exit_code);
  const char* name = sigabbrev_np(signal);
  return "killed by " + (name ? "SIG" + std::string(name) : "signal " + std::to_string(signal));
}

Result<std::unique_ptr<ProcessGroup>> ProcessGroup::Start(const ProcessSpec& spec) {
  TF_RETURN_IF_ERROR(CheckSpec(spec));
  ChildPlan plan;
  plan.candidates = Candidates(spec);
  for (const auto& [name, value] : spec.env) plan.env_strings.push_back(name + "=" + value);
  for (const auto& a : spec.argv) plan.argv.push_back(const_cast<char*>(a.c_str()));
  plan.argv.push_back(nullptr);
  for (auto& e : plan.env_strings) plan.envp.push_back(e.data());
  plan.envp.push_back(nullptr);
  plan.working_dir = spec.working_dir.string();
  const std::string head = "tensorfleet: cannot run '" + spec.argv[0] + "': ";
  plan.not_found =
      head +
      (spec.argv[0].find('/') != std::string::npos
           ? "no such file"
           : "command not found (PATH=" +
                 (spec.env.count("PATH") ? spec.env.at("PATH") : std::string(kDefaultPath)) + ")");
  plan.denied = head + "permission denied";
  plan.not_executable = head + "not an executable (a script needs a #! line)";
  plan.failed = head;
  plan.no_dir = "tensorfleet: cannot enter the working directory " + plan.working_dir + ": ";
  for (const auto& procs : spec.cgroup_procs) {
    plan.cgroup_procs.push_back(procs.string());
    plan.no_cgroup.push_back("tensorfleet: cannot join the cgroup " + procs.parent_path().string() +
                             ": ");
  }
  if (spec.run_as) {
    plan.drop = true;
    plan.uid = spec.run_as->uid;
    plan.gid = spec.run_as->gid;
    plan.groups = spec.run_as->groups;
    plan.no_user = "tensorfleet: cannot run as uid " + std::to_string(plan.uid) + ": ";
  }

  plan.log_fd =
      AboveStdio(::open(spec.log_file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644));
  if (plan.log_fd < 0) {
    return ErrnoStatus(StatusCode::kInvalidArgument,
                       "cannot open log file " + spec.log_file.string());
  }
  plan.null_fd = AboveStdio(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  int ready[2] = {-1, -1};
  if (plan.null_fd < 0 || ::pipe2(ready, O_CLOEXEC) != 0) {
    Status s = ErrnoStatus(StatusCode::kUnavailable, "cannot prepare a process");
    ::close(plan.log_fd);
    if (plan.null_fd >= 0) ::close(plan.null_fd);
    return s;
  }

  plan.worker = ::getpid();
  pid_t pid = ::fork();
  if (pid == 0) RunChild(plan);
  const int fork_errno = errno;
  ::close(plan.log_fd);
  ::close(plan.null_fd);
  ::close(ready[1]);
  if (pid < 0) {
    ::close(ready[0]);
    errno = fork_errno;
    return ErrnoStatus(StatusCode::kUnavailable, "cannot start '" + spec.argv[0] + "'");
  }
  // EOF once the child has exec'd or exited: by then it leads its own session.
  char byte;
  while (::read(ready[0], &byte, 1) < 0 && errno == EINTR) {
  }
  ::close(ready[0]);

  int pidfd = PidfdOpen(pid);
  const int pidfd_errno = errno;
  auto stat = ReadProcStat(pid);
  if (pidfd < 0 || !stat.ok() || !stat->has_value()) {
    errno = pidfd_errno;
    Status s = pidfd < 0 ? ErrnoStatus(StatusCode::kUnavailable,
                                       "pidfd_open (Linux 5.3 or later is needed)")
                         : Internal("cannot read the start time of process " + std::to_string(pid));
    ::kill(-pid, SIGKILL);
    ::kill(pid, SIGKILL);
    siginfo_t info{};
    ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED);
    if (pidfd >= 0) ::close(pidfd);
    return s;
  }
  return std::unique_ptr<ProcessGroup>(new ProcessGroup(pid, pidfd, (*stat)->start_time));
}

ProcessGroup::~ProcessGroup() {
  MutexLock lock(mu_);
  if (!exit_) {
    ::kill(-pid_, SIGKILL);
    siginfo_t info{};
    while (::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED) < 0 && errno == EINTR) {
    }
  }
  ::close(pidfd_);
}

Result<std::optional<ExitStatus>> ProcessGroup::ReapIfEnded() {
  if (exit_) return exit_;
  siginfo_t info{};
  int r;
  while ((r = ::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT)) < 0 &&
         errno == EINTR) {
  }
  if (r < 0) return ErrnoStatus(StatusCode::kInternal, "waitid " + std::to_string(pid_));
  if (info.si_pid == 0) return std::optional<ExitStatus>();
  // The leader's zombie still holds the group id: nothing else can be given it yet.
  ::kill(-pid_, SIGKILL);
  while ((r = ::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED)) < 0 && errno == EINTR) {
  }
  if (r < 0) return ErrnoStatus(StatusCode::kInternal, "waitid " + std::to_string(pid_));
  exit_ = FromSiginfo(info);
  return exit_;
}

Status ProcessGroup::Signal(int sig) {
  MutexLock lock(mu_);
  if (exit_) return OkStatus();
  if (::kill(-pid_, sig) != 0 && errno != ESRCH) {
    return ErrnoStatus(StatusCode::kInternal,
                       "cannot signal process group " + std::to_string(pid_));
  }
  return OkStatus();
}

Result<std::optional<ExitStatus>> ProcessGroup::TryWait() {
  MutexLock lock(mu_);
  return ReapIfEnded();
}

Result<std::optional<ExitStatus>> ProcessGroup::WaitFor(std::chrono::milliseconds timeout) {
  const auto deadline = SteadyClock::now() + timeout;
  for (;;) {
    {
      MutexLock lock(mu_);
      TF_ASSIGN_OR_RETURN(std::optional<ExitStatus> ended, ReapIfEnded());
      if (ended) return ended;
    }
    auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - SteadyClock::now());
    if (left.count() <= 0) return std::optional<ExitStatus>();
    pollfd p{.fd = pidfd_, .events = POLLIN, .revents = 0};
    int wait_ms = static_cast<int>(std::min<int64_t>(left.count(), 1 << 30));
    if (::poll(&p, 1, wait_ms) < 0 && errno != EINTR) {
      return ErrnoStatus(StatusCode::kInternal, "poll on process " + std::to_string(pid_));
    }
  }
}

Result<ExitStatus> ProcessGroup::Wait() {
  for (;;) {
    TF_ASSIGN_OR_RETURN(std::optional<ExitStatus> ended, WaitFor(std::chrono::hours(24)));
    if (ended) return *ended;
  }
}

Result<ExitStatus> ProcessGroup::Terminate(std::chrono::milliseconds grace) {
  TF_ASSIGN_OR_RETURN(std::optional<ExitStatus> ended, TryWait());
  if (ended) return *ended;
  TF_RETURN_IF_ERROR(Signal(SIGTERM));
  TF_ASSIGN_OR_RETURN(ended, WaitFor(grace));
  if (ended) return *ended;
  TF_RETURN_IF_ERROR(Signal(SIGKILL));
  return Wait();
}

}  // namespace tf::worker
